//! `resize-image`: scales a still image by `scale`, written in `format` or in the
//! input's own format. Decoded, oriented, resized and encoded in-process (see
//! `media::image_ops`).

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
use super::{Prediction, Shape, IMAGES};
use crate::media::frames::FrameOutput;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, Work};

pub const NAME: &str = "resize-image";
/// What it does, in a sentence (the command catalog, `GET /v1/commands`).
pub const SUMMARY: &str =
    "An image scaled by `scale`, as JPEG, PNG, WebP or AVIF (`format`; the input's by default); animated GIFs and WebPs stay animated.";
pub const INPUTS: &[MediaFormat] = IMAGES;
pub const DEFAULT_SCALE: f64 = 1.0;

pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "scale",
        kind: OptionKind::Number {
            min: 0.0,
            min_inclusive: false,
            max: 16.0,
            default: DEFAULT_SCALE,
            set: |o, v| o.scale = v,
        },
    },
    OptionSpec {
        name: "format",
        kind: OptionKind::ImageFormat {
            set: |o, f| o.format = Some(f),
        },
    },
];

/// The `format` option's format, or the input's.
///
/// Without `format`, the input's format where it can be written; else JPEG, or PNG once
/// the decoded picture turns out to have transparency (`image_ops::default_output`).
pub fn output(input: MediaFormat, options: &Options) -> MediaFormat {
    let kept = ImageFormat::from_media_format(input).unwrap_or(ImageFormat::Jpeg);
    options.format.unwrap_or(kept).media_format()
}

/// One image, each side scaled and rounded.
pub fn predict(input: Shape, options: &Options) -> Prediction {
    let scaled = |side: u32| (f64::from(side) * options.scale).round() as u32;
    let size = input.size.map(|(w, h)| (scaled(w), scaled(h)));
    let format = options.format.map(ImageFormat::media_format);
    Prediction::one(format, Shape { size, ..input })
}

/// Decoding the input, or encoding an enlarged output where that is more.
pub fn cost(work: Work, options: &Options) -> u64 {
    let enlarged = (work.pixels as f64 * options.scale * options.scale) as u64;
    work.total().max(enlarged)
}

/// What each decoded frame becomes when this command follows `extract-frames` (the
/// two run as one step, see `Command::fuses_with`): the frame scaled and encoded in
/// the `format` option, or WebP, the format `extract-frames` would have handed on.
pub(crate) fn frame_output(options: &Options, max_pixels: u64) -> FrameOutput {
    FrameOutput::Resized {
        scale: options.scale,
        format: options.format.unwrap_or(ImageFormat::Webp),
        max_pixels,
    }
}

pub async fn run(
    media: &Media,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
) -> Result<MediaFile, MediaError> {
    media
        .resize_image(input, options.scale, options.format, out_dir)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_keeps_the_input_format_unless_one_is_asked_for() {
        let mut options = Options::default();
        assert_eq!(output(MediaFormat::Png, &options), MediaFormat::Png);
        options.format = Some(ImageFormat::Webp);
        assert_eq!(output(MediaFormat::Png, &options), MediaFormat::Webp);
    }

    #[test]
    fn an_enlarging_resize_costs_its_output_and_predicts_its_size() {
        let options = Options {
            scale: 2.0,
            ..Options::default()
        };
        let work = Work {
            pixels: 1000,
            frames: 1,
        };
        assert_eq!(cost(work, &options), 4000);
        let shape = Shape {
            size: Some((30, 21)),
            frames: Some(1),
            seconds: None,
        };
        assert_eq!(predict(shape, &options).shape.size, Some((60, 42)));
    }
}
