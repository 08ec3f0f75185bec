//! The pixel work the operations share: resampling a region of a picture to a size,
//! and placing a picture on a canvas of one colour.

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::{DynamicImage, GenericImage, Rgba, RgbaImage};

use crate::media::error::MediaError;
use crate::media::image::geometry::Colour;

/// A rectangle of a picture in its pixels, edges in floating point: resampling works
/// from fractions of a pixel, so a box's crop keeps the exact aspect of the box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Region {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Region {
    /// The whole of a picture of `size`.
    pub fn whole((width, height): (u32, u32)) -> Region {
        Region {
            left: 0.0,
            top: 0.0,
            width: width.into(),
            height: height.into(),
        }
    }

    /// This region of a picture of `nominal` size, in the pixels of the same picture
    /// held at `actual` size (decoded smaller).
    pub fn rescaled(self, nominal: (u32, u32), actual: (u32, u32)) -> Region {
        let fx = f64::from(actual.0) / f64::from(nominal.0);
        let fy = f64::from(actual.1) / f64::from(nominal.1);
        let width = (self.width * fx).min(f64::from(actual.0));
        let height = (self.height * fy).min(f64::from(actual.1));
        Region {
            left: (self.left * fx).clamp(0.0, f64::from(actual.0) - width),
            top: (self.top * fy).clamp(0.0, f64::from(actual.1) - height),
            width,
            height,
        }
    }
}

/// `region` of `image` resampled to exactly `width` × `height`, in `image`'s layout
/// (`Rgb8` or `Rgba8`). As `ops::resize`: Lanczos3 shrinking, Catmull-Rom
/// enlarging, alpha premultiplied while filtering; a region of whole pixels at its
/// own size is copied.
pub(crate) fn resample(
    image: &DynamicImage,
    region: Region,
    (width, height): (u32, u32),
) -> Result<DynamicImage, MediaError> {
    let whole = Region::whole((image.width(), image.height()));
    if region == whole && (image.width(), image.height()) == (width, height) {
        return Ok(image.clone());
    }
    let filter = if f64::from(width) <= region.width && f64::from(height) <= region.height {
        FilterType::Lanczos3
    } else {
        FilterType::CatmullRom
    };
    let mut resized = DynamicImage::new(width, height, image.color());
    let options = ResizeOptions::new()
        .resize_alg(ResizeAlg::Convolution(filter))
        .crop(region.left, region.top, region.width, region.height);
    mediaedit_pixels::resize(image, &mut resized, &options).map_err(|e| {
        tracing::warn!(error = %e, "a region of the picture could not be resampled");
        MediaError::InvalidMedia("the decoded picture could not be resized".into())
    })?;
    Ok(resized)
}

/// `image` placed with its top-left corner at `at` on a `size` canvas of `colour`.
/// The canvas keeps `image`'s layout when both are opaque, else it is `Rgba8`.
pub(crate) fn pad(
    image: DynamicImage,
    size: (u32, u32),
    at: (u32, u32),
    colour: Colour,
) -> DynamicImage {
    let [r, g, b, a] = colour.0;
    if a == 255 && !image.color().has_alpha() {
        let rgb = image.into_rgb8();
        let mut canvas = image::RgbImage::from_pixel(size.0, size.1, image::Rgb([r, g, b]));
        canvas
            .copy_from(&rgb, at.0, at.1)
            .expect("the picture fits its canvas");
        return DynamicImage::ImageRgb8(canvas);
    }
    let rgba = image.into_rgba8();
    let mut canvas = RgbaImage::from_pixel(size.0, size.1, Rgba([r, g, b, a]));
    canvas
        .copy_from(&rgba, at.0, at.1)
        .expect("the picture fits its canvas");
    DynamicImage::ImageRgba8(canvas)
}
