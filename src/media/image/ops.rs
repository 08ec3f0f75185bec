//! The in-process image steps: target sizes, resizing, flattening and encoding.
//!
//! Everything here is synchronous and CPU-bound; [`crate::media::Media`] runs it on the
//! blocking pool.

use std::io::Write;
use std::path::Path;

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::{DynamicImage, ExtendedColorType, ImageEncoder, RgbImage};
use turbojpeg::{Compressor, PixelFormat, Subsamp};

use crate::format::{ImageFormat, MediaFormat, IMAGE_INPUTS};
use crate::media::error::MediaError;
use crate::media::file::{output_path, MediaFile};
use crate::media::image::yuv::Yuv420;

/// JPEG output quality: the usual web trade-off; artefacts are hard to see at 85.
const JPEG_QUALITY: i32 = 85;
/// Lossy WebP quality, libwebp's own default and comparable to JPEG 85 at a smaller size.
pub(crate) const WEBP_QUALITY: f32 = 80.0;
/// libwebp refuses pictures wider or taller than this.
pub(crate) const WEBP_MAX_SIDE: u32 = 16383;

/// The image format of an input, or `UnsupportedInputFormat` for anything but a still
/// image we can decode.
pub(crate) fn image_input(input: &MediaFile) -> Result<MediaFormat, MediaError> {
    if IMAGE_INPUTS.contains(&input.format) {
        return Ok(input.format);
    }
    Err(MediaError::unsupported(input.format, IMAGE_INPUTS))
}

/// The output size for `resize-image`, checked before any pixel is decoded.
pub(crate) fn scaled_size(
    width: u32,
    height: u32,
    scale: f64,
    output: ImageFormat,
    max_pixels: u64,
) -> Result<(u32, u32), MediaError> {
    let w = (f64::from(width) * scale).round();
    let h = (f64::from(height) * scale).round();
    if w < 1.0 || h < 1.0 {
        return Err(MediaError::OutputTooSmall);
    }
    // Saturating float-to-int casts; the pixel check below catches anything that big.
    let (w, h) = (w as u64, h as u64);
    if w.saturating_mul(h) > max_pixels {
        return Err(MediaError::OutputTooLarge {
            width: w,
            height: h,
            limit: max_pixels,
        });
    }
    if output == ImageFormat::Webp && (w > WEBP_MAX_SIDE.into() || h > WEBP_MAX_SIDE.into()) {
        return Err(MediaError::OutputTooLargeForFormat {
            format: "WebP",
            width: w,
            height: h,
            max_side: WEBP_MAX_SIDE.into(),
        });
    }
    // A side past u32 only gets here with a limit beyond any real image; refuse it too.
    Ok((
        u32::try_from(w).map_err(|_| too_large(w, h, max_pixels))?,
        u32::try_from(h).map_err(|_| too_large(w, h, max_pixels))?,
    ))
}

fn too_large(width: u64, height: u64, limit: u64) -> MediaError {
    MediaError::OutputTooLarge {
        width,
        height,
        limit,
    }
}

/// Resizes to exactly `width` x `height` (a no-op when already that size).
///
/// Lanczos3 when shrinking (sharp, little aliasing); Catmull-Rom when enlarging, where
/// Lanczos3's ringing shows. Alpha is premultiplied while filtering so transparent
/// pixels do not bleed their colour into the edges.
pub(crate) fn resize(
    image: DynamicImage,
    width: u32,
    height: u32,
) -> Result<DynamicImage, MediaError> {
    if (image.width(), image.height()) == (width, height) {
        return Ok(image);
    }
    let filter = if width <= image.width() && height <= image.height() {
        FilterType::Lanczos3
    } else {
        FilterType::CatmullRom
    };
    let mut resized = DynamicImage::new(width, height, image.color());
    mediaedit_pixels::resize(
        &image,
        &mut resized,
        &ResizeOptions::new().resize_alg(ResizeAlg::Convolution(filter)),
    )
    .map_err(|e| not_encoded("resized", e))?;
    Ok(resized)
}

/// Drops the alpha channel by compositing onto white, for outputs without transparency.
pub(crate) fn flatten_onto_white(image: DynamicImage) -> RgbImage {
    let rgba = match image {
        DynamicImage::ImageRgba8(rgba) => rgba,
        other => return other.into_rgb8(),
    };
    let (width, height) = rgba.dimensions();
    // Written in place rather than pushed: a push per byte kept this loop from being
    // vectorised, and it took a fifth of gif-to-video's own CPU.
    let mut out = vec![0u8; width as usize * height as usize * 3];
    for (px, rgb) in rgba.as_raw().chunks_exact(4).zip(out.chunks_exact_mut(3)) {
        let alpha = u32::from(px[3]);
        for (&c, o) in px[..3].iter().zip(rgb) {
            let blended = u32::from(c) * alpha + 255 * (255 - alpha);
            *o = ((blended + 127) / 255) as u8;
        }
    }
    RgbImage::from_raw(width, height, out).expect("buffer sized for the image")
}

