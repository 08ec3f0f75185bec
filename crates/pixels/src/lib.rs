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

/// One plane of samples that [`interleave_u8`] turns into 8-bit samples, with how
/// far apart its rows are (a decoder's planes may be padded, each its own way).
#[derive(Clone, Copy)]
pub struct Strided<'a>(pub Plane<'a>, pub usize);

/// The samples of a plane.
#[derive(Clone, Copy)]
pub enum Plane<'a> {
    /// Floating-point samples, nominally 0.0–1.0: scaled to 0–255, rounded, clamped.
    Unit(&'a [f32]),
    /// Integer samples already 0–255 (an 8-bit lossless picture): clamped.
    Int32(&'a [i32]),
    /// As [`Plane::Int32`], held in 16 bits.
    Int16(&'a [i16]),
}

impl Plane<'_> {
    fn len(&self) -> usize {
        match self {
            Plane::Unit(s) => s.len(),
            Plane::Int32(s) => s.len(),
            Plane::Int16(s) => s.len(),
        }
    }

    /// Writes samples `start..` to byte `channel` of each `step` bytes of `out`.
    #[inline(always)]
    fn write_strided(&self, start: usize, out: &mut [u8], (channel, step): (usize, usize)) {
        let n = out.len() / step;
        let outs = out.chunks_exact_mut(step).map(|px| &mut px[channel]);
        match self {
            Plane::Unit(s) => {
                for (o, &v) in outs.zip(&s[start..start + n]) {
                    *o = (v * 255.0 + 0.5).clamp(0.0, 255.0) as u8;
                }
            }
            Plane::Int32(s) => {
                for (o, &v) in outs.zip(&s[start..start + n]) {
                    *o = v.clamp(0, 255) as u8;
                }
            }
            Plane::Int16(s) => {
                for (o, &v) in outs.zip(&s[start..start + n]) {
                    *o = v.clamp(0, 255) as u8;
                }
            }
        }
    }
}

/// Interleaves the first `width` samples of each row of `planes` (as many rows as
/// `out` holds) into `out` as 8-bit samples,
/// `planes.len()` to a pixel, bands of rows on rayon's pool. A decoder's planar float
/// picture comes out as the `image` crate's RGB(A) this way; jxl-oxide's own
/// `ImageStream` does it a sample at a time on one thread (a third of a second for
/// 12 MP). The conversion is `(v * 255 + 0.5)` clamped, as jxl-oxide's.
///
/// Panics when a plane holds fewer samples than `out` needs.
#[inline(never)]
pub fn interleave_u8(planes: &[Strided<'_>], width: usize, out: &mut [u8]) {
    use rayon::prelude::*;
    let channels = planes.len();
    if channels == 0 || width == 0 {
        return;
    }
    let row = width * channels;
    let rows = out.len() / row;
    let short = |&Strided(plane, stride): &Strided<'_>| {
        stride < width || plane.len() < rows.saturating_sub(1) * stride + width
    };
    assert!(!planes.iter().any(short), "a plane is short");
    const BAND_ROWS: usize = 16;
    out.par_chunks_mut(row * BAND_ROWS)
        .enumerate()
        .for_each(|(band, bytes)| {
            for (r, row_bytes) in bytes.chunks_exact_mut(row).enumerate() {
                let y = band * BAND_ROWS + r;
                for (c, Strided(plane, stride)) in planes.iter().enumerate() {
                    plane.write_strided(y * stride, row_bytes, (c, channels));
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::{interleave_u8, Plane, Strided};

    #[test]
    fn planes_are_interleaved_rounded_and_clamped_in_every_band() {
        let (width, height) = (3, 40);
        let red: Vec<f32> = (0..width * height).map(|i| i as f32 / 255.0).collect();
        let green: Vec<i32> = (0..width * height).map(|i| i as i32 - 20).collect();
        let blue: Vec<i16> = vec![300; width * height];
        let planes = [Plane::Unit(&red), Plane::Int32(&green), Plane::Int16(&blue)];
        let planes = planes.map(|plane| Strided(plane, width));
        let mut out = vec![7u8; width * height * 3];
        interleave_u8(&planes, width, &mut out);
        for (i, px) in out.chunks_exact(3).enumerate() {
            assert_eq!(
                px,
                [i.min(255) as u8, i.saturating_sub(20) as u8, 255],
                "pixel {i}"
            );
        }
        let halves = [Strided(
            Plane::Unit(&[-0.5, 0.4 / 255.0, 0.6 / 255.0, 2.0]),
            2,
        )];
        let mut out = [9u8; 4];
        interleave_u8(&halves, 2, &mut out);
        assert_eq!(out, [0, 0, 1, 255]);
        // Rows 3 samples apart beside rows 2 apart, 2 of each taken.
        let padded = [
            Strided(Plane::Unit(&[0.0, 1.0, 0.5, 1.0, 0.0, 0.5]), 3),
            Strided(Plane::Int32(&[1, 2, 3, 4]), 2),
        ];
        let mut out = [9u8; 8];
        interleave_u8(&padded, 2, &mut out);
        assert_eq!(out, [0, 1, 255, 2, 255, 3, 0, 4]);
    }
}

mod outline;
pub use outline::dilate_disc;
