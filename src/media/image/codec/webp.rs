//! WebP read by libwebp (the `webp` crate), where the pure-Rust decoder that reads
//! uploads (image-webp, through `decode`) is not the right one: for pictures we wrote
//! ourselves and decode again, libwebp (which wrote them, and which browsers and
//! Pillow decode with) takes a third of the time.

use image::{DynamicImage, RgbImage, RgbaImage};

/// A still WebP decoded by libwebp, as RGB or RGBA; `None` where libwebp refuses it.
pub(crate) fn decode_by_libwebp(bytes: &[u8]) -> Option<DynamicImage> {
    let picture = ::webp::Decoder::new(bytes).decode()?;
    let (width, height, pixels) = (picture.width(), picture.height(), picture.to_vec());
    if picture.is_alpha() {
        RgbaImage::from_raw(width, height, pixels).map(DynamicImage::ImageRgba8)
    } else {
        RgbImage::from_raw(width, height, pixels).map(DynamicImage::ImageRgb8)
    }
}
