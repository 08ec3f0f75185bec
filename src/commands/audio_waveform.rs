//! `audio-waveform`: a picture of a track's loudness over time, for an audio player's
//! scrub bar: `width` × `height` PNG, transparent, with one bar every 4 px (3 px wide)
//! in `color`, each as tall as the loudest moment of its slice of the track (the
//! peaks of the mono mix), centred on the middle line; silence is a 1 px line. The
//! bars are scaled to the loudest stretch of the whole track (~50 ms of sound, not one
//! sample: `audio::loudest_stretch`), so a click or a pop cannot shrink the rest; a
//! bar louder than that is drawn at full height. The first audio track of a video, or an audio
//! file; a file without audio fails `no_audio_track`.

use std::path::Path;

use image::{Rgba, RgbaImage};

use super::options::{OptionKind, OptionSpec, Options};
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::image::ops::{encode, write_output};
use crate::media::image::Colour;
use crate::media::video::audio::{inspect_audio, loudness, Loudness};
use crate::media::VIDEOS_AND_AUDIO;
use crate::media::{blocking, ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS_AND_AUDIO;
const OUTPUT: MediaFormat = MediaFormat::Png;

pub const WIDTH: OptionSpec = OptionSpec::integer(
    "width",
    "audio-waveform: the picture's width in pixels (default 1800).",
    16.0,
    8192.0,
    Some(1800.0),
);

pub const HEIGHT: OptionSpec = OptionSpec::integer(
    "height",
    "audio-waveform: the picture's height in pixels (default 280).",
    8.0,
    2048.0,
    Some(280.0),
);

pub const COLOR: OptionSpec = OptionSpec {
    name: "color",
    doc: "The colour drawn: #RRGGBB or #RRGGBBAA (audio-waveform: default #2563EB).",
    kind: OptionKind::Colour {
        default: Some("#2563EB"),
    },
};

/// A bar and the gap after it, in pixels.
const BAR: u32 = 3;
const PERIOD: u32 = 4;

pub struct AudioWaveform;

impl CommandDef for AudioWaveform {
    const SPEC: CommandSpec = CommandSpec {
        name: "audio-waveform",
        summary: "A PNG of a track's loudness over time: `width` × `height`, bars in `color` on transparency, taller where louder.",
        inputs: INPUTS,
        options: &[&WIDTH, &HEIGHT, &COLOR],
        output: Some(OUTPUT),
        in_process: false,
    };

    fn predict(_input: Shape, options: &Options) -> Prediction {
        let still = Shape {
            size: Some(size(options)),
            frames: Some(1),
            seconds: None,
        };
        Prediction::one(Some(OUTPUT), still)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        inspect_audio(media, input).await?;
        let (width, height) = size(options);
        let bars = width.div_ceil(PERIOD) as usize;
        let loudness = loudness(media, input, bars).await?;
        let colour = options
            .colour(&COLOR)
            .unwrap_or(Colour([0x25, 0x63, 0xEB, 255]));
        let out_dir = out_dir.to_owned();
        let png = blocking(move || {
            let picture = draw(&loudness, (width, height), colour);
            let bytes = encode(picture.into(), ImageFormat::Png)?;
            write_output(&out_dir, ImageFormat::Png, &bytes)
        });
        Ok(vec![png.await?])
    }
}

fn size(options: &Options) -> (u32, u32) {
    (
        options.number(&WIDTH) as u32,
        options.number(&HEIGHT) as u32,
    )
}

/// The bars of `loudness` (peaks 0–1, one a bar) on a transparent `size` picture,
/// scaled so that the loudest stretch fills the height.
fn draw(loudness: &Loudness, (width, height): (u32, u32), colour: Colour) -> RgbaImage {
    let mut picture = RgbaImage::new(width, height);
    // Below this the track is silence (dither, rounding): no bar stands out of it.
    let scale = if loudness.loudest > 1e-4 {
        1.0 / loudness.loudest
    } else {
        0.0
    };
    for (k, peak) in loudness.bars.iter().enumerate() {
        let tall = ((peak * scale) as f64 * f64::from(height)).round() as u32;
        let tall = tall.clamp(1, height);
        let top = (height - tall) / 2;
        let left = k as u32 * PERIOD;
        for x in left..(left + BAR).min(width) {
            for y in top..top + tall {
                picture.put_pixel(x, y, Rgba(colour.0));
            }
        }
    }
    picture
}

#[cfg(test)]
mod tests {
    use super::*;

    fn height_at(picture: &RgbaImage, x: u32) -> u32 {
        (0..picture.height())
            .filter(|y| picture.get_pixel(x, *y)[3] > 0)
            .count() as u32
    }

    fn bars(bars: &[f32], loudest: f32) -> Loudness {
        Loudness {
            bars: bars.to_vec(),
            loudest,
        }
    }

    #[test]
    fn louder_bars_are_taller_and_silence_is_a_line() {
        let colour = Colour([255, 0, 0, 255]);
        let picture = draw(&bars(&[0.0, 0.25, 1.0], 1.0), (12, 40), colour);
        assert_eq!(picture.dimensions(), (12, 40));
        assert_eq!((height_at(&picture, 0), height_at(&picture, 4)), (1, 10));
        assert_eq!(height_at(&picture, 8), 40);
        assert_eq!(height_at(&picture, 3), 0, "the gap");
        assert_eq!(picture.get_pixel(9, 20).0, [255, 0, 0, 255]);
        // Quiet throughout: scaled to the loudest stretch.
        let quiet = draw(&bars(&[0.01, 0.02], 0.02), (8, 20), colour);
        assert_eq!((height_at(&quiet, 0), height_at(&quiet, 4)), (10, 20));
        // A click above the loudest stretch: full height, no taller.
        let click = draw(&bars(&[0.5, 0.5, 1.0], 0.5), (12, 20), colour);
        assert_eq!(
            (
                height_at(&click, 0),
                height_at(&click, 4),
                height_at(&click, 8)
            ),
            (20, 20, 20)
        );
        let silent = draw(&bars(&[0.0, 0.00001], 0.00001), (8, 20), colour);
        assert_eq!((height_at(&silent, 0), height_at(&silent, 4)), (1, 1));
    }

    #[test]
    fn the_picture_is_predicted_at_its_options_size() {
        let opts = Options::of(&[("width", 600.into())]);
        let predicted = AudioWaveform::predict(Shape::default(), &opts);
        assert_eq!(predicted.shape.size, Some((600, 280)));
        assert_eq!(predicted.format, Some(MediaFormat::Png));
    }
}