/// Encodes an `Rgb8` / `Rgba8` picture.
pub(crate) fn encode(image: DynamicImage, format: ImageFormat) -> Result<Vec<u8>, MediaError> {
    encode_at(image, format, None)
}

/// [`encode`] at `quality` (1–100) for the lossy formats (JPEG, WebP, AVIF, JPEG XL), or at
/// each format's default without one; PNG and GIF have none.
pub(crate) fn encode_at(
    image: DynamicImage,
    format: ImageFormat,
    quality: Option<u8>,
) -> Result<Vec<u8>, MediaError> {
    match format {
        ImageFormat::Jpeg => encode_jpeg(
            &flatten_onto_white(image),
            quality.map_or(JPEG_QUALITY, i32::from),
        ),
        ImageFormat::Png => encode_png(&image),
        ImageFormat::Webp => encode_webp(&image, quality.map_or(WEBP_QUALITY, f32::from)),
        ImageFormat::Avif => crate::media::image::codec::avif::encode_at(&image, quality),
        ImageFormat::Jxl => {
            let boxes = crate::media::image::codec::jxl_encode::Boxes::default();
            crate::media::image::codec::jxl_encode::encode_at(&image, quality, &boxes)
        }
        ImageFormat::Gif => encode_gif(image),
    }
}

/// A still picture as a one-frame GIF (a palette of its own, NeuQuant).
fn encode_gif(image: DynamicImage) -> Result<Vec<u8>, MediaError> {
    let mut out = Vec::new();
    let mut rgba = image.into_rgba8();
    gif_transparency(&mut rgba);
    let frame = image::Frame::new(rgba);
    image::codecs::gif::GifEncoder::new_with_speed(&mut out, 10)
        .encode_frame(frame)
        .map_err(|e| not_encoded("encoded as GIF", e))?;
    Ok(out)
}

/// `rgba` with the transparency a GIF can hold: a pixel is transparent or opaque, cut
/// at half (the `gif` crate's encoder makes every pixel that is not wholly transparent
/// opaque, so the faint edge a resize leaves around a transparent area came out as a
/// ring of black and stray colours).
pub(crate) fn gif_transparency(rgba: &mut image::RgbaImage) {
    for pixel in rgba.pixels_mut() {
        pixel.0 = match pixel.0 {
            [.., a] if a < 128 => [0; 4],
            [r, g, b, _] => [r, g, b, 255],
        };
    }
}

/// libjpeg-turbo at `quality` (85 by default) with 4:2:0 chroma, the common web setting.
fn encode_jpeg(image: &RgbImage, quality: i32) -> Result<Vec<u8>, MediaError> {
    let mut compressor = Compressor::new().map_err(std::io::Error::other)?;
    compressor
        .set_quality(quality)
        .and_then(|()| compressor.set_subsamp(Subsamp::Sub2x2))
        .map_err(std::io::Error::other)?;
    let (width, height) = (image.width() as usize, image.height() as usize);
    let pixels = turbojpeg::Image {
        pixels: image.as_raw().as_slice(),
        width,
        pitch: width * 3,
        height,
        format: PixelFormat::RGB,
    };
    compressor
        .compress_to_vec(pixels)
        .map_err(|e| not_encoded("encoded as JPEG", e))
}

/// PNG with fast deflate: on photographic content the best level costs several times
/// the CPU for a few percent smaller files, and the outputs are short-lived downloads.
fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    let mut out = Vec::new();
    let color = match image {
        DynamicImage::ImageRgba8(_) => ExtendedColorType::Rgba8,
        _ => ExtendedColorType::Rgb8,
    };
    let rgb_copy;
    let bytes = match image {
        DynamicImage::ImageRgb8(_) | DynamicImage::ImageRgba8(_) => image.as_bytes(),
        other => {
            rgb_copy = other.to_rgb8();
            rgb_copy.as_raw().as_slice()
        }
    };
    PngEncoder::new_with_quality(&mut out, CompressionType::Fast, PngFilter::Adaptive)
        .write_image(bytes, image.width(), image.height(), color)
        .map_err(|e| not_encoded("encoded as PNG", e))?;
    Ok(out)
}

/// Lossy libwebp at quality 80; an alpha channel is kept (compressed losslessly, on
/// a thread of its own). Pictures are converted to YCbCr on every core
/// ([`Yuv420::from_rgb_as_libwebp`], [`Yuv420::from_rgba_as_libwebp`]).
fn encode_webp(image: &DynamicImage, quality: f32) -> Result<Vec<u8>, MediaError> {
    webp_planes(image)?.encode_webp_alone(quality)
}

