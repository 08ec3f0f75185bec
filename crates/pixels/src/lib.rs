//! Entry points into the resampler and the `image` crate's decoders for the picture
//! types mediaedit works with, each a plain function, never inlined; and the few
//! pixel loops of mediaedit's own that make hundreds of passes over a picture (the
//! text outline's dilation).
//!
//! `fast_image_resize`'s `Resizer::resize` is generic over the picture types and the
//! `image` crate's decoders over their reader, so their inner loops are instantiated —
//! and compiled — in the crate that names the types. Named in mediaedit itself, whose
//! dev and test builds are unoptimised to keep rebuilds quick, they ran unoptimised
//! too (SIMD intrinsics as function calls): several times slower, a quarter of the
//! real-file test's time. Instantiated here, in a crate the root manifest builds at
//! `opt-level = 2` in every profile, they run as fast in a test build as in a release
//! one, and mediaedit's own build stays quick. The same holds for a loop of our own
//! that is hot enough to dominate a test (a 2048 px outline: 85 s unoptimised).

use std::io::Cursor;

use fast_image_resize::{ResizeError, ResizeOptions, Resizer};
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, ImageResult, Limits, RgbaImage};

/// Resamples `src` into `dst` (like pixel types: the resizer maps like to like).
#[inline(never)]
pub fn resize(
    src: &DynamicImage,
    dst: &mut DynamicImage,
    options: &ResizeOptions,
) -> Result<(), ResizeError> {
    Resizer::new().resize(src, dst, options)
}

/// As [`resize`], for RGBA pictures.
#[inline(never)]
pub fn resize_rgba(
    src: &RgbaImage,
    dst: &mut RgbaImage,
    options: &ResizeOptions,
) -> Result<(), ResizeError> {
    Resizer::new().resize(src, dst, options)
}

/// The `image` crate's decoder for `bytes` in `format` under `limits`, its header read.
/// Boxed here, so the decoder's methods are compiled here too.
#[inline(never)]
pub fn image_decoder(
    bytes: &[u8],
    format: ImageFormat,
    limits: Limits,
) -> ImageResult<Box<dyn ImageDecoder + '_>> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    Ok(Box::new(reader.into_decoder()?))
}

mod outline;
pub use outline::dilate_disc;
