//! A JPEG decoded by libjpeg-turbo, shrunk by its DCT (a power-of-two eighth) as far
//! as the sizes asked for allow: a thumbnail of a 24 MP photo decodes a sixteenth of it.

use image::DynamicImage;
use turbojpeg::ScalingFactor;

use crate::media::error::MediaError;
use crate::media::image::codec::jpeg::{JpegDecoder, JpegHeader};
use crate::media::image::decode::sides::to_u32;

pub(super) fn decode_jpeg(
    bytes: &[u8],
    mut decoder: JpegDecoder,
    header: JpegHeader,
    min_width: u32,
    min_height: u32,
) -> Result<DynamicImage, MediaError> {
    let factor = if header.is_lossless {
        ScalingFactor::ONE
    } else {
        shrink_factor(header.width, header.height, min_width, min_height)
    };
    let (pixels, width, height) = decoder.decode_rgb(bytes, &header, factor)?;
    let buffer = image::RgbImage::from_raw(to_u32(width)?, to_u32(height)?, pixels)
        .ok_or_else(|| MediaError::InvalidMedia("the JPEG decoded to an unexpected size".into()))?;
    Ok(DynamicImage::ImageRgb8(buffer))
}

/// The smallest `n/8` (n = 1..=8) that keeps `width` x `height` at least
/// `min_width` x `min_height`; 1 when even that would be too small (an upscale).
pub(crate) fn shrink_factor(
    width: usize,
    height: usize,
    min_width: u32,
    min_height: u32,
) -> ScalingFactor {
    (1..=8)
        .map(|n| ScalingFactor::new(n, 8))
        .find(|f| f.scale(width) >= min_width as usize && f.scale(height) >= min_height as usize)
        .unwrap_or(ScalingFactor::ONE)
}