/// [`encode_webp`] at the default quality and libwebp's quicker method 2, on one
/// thread (`Quality::Quick`).
pub(crate) fn encode_webp_quick(image: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    webp_planes(image)?.encode_webp_quick(WEBP_QUALITY)
}

/// `image`'s planes as libwebp would convert them.
fn webp_planes(image: &DynamicImage) -> Result<Yuv420, MediaError> {
    let (width, height) = (image.width(), image.height());
    match image {
        DynamicImage::ImageRgba8(rgba) => {
            Yuv420::from_rgba_as_libwebp(rgba.as_raw(), width, height)
        }
        DynamicImage::ImageRgb8(rgb) => Yuv420::from_rgb_as_libwebp(rgb.as_raw(), width, height),
        other => Yuv420::from_rgb_as_libwebp(other.to_rgb8().as_raw(), width, height),
    }
}

/// Writes `bytes` to a new file in `out_dir`; on failure nothing is left behind.
pub(crate) fn write_output(
    out_dir: &Path,
    format: ImageFormat,
    bytes: &[u8],
) -> Result<MediaFile, MediaError> {
    write_named(&output_path(out_dir, format.media_format()), format, bytes)
}

/// Writes `bytes` to the new file `path`; on failure nothing is left behind.
pub(crate) fn write_named(
    path: &Path,
    format: ImageFormat,
    bytes: &[u8],
) -> Result<MediaFile, MediaError> {
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut file| file.write_all(bytes));
    if let Err(e) = written {
        // Best effort: the caller's temp dir is removed anyway.
        let _ = std::fs::remove_file(path);
        return Err(e.into());
    }
    Ok(MediaFile {
        path: path.to_path_buf(),
        format: format.media_format(),
    })
}

/// An encoder's or resizer's refusal: its own message goes to the log (libwebp's is
/// debug output), the client gets a sentence.
fn not_encoded(what: &str, error: impl std::fmt::Display) -> MediaError {
    tracing::warn!(%error, "the picture could not be {what}");
    MediaError::InvalidMedia(format!("the decoded picture could not be {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    #[test]
    fn scaled_size_rounds_each_side() {
        let size = |w, h, s| scaled_size(w, h, s, ImageFormat::Png, 1 << 40);
        assert_eq!(size(40, 20, 0.5).unwrap(), (20, 10));
        assert_eq!(size(33, 21, 0.5).unwrap(), (17, 11));
        assert_eq!(size(33, 21, 2.0).unwrap(), (66, 42));
        assert_eq!(size(3, 3, 0.2).unwrap(), (1, 1));
    }

    #[test]
    fn scaled_size_refuses_sides_that_round_to_zero() {
        let err = scaled_size(100, 3, 0.1, ImageFormat::Png, 1 << 40).unwrap_err();
        assert!(matches!(err, MediaError::OutputTooSmall), "{err:?}");
    }

    #[test]
    fn scaled_size_refuses_outputs_past_the_pixel_limit() {
        let err = scaled_size(1000, 1000, 2.0, ImageFormat::Png, 3_000_000).unwrap_err();
        assert!(
            matches!(
                err,
                MediaError::OutputTooLarge {
                    width: 2000,
                    height: 2000,
                    limit: 3_000_000
                }
            ),
            "{err:?}"
        );
        let err = scaled_size(10_000, 10, 2.0, ImageFormat::Webp, 1 << 40).unwrap_err();
        assert!(
            matches!(err, MediaError::OutputTooLargeForFormat { .. }),
            "{err:?}"
        );
        assert_eq!(err.code(), "output_too_large");
    }

    #[test]
    fn flatten_composites_transparency_onto_white() {
        let mut rgba = image::RgbaImage::new(3, 1);
        rgba.put_pixel(0, 0, Rgba([0, 0, 0, 0]));
        rgba.put_pixel(1, 0, Rgba([0, 0, 0, 255]));
        rgba.put_pixel(2, 0, Rgba([0, 0, 0, 128]));
        let rgb = flatten_onto_white(DynamicImage::ImageRgba8(rgba));
        assert_eq!(rgb.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(rgb.get_pixel(1, 0).0, [0, 0, 0]);
        assert_eq!(rgb.get_pixel(2, 0).0, [127, 127, 127]);
    }

    #[test]
    fn resize_hits_the_exact_size_both_ways() {
        let image = DynamicImage::new_rgba8(33, 21);
        let down = resize(image.clone(), 17, 11).unwrap();
        assert_eq!((down.width(), down.height()), (17, 11));
        let up = resize(image, 66, 42).unwrap();
        assert_eq!((up.width(), up.height()), (66, 42));
        assert!(matches!(up, DynamicImage::ImageRgba8(_)));
    }
}
