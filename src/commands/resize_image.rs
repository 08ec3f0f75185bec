//! `resize-image`: scales a still image by `scale`, written in `format` or in the
//! input's own format. Decoded, oriented, resized and encoded in-process (see
//! `media::image_ops`).

use std::path::Path;

use super::options::{OptionSpec, Options, FORMAT};
use super::{CommandDef, CommandSpec, Prediction, Shape, IMAGES};
use crate::media::frames::FrameOutput;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

pub const SCALE: OptionSpec = OptionSpec::number(
    "scale",
    "Each side is multiplied by this (more than 0, at most 16; default 1).",
    0.0,
    16.0,
    1.0,
);

pub struct ResizeImage;

impl CommandDef for ResizeImage {
    const SPEC: CommandSpec = CommandSpec {
        name: "resize-image",
        summary: "An image scaled by `scale`, as JPEG, PNG, WebP or AVIF (`format`; the input's by default); animated GIFs and WebPs stay animated.",
        inputs: IMAGES,
        options: &[&SCALE, &FORMAT],
        in_process: true,
    };

    /// The `format` option's format, or the input's.
    ///
    /// Without `format`, the input's format where it can be written; else JPEG, or PNG
    /// once the decoded picture turns out to have transparency
    /// (`image_ops::default_output`).
    fn output(input: MediaFormat, options: &Options) -> MediaFormat {
        let kept = ImageFormat::from_media_format(input).unwrap_or(ImageFormat::Jpeg);
        options.image_format(&FORMAT).unwrap_or(kept).media_format()
    }

    /// One image, each side scaled and rounded.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let scale = scale(options);
        let scaled = |side: u32| (f64::from(side) * scale).round() as u32;
        let size = input.size.map(|(w, h)| (scaled(w), scaled(h)));
        let format = options.image_format(&FORMAT).map(ImageFormat::media_format);
        Prediction::one(format, Shape { size, ..input })
    }

    /// Decoding the input, or encoding an enlarged output where that is more.
    fn cost(work: Work, options: &Options) -> u64 {
        let scale = scale(options);
        let enlarged = (work.pixels as f64 * scale * scale) as u64;
        work.total().max(enlarged)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let format = options.image_format(&FORMAT);
        let resized = media
            .resize_image(input, scale(options), format, out_dir)
            .await?;
        Ok(vec![resized])
    }
}

fn scale(options: &Options) -> f64 {
    options.number(&SCALE)
}

/// What each decoded frame becomes when this command follows `extract-frames` (the
/// two run as one step, see `Fused`): the frame scaled and encoded in the `format`
/// option, or WebP, the format `extract-frames` would have handed on.
pub(crate) fn frame_output(options: &Options, max_pixels: u64) -> FrameOutput {
    FrameOutput::Resized {
        scale: scale(options),
        format: options.image_format(&FORMAT).unwrap_or(ImageFormat::Webp),
        max_pixels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_keeps_the_input_format_unless_one_is_asked_for() {
        let mut options = Options::default();
        assert_eq!(ResizeImage::output(MediaFormat::Png, &options), MediaFormat::Png);
        options.set("format", "webp".into());
        assert_eq!(ResizeImage::output(MediaFormat::Png, &options), MediaFormat::Webp);
    }

    #[test]
    fn an_enlarging_resize_costs_its_output_and_predicts_its_size() {
        let mut options = Options::default();
        options.set("scale", 2.0.into());
        let work = Work {
            pixels: 1000,
            frames: 1,
        };
        assert_eq!(ResizeImage::cost(work, &options), 4000);
        let shape = Shape {
            size: Some((30, 21)),
            frames: Some(1),
            seconds: None,
        };
        assert_eq!(ResizeImage::predict(shape, &options).shape.size, Some((60, 42)));
    }
}
