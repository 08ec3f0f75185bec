//! One pipeline for stills and animations: the operations of an image command applied
//! to the upright picture, or to every frame of an animation (which
//! `media::image_transform` chooses between, and `media::animation` drives).
//!
//! Every size is known from the headers before a pixel is decoded
//! ([`crate::media::image::output_size`] and the output format's own limit), so a refused edit
//! costs no decoding. A still is decoded no larger than its first operation needs
//! ([`FrameOp::decode_at_least`]: a JPEG shrinks in the DCT domain).

use std::sync::Arc;

use image::DynamicImage;

use crate::format::{ImageFormat, MediaFormat};
use crate::media::cancel;
use crate::media::error::MediaError;
use crate::media::image::decode::{self, swaps_sides};
use crate::media::image::frame_op::{output_size, FrameOp};
use crate::media::image::ops::{resize, WEBP_MAX_SIDE};
use crate::media::image::peak;
use crate::media::memory::{MemoryBudget, MemoryLease};

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

/// Decodes `bytes` and applies `ops` to the upright picture: `Rgb8` or `Rgba8`, whether
/// the decoded input had an alpha channel, and the step's memory lease (held until the
/// picture is encoded).
///
/// The header is checked against `max_pixels`, then every operation's size (and
/// `check`, the output format's limit), then the step's peak memory is charged to
/// `memory` (`too_much_work` past one step's limit; a wait for room in the node's
/// budget), all before decoding. The first operation decides
/// how small the picture may be decoded; one that only resamples runs on the stored
/// picture before it is turned upright (less to turn, the same result).
pub(crate) fn load_transformed(
    bytes: &[u8],
    format: MediaFormat,
    max_pixels: u64,
    ops: &[Box<dyn FrameOp>],
    check: impl FnOnce((u32, u32)) -> Result<(), MediaError>,
    memory: &Arc<MemoryBudget>,
) -> Result<(DynamicImage, bool, MemoryLease), MediaError> {
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
    let decoded_at = opened.decoded_size(min_w, min_h);
    let per_pixel = Some(opened.decoding_bytes_per_pixel());
    let turned = header.orientation != image::metadata::Orientation::NoTransforms;
    let peak = peak::still(
        (bytes.len() as u64, format, per_pixel),
        decoded_at,
        (upright, turned),
        ops,
    );
    let what = format!(
        "Transforming a {}x{} {} picture",
        upright.0,
        upright.1,
        format.name()
    );
    let lease = memory.reserve(peak, &what)?;
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
    Ok((image, had_alpha, lease))
}

/// Decodes `bytes` to an upright `Rgb8` / `Rgba8` picture of exactly the size `target`
/// picks from the upright input size.
///
/// The header is checked against `max_pixels` and `target` runs before decoding, so
/// a refused size costs no decoding work. Resizing happens before rotating: the
/// stored picture is resized to the target with sides swapped, which is the same
/// result for less work.
pub(crate) fn load_upright(
    bytes: &[u8],
    format: MediaFormat,
    max_pixels: u64,
    target: impl FnOnce(u32, u32) -> Result<(u32, u32), MediaError>,
    memory: &Arc<MemoryBudget>,
) -> Result<(DynamicImage, MemoryLease), MediaError> {
    let opened = decode::open(bytes, format, max_pixels)?;
    let header = opened.header();
    let upright = header.upright_size();
    let (target_w, target_h) = target(upright.0, upright.1)?;
    let (stored_w, stored_h) = if swaps_sides(header.orientation) {
        (target_h, target_w)
    } else {
        (target_w, target_h)
    };
    let decoded_at = opened.decoded_size(stored_w, stored_h);
    // The picture at its target size, and two copies the caller converts it through.
    let after = 2 * 4 * u64::from(target_w) * u64::from(target_h);
    let per_pixel = Some(opened.decoding_bytes_per_pixel());
    let turned = header.orientation != image::metadata::Orientation::NoTransforms;
    let source = (bytes.len() as u64, format, per_pixel);
    let peak = peak::still(source, decoded_at, (upright, turned), &[]) + after;
    let what = format!("Reading a {}x{} picture", upright.0, upright.1);
    let lease = memory.reserve(peak, &what)?;
    cancel::checkpoint()?;
    let decoded = opened.decode(stored_w, stored_h)?;
    cancel::checkpoint()?;
    let mut image = resize(decoded, stored_w, stored_h)?;
    image.apply_orientation(header.orientation);
    Ok((image, lease))
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

/// [`settle`] on `frames` sampled across an animation (the first one first; see
/// [`FrameOp::settled_on`]).
pub(crate) fn settle_on(
    ops: &[Box<dyn FrameOp>],
    mut frames: Vec<DynamicImage>,
) -> Result<Settled<'_>, MediaError> {
    let mut settled = Settled {
        ops,
        replaced: Vec::with_capacity(ops.len()),
    };
    for op in ops {
        let replacement = op.settled_on(&frames);
        let op = replacement.as_deref().unwrap_or(&**op);
        frames = frames
            .into_iter()
            .map(|frame| op.apply(frame))
            .collect::<Result<_, _>>()?;
        settled.replaced.push(replacement);
    }
    Ok(settled)
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
