//! The `image` crate's side of decoding: its limits, which formats it reads, its
//! layouts narrowed to ours and its errors put in words.

use image::{DynamicImage, ImageError, Limits};

use crate::format::MediaFormat;
use crate::media::error::MediaError;

/// Slack on top of the pixel buffer for a decoder's own scratch memory.
const DECODER_SCRATCH_BYTES: u64 = 64 << 20;

/// Decoder limits matching the pixel limit: room for 16-bit RGBA at the largest size
/// allowed, so a header that lies about its size still cannot make a decoder allocate
/// without bound.
pub(super) fn limits(max_pixels: u64) -> Limits {
    let mut limits = Limits::no_limits();
    limits.max_alloc = Some(
        max_pixels
            .saturating_mul(8)
            .saturating_add(DECODER_SCRATCH_BYTES),
    );
    limits
}

pub(super) fn image_crate_format(format: MediaFormat) -> Option<image::ImageFormat> {
    Some(match format {
        MediaFormat::Jpeg => image::ImageFormat::Jpeg,
        MediaFormat::Png => image::ImageFormat::Png,
        MediaFormat::Webp => image::ImageFormat::WebP,
        MediaFormat::Bmp => image::ImageFormat::Bmp,
        _ => return None,
    })
}

/// Narrows any decoded layout to the two the resizer and encoders work with.
pub(super) fn to_rgb_or_rgba(image: DynamicImage) -> DynamicImage {
    match image {
        DynamicImage::ImageRgb8(_) | DynamicImage::ImageRgba8(_) => image,
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.to_rgba8()),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    }
}

/// A decoder's refusal as a sentence for a person. The decoders' own messages carry
/// debug output and bytes of the file (a PNG chunk type, say), so they go to the log
/// and the client gets what it can act on.
pub(super) fn undecodable(format: MediaFormat, error: ImageError) -> MediaError {
    tracing::debug!(%error, "an image decoder refused a file");
    let name = format.name();
    let what = match error {
        ImageError::Unsupported(_) => "uses a feature no supported decoder reads",
        ImageError::Limits(_) => "needs more memory to decode than the limits allow",
        _ => "is damaged and no decoder can read it",
    };
    MediaError::InvalidMedia(format!("the {name} data {what}"))
}
