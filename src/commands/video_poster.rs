//! `video-poster`: one picture of a video, for the page that shows it before it plays:
//! the frame shown at `time`, or without `time` the best frame of the first 10 s (not
//! dark, not flat, not in a fade, the sharpest: `media::frame_score`). Upright, square
//! pixels, at the video's displayed size, as WebP (default), JPEG, PNG or AVIF.
//!
//! ffmpeg writes the frame losslessly (`media::video::stills`: the PNG asked for, or a
//! BMP on the way to another format); the image encoders of `resize-image` make the
//! output of it, so a poster is encoded as every image output is (and gets
//! the placeholders of one).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::options::{OptionKind, OptionSpec, Options};
use crate::commands::formats::VIDEOS;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::image::quality::{FormatChoice, Quality};
use crate::media::image::{FrameOp, Scale};
use crate::media::video::frame_score::best_time;
use crate::media::video::info::VideoInfo;
use crate::media::video::stills::{self, Frames};
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;

pub const TIME: OptionSpec = OptionSpec {
    name: "time",
    doc: "video-poster: the second whose frame is the poster (the frame shown then; past the end, the last); default: the best frame of the first 10 s.",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: true,
        max: 86_400.0,
        integer: false,
        default: None,
    },
};

/// The poster's format: an image format name, WebP when not given.
pub const FORMAT: OptionSpec = OptionSpec {
    name: "format",
    doc: "The output format: jpeg (or jpg), png, webp, avif or jxl; the input's by default (video-poster, video-scenes: webp).",
    kind: OptionKind::ImageFormat,
};

pub struct VideoPoster;

impl CommandDef for VideoPoster {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-poster",
        summary: "One picture of a video: the frame at `time`, or the best of the first 10 s (not dark, not a fade, the sharpest), as WebP, JPEG, PNG or AVIF.",
        inputs: INPUTS,
        options: &[&TIME, &FORMAT],
        output: None,
        in_process: false,
    };

    fn output(_input: MediaFormat, options: &Options) -> MediaFormat {
        format(options).media_format()
    }

    /// One still image of the video's displayed size.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let still = Shape {
            size: input.size,
            frames: Some(1),
            seconds: None,
        };
        Prediction::one(Some(format(options).media_format()), still)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
        let time = match options.optional_number(&TIME) {
            Some(time) => time,
            None => best_time(media, input, &info).await?,
        };
        still_at(
            media,
            input,
            &info,
            time,
            format(options),
            out_dir,
            progress,
        )
        .await
        .map(|made| vec![made])
    }
}

/// The frame of `input` shown at `time`, upright with square pixels at the video's
/// displayed size, as a still in `wanted`.
pub(crate) async fn still_at(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    time: f64,
    wanted: ImageFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let frames = Frames::ShownAt(&[time]);
    let written = (wanted, Quality::Fixed(None));
    let mut made = stills_at(media, input, info, frames, written, out_dir, progress).await?;
    Ok(made.remove(0))
}

/// [`still_at`] for each of `frames`, in their order (`video-scenes`' posters): the
/// frames decoded by as few ffmpeg runs as `media::video::stills` can (a PNG is the
/// output itself; for another format, a BMP on the way), each encoded here as soon as
/// its run ends; none left behind on failure. `progress` counts the stills encoded.
pub(crate) async fn stills_at(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    frames: Frames<'_>,
    (wanted, quality): (ImageFormat, Quality),
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let done = AtomicUsize::new(0);
    let count = frames.len() as f64;
    let encode = |still: MediaFile| {
        let done = &done;
        async move {
            let made = if wanted == ImageFormat::Png {
                Ok(still)
            } else {
                let ops: Vec<Box<dyn FrameOp>> = vec![Box::new(Scale(1.0))];
                let written = (FormatChoice::Given(Some(wanted)), quality);
                let made = media
                    .transform_image_at(&still, ops, written, out_dir)
                    .await;
                let _ = tokio::fs::remove_file(&still.path).await;
                made
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(n as f64 / count);
            made
        }
    };
    let stills = (wanted.media_format(), out_dir);
    stills::stills_then(media, input, info, frames, stills, encode).await
}

fn format(options: &Options) -> ImageFormat {
    options.image_format(&FORMAT).unwrap_or(ImageFormat::Webp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_poster_is_one_webp_still_unless_format_says_otherwise() {
        let clip = Shape {
            size: Some((64, 48)),
            frames: Some(100),
            seconds: Some(4.0),
        };
        let predicted = VideoPoster::predict(clip, &Options::default());
        assert_eq!(predicted.format, Some(MediaFormat::Webp));
        assert_eq!(predicted.shape.size, Some((64, 48)));
        assert_eq!((predicted.files, predicted.shape.frames), (1, Some(1)));
        let jpeg = Options::of(&[("format", json!("jpg"))]);
        assert_eq!(
            VideoPoster::output(MediaFormat::Mp4, &jpeg),
            MediaFormat::Jpeg
        );
    }
}
