//! The image commands' entry points on [`Media`]: the operations of `media::image`
//! applied on the blocking pool, to a still or every frame of an animation.

use std::path::Path;
use std::sync::Arc;

use crate::format::{ImageFormat, MediaFormat};
use crate::media::animation;
use crate::media::blocking;
use crate::media::cancel;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::image;
use crate::media::image::ops::{self, write_output};
use crate::media::image::pipeline::{check_format_size, default_output, load_transformed};
use crate::media::image::placeholders::kept::{keep_quality, FromPixels};
use crate::media::image::quality::{encode_best, encode_with, FormatChoice, Quality};
use crate::media::image::FrameOp;
use crate::media::limits::VideoLimits;
use crate::media::memory::MemoryBudget;

impl Media {
    /// The image commands: applies `ops` in turn to the upright picture (EXIF
    /// orientation applied) or, for an animated GIF, WebP or APNG written in a format
    /// that animates, to every frame; writes `format` (or the input's own format,
    /// JPEG or PNG for inputs it cannot write).
    ///
    /// Checked before decoding: `ImageTooLarge` for an input past the pixel limit,
    /// `OutputTooSmall` / `OutputTooLarge` (a step past the pixel limit, a side past
    /// WebP's 16383) and an operation's own refusal (`CropOutsideImage`). Then
    /// `InvalidMedia` for a corrupt input, `UnsupportedInputFormat` for anything but
    /// an image. Transparency is kept in PNG, WebP, AVIF and GIF outputs and flattened
    /// onto white in JPEG outputs.
    pub async fn transform_image(
        &self,
        input: &MediaFile,
        ops: Vec<Box<dyn image::FrameOp>>,
        format: Option<ImageFormat>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let written = (FormatChoice::Given(format), Quality::Fixed(None));
        self.transform_image_at(input, ops, written, out_dir).await
    }

    /// [`Media::transform_image`] written as `format` chooses (`format: best`: the
    /// smallest of its formats) with a still's lossy encoder at `quality` (`auto`: the
    /// lowest that scores the target, `media::image::quality`). Errors as there.
    pub async fn transform_image_at(
        &self,
        input: &MediaFile,
        ops: Vec<Box<dyn image::FrameOp>>,
        (format, quality): (FormatChoice, Quality),
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let input_format = ops::image_input(input)?;
        let (limit, limits) = (self.config().max_image_pixels, self.limits());
        let (path, out_dir) = (input.path.clone(), out_dir.to_owned());
        let memory = self.memory().clone();
        blocking(move || {
            transform_image(
                &path,
                (input_format, format, quality),
                &ops,
                (limit, limits, &memory),
                &out_dir,
            )
        })
        .await
    }

    /// The upright image scaled by `scale`: `round(w*scale)` x `round(h*scale)`. `InvalidParameter` for a scale that is not a positive
    /// number; otherwise errors as for [`Media::transform_image`].
    pub async fn scale_image(
        &self,
        input: &MediaFile,
        scale: f64,
        format: Option<ImageFormat>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        ops::image_input(input)?;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(MediaError::InvalidParameter {
                name: "scale",
                expected: "a positive number",
            });
        }
        let ops: Vec<Box<dyn image::FrameOp>> = vec![Box::new(image::Scale(scale))];
        self.transform_image(input, ops, format, out_dir).await
    }

    /// The image re-encoded as lossy WebP (quality 80), upright, alpha kept. Errors as
    /// for [`Media::transform_image`].
    pub async fn reencode_as_webp(
        &self,
        input: &MediaFile,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let ops: Vec<Box<dyn image::FrameOp>> = vec![Box::new(image::Scale(1.0))];
        let webp = Some(ImageFormat::Webp);
        self.transform_image(input, ops, webp, out_dir).await
    }
}

