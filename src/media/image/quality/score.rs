//! SSIMULACRA2, through the `ssimulacra2` crate (rust-av's port of libjxl's tool,
//! BSD-2-Clause): how far a decoded trial is from the reference, 100 for the same
//! picture, 70 "high quality", 50 "medium", 30 "low".
//!
//! The metric reads linear RGB; the 8-bit sRGB pixels are linearised here through one
//! table rather than by the crate's per-pixel conversion, and the reference is
//! converted once for all the trials. Transparency is composited onto white on both
//! sides (the metric has no alpha; what a page shows over a light background).

use image::DynamicImage;
use ssimulacra2::{compute_frame_ssimulacra2, LinearRgb};

use crate::media::error::MediaError;

/// The picture every trial is scored against, in linear RGB.
pub(crate) struct Reference(LinearRgb);

impl Reference {
    /// `image` (the picture written at full quality, decoded) as the reference.
    pub fn of(image: &DynamicImage) -> Reference {
        Reference(linear(image))
    }

    /// The score of `distorted` (decoded, the reference's size) against it.
    pub fn score(&self, distorted: &DynamicImage) -> Result<f64, MediaError> {
        compute_frame_ssimulacra2(self.0.clone(), linear(distorted))
            .map_err(|e| MediaError::InvalidMedia(format!("a trial could not be scored: {e}")))
    }
}

/// The SSIMULACRA2 score of `distorted` against `reference` (two pictures of one size,
/// at least 8 pixels on a side).
pub fn score(reference: &DynamicImage, distorted: &DynamicImage) -> Result<f64, MediaError> {
    Reference::of(reference).score(distorted)
}

/// `image` in linear RGB, transparency composited onto white.
fn linear(image: &DynamicImage) -> LinearRgb {
    let table = srgb_to_linear();
    let (width, height) = (image.width() as usize, image.height() as usize);
    let data: Vec<[f32; 3]> = match image {
        DynamicImage::ImageRgb8(rgb) => rgb
            .as_raw()
            .chunks_exact(3)
            .map(|p| {
                [
                    table[p[0] as usize],
                    table[p[1] as usize],
                    table[p[2] as usize],
                ]
            })
            .collect(),
        other => {
            let rgba = match other {
                DynamicImage::ImageRgba8(rgba) => std::borrow::Cow::Borrowed(rgba),
                other => std::borrow::Cow::Owned(other.to_rgba8()),
            };
            rgba.as_raw()
                .chunks_exact(4)
                .map(|p| {
                    let alpha = f32::from(p[3]) / 255.0;
                    let on_white = |c: u8| table[c as usize] * alpha + (1.0 - alpha);
                    [on_white(p[0]), on_white(p[1]), on_white(p[2])]
                })
                .collect()
        }
    };
    LinearRgb::new(data, width, height).expect("one value per pixel")
}

/// The sRGB transfer function, inverted, for each 8-bit value.
fn srgb_to_linear() -> [f32; 256] {
    std::array::from_fn(|i| {
        let c = i as f32 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn gradient(noise: u8) -> DynamicImage {
        DynamicImage::ImageRgb8(RgbImage::from_fn(64, 48, |x, y| {
            let n = if (x * 7 + y * 13) % 5 == 0 { noise } else { 0 };
            Rgb([
                ((x * 4) as u8).saturating_add(n),
                (y * 5) as u8,
                128u8.saturating_sub(n),
            ])
        }))
    }

    #[test]
    fn the_same_picture_scores_100_and_a_noisier_one_less() {
        let clean = gradient(0);
        assert!((score(&clean, &clean).unwrap() - 100.0).abs() < 1e-6);
        let slight = score(&clean, &gradient(6)).unwrap();
        let heavy = score(&clean, &gradient(40)).unwrap();
        assert!(slight < 100.0 && heavy < slight, "{slight} {heavy}");
    }

    #[test]
    fn transparency_is_scored_as_on_white() {
        let white = DynamicImage::ImageRgb8(RgbImage::from_pixel(16, 16, Rgb([255; 3])));
        let clear = DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(
            16,
            16,
            image::Rgba([0, 0, 0, 0]),
        ));
        assert!((score(&white, &clear).unwrap() - 100.0).abs() < 1e-6);
    }
}
