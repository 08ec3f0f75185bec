//! Colour management: a source's embedded ICC profile is honoured by converting its
//! pixels to sRGB (with lcms2, Little CMS: the engine browsers, Pillow's ImageCms and
//! libvips use), since every output this service writes is untagged and so read as
//! sRGB. Without the conversion a Display P3 photo from a phone, or an Adobe RGB one
//! from a camera, comes out with its colours shifted (dull reds, greens gone yellow).
//!
//! RGB profiles are applied to RGB pixels, and grey profiles (a grey JPEG's "Dot Gain
//! 20%", say: its tones would be off by ΔE 3 or more) to the grey the decoders have
//! already spread over R, G and B, through a table of the 256 greys made once; a CMYK
//! profile describes data the decoders have already turned into RGB, and a profile
//! that does not parse, or describes sRGB itself, leaves the pixels as decoded — as
//! browsers do.

use image::DynamicImage;
use lcms2::{ColorSpaceSignature, Intent, PixelFormat, Profile, Transform};

/// A JPEG's ICC profile: the APP2 `ICC_PROFILE` chunks, in their sequence order.
pub(crate) fn jpeg_icc(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut chunks: Vec<(u8, &[u8])> = crate::media::image::exif::jpeg_segments(bytes)
        .filter(|(marker, _)| *marker == 0xE2)
        .filter_map(|(_, segment)| segment.strip_prefix(b"ICC_PROFILE\0"))
        .filter_map(|chunk| Some((*chunk.first()?, chunk.get(2..)?)))
        .collect();
    if chunks.is_empty() {
        return None;
    }
    chunks.sort_by_key(|(sequence, _)| *sequence);
    Some(
        chunks
            .into_iter()
            .flat_map(|(_, data)| data.to_vec())
            .collect(),
    )
}

/// Converts `image` (`Rgb8` or `Rgba8`; alpha untouched) from the colours `icc`
/// describes to sRGB.
pub(crate) fn to_srgb(image: &mut DynamicImage, icc: &[u8]) {
    let (pixels, format) = match image {
        DynamicImage::ImageRgb8(buffer) => (&mut **buffer, PixelFormat::RGB_8),
        // In place, lcms2 writes the colour channels and leaves the alpha as it was.
        DynamicImage::ImageRgba8(buffer) => (&mut **buffer, PixelFormat::RGBA_8),
        _ => return,
    };
    if let Some(greys) = grey_to_srgb(icc) {
        let samples = if format == PixelFormat::RGBA_8 { 4 } else { 3 };
        for pixel in pixels.chunks_exact_mut(samples) {
            for c in 0..3 {
                pixel[c] = greys[usize::from(pixel[c])][c];
            }
        }
    } else if let Some(transform) = transform_to_srgb(icc, format) {
        transform.transform_in_place(pixels);
    }
}

/// What each of the 256 greys of a grey profile `icc` is in sRGB; `None` for any
/// other profile, or one that does not parse.
fn grey_to_srgb(icc: &[u8]) -> Option<Vec<[u8; 3]>> {
    let profile = Profile::new_icc(icc).ok()?;
    if profile.color_space() != ColorSpaceSignature::GrayData {
        return None;
    }
    let srgb = Profile::new_srgb();
    let transform: Transform<u8, [u8; 3]> = Transform::new(
        &profile,
        PixelFormat::GRAY_8,
        &srgb,
        PixelFormat::RGB_8,
        Intent::Perceptual,
    )
    .map_err(|error| tracing::debug!(%error, "no transform from an embedded grey profile"))
    .ok()?;
    let greys: Vec<u8> = (0..=255).collect();
    let mut table = vec![[0u8; 3]; 256];
    transform.transform_pixels(&greys, &mut table);
    Some(table)
}

/// The conversion of RGBA frames from the colours `icc` describes to sRGB, made once
/// for a whole animation; `None` where nothing is to be converted (see the module).
pub(crate) fn rgba_to_srgb(icc: &[u8]) -> Option<Transform<u8, u8>> {
    transform_to_srgb(icc, PixelFormat::RGBA_8)
}

fn transform_to_srgb(icc: &[u8], format: PixelFormat) -> Option<Transform<u8, u8>> {
    let Ok(profile) = Profile::new_icc(icc) else {
        tracing::debug!("an embedded ICC profile does not parse; the pixels are kept");
        return None;
    };
    if profile.color_space() != ColorSpaceSignature::RgbData || is_srgb(&profile) {
        return None;
    }
    let srgb = Profile::new_srgb();
    Transform::new(&profile, format, &srgb, format, Intent::Perceptual)
        .map_err(|error| tracing::debug!(%error, "no transform from an embedded ICC profile"))
        .ok()
}

/// Whether `profile` says it is sRGB (most camera and editor JPEGs embed one): the
/// conversion would change nothing and cost a pass over every pixel.
fn is_srgb(profile: &Profile) -> bool {
    let description = profile
        .info(lcms2::InfoType::Description, lcms2::Locale::none())
        .unwrap_or_default();
    description.starts_with("sRGB")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grey profile whose tone curve is linear (gamma 1).
    fn linear_grey_profile() -> Vec<u8> {
        let d50 = lcms2::CIExyY {
            x: 0.3457,
            y: 0.3585,
            Y: 1.0,
        };
        let curve = lcms2::ToneCurve::new(1.0);
        Profile::new_gray(&d50, &curve).unwrap().icc().unwrap()
    }

    #[test]
    fn a_grey_profile_turns_its_greys_into_the_srgb_greys_they_are() {
        let icc = linear_grey_profile();
        let mut image = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
            2,
            2,
            image::Rgb([128, 128, 128]),
        ));
        to_srgb(&mut image, &icc);
        // Linear 0.5 is sRGB 188: a grey left as decoded would stay 128.
        let [r, g, b] = image.to_rgb8().get_pixel(0, 0).0;
        assert!((186..=190).contains(&r), "{r}");
        assert_eq!((r, g), (g, b));
        let mut rgba = DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(
            1,
            1,
            image::Rgba([0, 0, 0, 77]),
        ));
        to_srgb(&mut rgba, &icc);
        assert_eq!(rgba.to_rgba8().get_pixel(0, 0).0, [0, 0, 0, 77]);
    }
}
