//! One pipeline for stills and animations: the operations of an image command applied
//! to the upright picture, or to every frame of an animation, then encoded.
//!
//! Every size is known from the headers before a pixel is decoded
//! ([`super::output_size`] and the output format's own limit), so a refused edit
//! costs no decoding. A still is decoded no larger than its first operation needs
//! ([`FrameOp::decode_at_least`]: a JPEG shrinks in the DCT domain).

use std::path::Path;

use image::DynamicImage;

use super::{output_size, FrameOp};
use crate::media::decode::{self, swaps_sides};
use crate::media::image_ops::{encode_at, resize, write_output, WEBP_MAX_SIDE};
use crate::media::transcode::VideoLimits;
use crate::media::{animation, cancel, ImageFormat, MediaError, MediaFile, MediaFormat};

/// Reads `path` (an image of `input` format), applies `ops` to its upright picture or
/// to every frame of its animation, and writes it as `output` (without one: the
/// input's own format where it can be written, else PNG for a picture with
/// transparency and JPEG for one without) into `out_dir`. `quality` (1–100) sets a
/// still's lossy encoder; animations keep their encoders' defaults.
pub(crate) fn transform_image(
    path: &Path,
    (input, output, quality): (MediaFormat, Option<ImageFormat>, Option<u8>),
    ops: &[Box<dyn FrameOp>],
    (max_pixels, limits): (u64, VideoLimits),
    out_dir: &Path,
) -> Result<MediaFile, MediaError> {
    let bytes = std::fs::read(path)?;
    if let Some(animated) = animated_output(&bytes, input, output) {
        match animation::transform_animation(&bytes, input, ops, animated, &limits, max_pixels) {
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
    // Without a format, the output is the input's, PNG or JPEG: none has WebP's limit.
    let sized_for = output.unwrap_or(ImageFormat::Png);
    let (image, had_alpha) = load_transformed(&bytes, input, max_pixels, ops, |size| {
        check_format_size(size, sized_for)
    })?;
    drop(bytes);
    let output = output.unwrap_or_else(|| default_output(input, had_alpha));
    cancel::checkpoint()?;
    let encoded = encode_at(image, output, quality)?;
    cancel::checkpoint()?;
    write_output(out_dir, output, &encoded)
}

/// The format an animated `input` is written in, keeping its animation, or `None` for a
/// still picture or an output that cannot animate it (JPEG, PNG for a GIF or WebP:
/// the first frame): GIF for a GIF and APNG for an APNG without `format`, animated
/// WebP, and an AVIF image sequence.
fn animated_output(
    bytes: &[u8],
    input: MediaFormat,
    output: Option<ImageFormat>,
) -> Option<ImageFormat> {
    let output = output.or_else(|| ImageFormat::from_media_format(input))?;
    let animates = match output {
        ImageFormat::Webp | ImageFormat::Avif => true,
        ImageFormat::Gif => input == MediaFormat::Gif,
        ImageFormat::Png => input == MediaFormat::Png,
        ImageFormat::Jpeg => false,
    };
    (animates && animation::is_animated(bytes, input)).then_some(output)
}

/// What an image command writes without a `format`: the input's format when it can
/// write it, else PNG for a picture with transparency (`had_alpha`: the decoded
/// input's) and JPEG for one without.
pub(crate) fn default_output(input: MediaFormat, had_alpha: bool) -> ImageFormat {
    match ImageFormat::from_media_format(input) {
        Some(same) => same,
        None if had_alpha => ImageFormat::Png,
        None => ImageFormat::Jpeg,
    }
}

/// The output format's own limit on a side (libwebp's 16383), from the size alone.
pub(crate) fn check_format_size(
    (width, height): (u32, u32),
    output: ImageFormat,
) -> Result<(), MediaError> {
    if output == ImageFormat::Webp && (width > WEBP_MAX_SIDE || height > WEBP_MAX_SIDE) {
        return Err(MediaError::OutputTooLargeForFormat {
            format: "WebP",
            width: width.into(),
            height: height.into(),
            max_side: WEBP_MAX_SIDE.into(),
        });
    }
    Ok(())
}

/// Decodes `bytes` and applies `ops` to the upright picture: `Rgb8` or `Rgba8`, and
/// whether the decoded input had an alpha channel.
///
/// The header is checked against `max_pixels`, then every operation's size (and
/// `check`, the output format's limit) before decoding. The first operation decides
/// how small the picture may be decoded; one that only resamples runs on the stored
/// picture before it is turned upright (less to turn, the same result).
pub(crate) fn load_transformed(
    bytes: &[u8],
    format: MediaFormat,
    max_pixels: u64,
    ops: &[Box<dyn FrameOp>],
    check: impl FnOnce((u32, u32)) -> Result<(), MediaError>,
) -> Result<(DynamicImage, bool), MediaError> {
    let opened = decode::open(bytes, format, max_pixels)?;
    let header = opened.header();
    let upright = header.upright_size();
    check(output_size(ops, upright, max_pixels)?)?;
    let stored = |(w, h): (u32, u32)| {
        if swaps_sides(header.orientation) {
            (h, w)
        } else {
            (w, h)
        }
    };
    let (first, rest) = match ops.split_first() {
        Some((first, rest)) => (Some(first), rest),
        None => (None, ops),
    };
    let (min_w, min_h) = stored(first.map_or(upright, |op| op.decode_at_least(upright)));
    cancel::checkpoint()?;
    let mut decoded = opened.decode(min_w, min_h)?;
    cancel::checkpoint()?;
    let had_alpha = decoded.color().has_alpha();
    let mut image = match first {
        Some(op) if op.only_resamples(upright) => {
            let (w, h) = stored(op.output_size(upright)?);
            let mut image = resize(decoded, w, h)?;
            image.apply_orientation(header.orientation);
            image
        }
        Some(op) => {
            decoded.apply_orientation(header.orientation);
            op.apply_scaled(decoded, upright)?
        }
        None => {
            decoded.apply_orientation(header.orientation);
            decoded
        }
    };
    for op in rest {
        cancel::checkpoint()?;
        image = op.apply(image)?;
    }
    Ok((image, had_alpha))
}

/// For an animation: `ops` with their pixel-made choices settled on `first` (see
/// [`FrameOp::settled`]), and `first` through them.
pub(crate) fn settle(
    ops: &[Box<dyn FrameOp>],
    first: DynamicImage,
) -> Result<(Settled<'_>, DynamicImage), MediaError> {
    let mut settled = Settled {
        ops,
        replaced: Vec::with_capacity(ops.len()),
    };
    let mut image = first;
    for op in ops {
        let replacement = op.settled(&image);
        let op = replacement.as_deref().unwrap_or(&**op);
        image = op.apply(image)?;
        settled.replaced.push(replacement);
    }
    Ok((settled, image))
}

/// Operations with their choices made once (see [`settle`]).
pub(crate) struct Settled<'a> {
    ops: &'a [Box<dyn FrameOp>],
    replaced: Vec<Option<Box<dyn FrameOp>>>,
}

impl Settled<'_> {
    /// Every operation applied in turn to `image`.
    pub fn apply(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        self.ops
            .iter()
            .zip(&self.replaced)
            .try_fold(image, |image, (op, replaced)| {
                replaced.as_deref().unwrap_or(&**op).apply(image)
            })
    }

    /// The operations as they are, for an animation without frames.
    pub fn unsettled(ops: &[Box<dyn FrameOp>]) -> Settled<'_> {
        Settled {
            ops,
            replaced: ops.iter().map(|_| None).collect(),
        }
    }
}