/// Reads `path` (an image of `input` format), applies `ops` to its upright picture or
/// to every frame of its animation, and writes it as `output` (without one: the
/// input's own format where it can be written, else PNG for a picture with
/// transparency and JPEG for one without; `best`: the smallest of its formats, an
/// animation in the first of them that animates) into `out_dir`. `quality` sets a
/// still's lossy encoder; animations keep their encoders' defaults.
fn transform_image(
    path: &Path,
    (input, output, quality): (MediaFormat, FormatChoice, Quality),
    ops: &[Box<dyn FrameOp>],
    (max_pixels, limits, memory): (u64, VideoLimits, &Arc<MemoryBudget>),
    out_dir: &Path,
) -> Result<MediaFile, MediaError> {
    let bytes = std::fs::read(path)?;
    let animates = match &output {
        FormatChoice::Given(format) => *format,
        FormatChoice::Best(formats) => [ImageFormat::Webp, ImageFormat::Avif]
            .into_iter()
            .find(|f| formats.contains(f)),
    };
    if let Some(animated) = animated_output(&bytes, input, animates) {
        let limits = (&limits, max_pixels, memory);
        match animation::transform_animation(&bytes, input, ops, animated, limits) {
            Ok(encoded) => return write_output(out_dir, animated, &encoded),
            // An APNG whose animation chunks are damaged is shown as its default image,
            // as PNG readers and Pillow show it; the still path below refuses the file
            // if that is damaged too.
            Err(MediaError::InvalidMedia(why)) if input == MediaFormat::Png => {
                tracing::debug!(%why, "an APNG's animation is damaged; its default image is kept");
            }
            Err(e) => return Err(e),
        }
    }
    // Without a format, the output is the input's, PNG or JPEG: none has WebP's limit;
    // `best` leaves out the formats the size is past.
    let sized_for = match &output {
        FormatChoice::Given(format) => format.unwrap_or(ImageFormat::Png),
        FormatChoice::Best(_) => ImageFormat::Png,
    };
    let check = |size| check_format_size(size, sized_for);
    let (image, had_alpha, _lease) =
        load_transformed(&bytes, input, max_pixels, ops, check, memory)?;
    drop(bytes);
    cancel::checkpoint()?;
    let (output, encoded, chosen) = match output {
        FormatChoice::Given(format) => {
            let output = format.unwrap_or_else(|| default_output(input, had_alpha));
            let placeholders = FromPixels::of(&image, output == ImageFormat::Jpeg);
            let (encoded, chosen) = encode_with(image, output, quality, memory)?;
            (output, (encoded, placeholders), chosen)
        }
        FormatChoice::Best(formats) => {
            let size = (image.width(), image.height());
            let fits: Vec<ImageFormat> = formats
                .into_iter()
                .filter(|f| check_format_size(size, *f).is_ok())
                .collect();
            let placeholders = FromPixels::of(&image, false);
            let (output, encoded, chosen) = encode_best(image, &fits, quality, memory)?;
            (output, (encoded, placeholders), chosen)
        }
    };
    let (encoded, placeholders) = encoded;
    cancel::checkpoint()?;
    let file = write_output(out_dir, output, &encoded)?;
    placeholders.keep(&file.path);
    if let Some(chosen) = chosen {
        keep_quality(&file.path, chosen);
    }
    Ok(file)
}

/// The format an animated `input` is written in, keeping its animation, or `None` for a
/// still picture or an output that cannot animate it (JPEG, PNG for a GIF or WebP:
/// the first frame): GIF for a GIF and APNG for an APNG without `format`, animated
/// WebP, an AVIF image sequence and an animated JPEG XL.
fn animated_output(
    bytes: &[u8],
    input: MediaFormat,
    output: Option<ImageFormat>,
) -> Option<ImageFormat> {
    let output = output.or_else(|| ImageFormat::from_media_format(input))?;
    let animates = match output {
        ImageFormat::Webp | ImageFormat::Avif | ImageFormat::Jxl => true,
        ImageFormat::Gif => input == MediaFormat::Gif,
        ImageFormat::Png => input == MediaFormat::Png,
        ImageFormat::Jpeg => false,
    };
    (animates && animation::is_animated(bytes, input)).then_some(output)
}
