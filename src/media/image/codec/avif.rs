//! AVIF output through libavif (Debian's `libavif15`, libaom behind it) — the library
//! `avifenc` is, so at the same settings the files are the same: same bytes, same
//! SSIM, same time (bench/formats.py). libheif's own encoder, tried first, made files
//! 10–38 % larger at equal SSIM (its RGB→YCbCr conversion and encoder controls).
//!
//! Settings: AV1 quantizer 25 of 63 for colour (lossless alpha, as avifenc), 4:2:0
//! chroma averaged by libavif's converter, libaom speed 7, a thread per core; full
//! range, BT.601 matrix (libavif's defaults, which readers assume when unstated).

use std::ffi::{c_int, c_void};

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::codec::sys::avif::{
    avifCropRect, avifEncoder, avifEncoderCreate, avifEncoderDestroy, avifEncoderWrite, avifFree,
    avifImage, avifImageAllocatePlanes, avifImageCreate, avifImageCreateEmpty, avifImageDestroy,
    avifImageRGBToYUV, avifImageSetViewRect, avifRGBFormat, avifRGBImage, avifRGBImageSetDefaults,
    avifRWData, avifRWDataFree, AVIF_PIXEL_FORMAT_YUV420, AVIF_PLANES_ALL, AVIF_PLANES_YUV,
    AVIF_RESULT_OK, AVIF_RGB_FORMAT_RGB, AVIF_RGB_FORMAT_RGBA,
};

/// The AV1 quantizer for colour (0 lossless … 63).
pub(crate) const AVIF_QUANTIZER: c_int = 25;
/// libaom's speed: 7 of 0 (slowest) to 10.
pub(crate) const AVIF_SPEED: c_int = 7;
/// libaom's fastest speed, for a lossless picture whose pixels no speed changes.
const AVIF_FASTEST_SPEED: c_int = 10;

/// A libavif picture, freed on drop.
pub(crate) struct AvifImage(pub(crate) *mut avifImage);

impl Drop for AvifImage {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: made by libavif and freed once.
            unsafe { avifImageDestroy(self.0) }
        }
    }
}

/// A libavif encoder set up as every AVIF output is (see the module docs), with the
/// bytes it writes; both freed on drop.
pub(crate) struct AvifEncoder {
    pub(crate) encoder: *mut avifEncoder,
    pub(crate) output: avifRWData,
}

impl AvifEncoder {
    pub(crate) fn new() -> Result<AvifEncoder, MediaError> {
        // SAFETY: a fresh encoder, whose settings are fields of libavif's own
        // `avifEncoder` as its header declares them for the version built against.
        unsafe {
            let encoder = avifEncoderCreate();
            if encoder.is_null() {
                return Err(failed("no encoder", -1));
            }
            let settings = &mut *encoder;
            settings.maxThreads = crate::media::cores() as c_int;
            settings.speed = AVIF_SPEED;
            settings.minQuantizer = AVIF_QUANTIZER;
            settings.maxQuantizer = AVIF_QUANTIZER;
            settings.minQuantizerAlpha = 0;
            settings.maxQuantizerAlpha = 0;
            Ok(AvifEncoder {
                encoder,
                output: avifRWData {
                    data: std::ptr::null_mut(),
                    size: 0,
                },
            })
        }
    }

    /// The bytes written by `avifEncoderWrite` / `avifEncoderFinish`.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        if self.output.data.is_null() {
            return Vec::new();
        }
        // SAFETY: libavif's output buffer of `size` bytes.
        unsafe { std::slice::from_raw_parts(self.output.data, self.output.size).to_vec() }
    }
}

impl Drop for AvifEncoder {
    fn drop(&mut self) {
        // SAFETY: made by libavif (the output possibly empty) and freed once.
        unsafe {
            avifRWDataFree(&mut self.output);
            avifEncoderDestroy(self.encoder);
        }
    }
}

pub(crate) fn failed(what: &str, result: impl std::fmt::Display) -> MediaError {
    MediaError::InvalidMedia(format!(
        "the picture could not be encoded as AVIF ({what}: libavif result {result})"
    ))
}

/// Interleaved 8-bit pixels to convert.
struct Rgb<'a> {
    format: avifRGBFormat,
    width: u32,
    pixels: &'a [u8],
    row_bytes: u32,
}

/// Converts `rgb` into `image`'s allocated planes with libavif's own converter, a band
/// of rows per thread: libavif 0.11 converts on one core, which left the other idle
/// for a tenth of the encoding (a 3 MP picture). Each band is a view
/// (`avifImageSetViewRect`) starting on an even row, so every 2×2 chroma block lies in
/// one band and the planes are the ones one call over the whole picture writes.
///
/// SAFETY: `image` has `height` rows and its planes allocated; `rgb.pixels` holds
/// `height` rows of `rgb.row_bytes`.
unsafe fn to_yuv_in_bands(
    image: *mut avifImage,
    rgb: &Rgb,
    height: u32,
    bands: u32,
) -> Result<(), MediaError> {
    let band_rows = height.div_ceil(bands).next_multiple_of(2);
    let image = image as usize;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..height)
            .step_by(band_rows as usize)
            .map(|top| {
                let rows = band_rows.min(height - top);
                // SAFETY: the bands are disjoint rows of `image` and of `rgb`.
                scope
                    .spawn(move || unsafe { convert_band(image as *mut avifImage, rgb, top, rows) })
            })
            .collect();
        crate::media::cores::join_bands(workers)
    })
}

/// Converts rows `top..top + rows` of `rgb` into the same rows of `image`.
unsafe fn convert_band(
    image: *mut avifImage,
    rgb: &Rgb,
    top: u32,
    rows: u32,
) -> Result<(), MediaError> {
    let view = avifImageCreateEmpty();
    if view.is_null() {
        return Err(failed("no view", -1));
    }
    let rect = avifCropRect {
        x: 0,
        y: top,
        width: rgb.width,
        height: rows,
    };
    let mut rgb_band: avifRGBImage = std::mem::zeroed();
    let mut result = avifImageSetViewRect(view, image, &rect);
    if result == AVIF_RESULT_OK {
        avifRGBImageSetDefaults(&mut rgb_band, view);
        rgb_band.format = rgb.format;
        let offset = top as usize * rgb.row_bytes as usize;
        rgb_band.pixels = rgb.pixels[offset..].as_ptr() as *mut u8;
        rgb_band.rowBytes = rgb.row_bytes;
        result = avifImageRGBToYUV(view, &rgb_band);
    }
    // A view owns nothing, though libavif 0.11 marks it as owning the planes it found
    // allocated: freeing the struct alone leaves the picture's planes to the picture.
    avifFree(view as *mut c_void);
    if result != AVIF_RESULT_OK {
        return Err(failed("RGB to YUV", result));
    }
    Ok(())
}

/// `image` (`Rgb8` or `Rgba8`) as an AVIF file at `quality` (1–100, libavif's scale: the colour quantizer is
/// `(100 − quality) × 63 / 100`), or at [`AVIF_QUANTIZER`] without one.
pub(crate) fn encode_at(image: &DynamicImage, quality: Option<u8>) -> Result<Vec<u8>, MediaError> {
    encode_in_bands(
        image,
        crate::media::cores::band_count(image.height(), 128) as u32,
        quality,
    )
}

/// `image` at quality 100 (quantizer 0: libaom codes the YUV picture losslessly) at
/// libaom's fastest speed: the same pixels as [`encode_at`] at 100 writes, in a larger
/// file, in a fraction of the time. `quality: auto` scores its trials against it.
pub(crate) fn encode_lossless_quickly(image: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    let bands = crate::media::cores::band_count(image.height(), 128) as u32;
    encode_with(image, bands, Some(100), AVIF_FASTEST_SPEED)
}

/// [`encode_at`], converting to YUV in `bands` bands of rows at once.
fn encode_in_bands(
    image: &DynamicImage,
    bands: u32,
    quality: Option<u8>,
) -> Result<Vec<u8>, MediaError> {
    encode_with(image, bands, quality, AVIF_SPEED)
}

/// [`encode_in_bands`] at libaom's `speed`.
fn encode_with(
    image: &DynamicImage,
    bands: u32,
    quality: Option<u8>,
    speed: c_int,
) -> Result<Vec<u8>, MediaError> {
    let picture = to_yuv(image, bands)?;
    let mut encoder = AvifEncoder::new()?;
    // SAFETY: a live encoder made above; plain fields of libavif's settings.
    unsafe {
        (*encoder.encoder).speed = speed;
        if let Some(quality) = quality {
            let quantizer = ((100 - c_int::from(quality.clamp(1, 100))) * 63 + 50) / 100;
            (*encoder.encoder).minQuantizer = quantizer;
            (*encoder.encoder).maxQuantizer = quantizer;
        }
    }
    // SAFETY: both objects are live libavif objects, released by their owners.
    let written = unsafe { avifEncoderWrite(encoder.encoder, picture.0, &mut encoder.output) };
    if written != AVIF_RESULT_OK {
        return Err(failed("encoding", written));
    }
    Ok(encoder.bytes())
}

/// `image` (`Rgb8` or `Rgba8`) as a libavif picture: 8-bit YUV 4:2:0 (and alpha),
/// converted in `bands` bands of rows at once.
pub(crate) fn to_yuv(image: &DynamicImage, bands: u32) -> Result<AvifImage, MediaError> {
    let (format, channels, pixels) = match image {
        DynamicImage::ImageRgba8(rgba) => (AVIF_RGB_FORMAT_RGBA, 4, rgba.as_raw()),
        DynamicImage::ImageRgb8(rgb) => (AVIF_RGB_FORMAT_RGB, 3, rgb.as_raw()),
        _ => {
            return Err(MediaError::InvalidMedia(
                "an unexpected pixel layout".into(),
            ))
        }
    };
    let (width, height) = (image.width(), image.height());
    // SAFETY: libavif reads `pixels` (height rows of width × channels bytes) during
    // the conversion only; the picture is released by `AvifImage`.
    unsafe {
        let picture = AvifImage(avifImageCreate(width, height, 8, AVIF_PIXEL_FORMAT_YUV420));
        if picture.0.is_null() {
            return Err(failed("no image", -1));
        }
        let planes = if format == AVIF_RGB_FORMAT_RGBA {
            AVIF_PLANES_ALL
        } else {
            AVIF_PLANES_YUV
        };
        let allocated = avifImageAllocatePlanes(picture.0, planes);
        if allocated != AVIF_RESULT_OK {
            return Err(failed("planes", allocated));
        }
        let rgb = Rgb {
            format,
            width,
            pixels,
            row_bytes: width * channels,
        };
        to_yuv_in_bands(picture.0, &rgb, height, bands)?;
        Ok(picture)
    }
}

#[cfg(test)]
mod tests {
    use image::{DynamicImage, Rgba, RgbaImage};

    use super::{encode_at, encode_in_bands, encode_lossless_quickly};
    use crate::format::MediaFormat;

    /// Noise, so that every 2×2 chroma block differs from its neighbours.
    fn noisy(width: u32, height: u32) -> RgbaImage {
        RgbaImage::from_fn(width, height, |x, y| {
            let h = (x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)).wrapping_mul(97);
            Rgba([
                (h >> 3) as u8,
                (h >> 11) as u8,
                (h >> 19) as u8,
                (h >> 5) as u8 | 0x80,
            ])
        })
    }

    #[test]
    fn converting_in_bands_writes_the_planes_one_conversion_writes() {
        // An odd height, so the last band ends on a row without a partner.
        let rgba = DynamicImage::ImageRgba8(noisy(97, 203));
        let whole = encode_in_bands(&rgba, 1, None).unwrap();
        assert_eq!(encode_in_bands(&rgba, 3, None).unwrap(), whole);

        let rgb = DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(noisy(64, 131)).to_rgb8());
        let whole = encode_in_bands(&rgb, 1, None).unwrap();
        assert_eq!(encode_in_bands(&rgb, 2, None).unwrap(), whole);
    }

    #[test]
    fn a_quick_lossless_picture_decodes_to_the_pixels_of_quality_100() {
        let decoded = |bytes: &[u8]| {
            crate::media::image::decode::open(bytes, MediaFormat::Avif, u64::MAX)
                .unwrap()
                .decode(97, 66)
                .unwrap()
        };
        let rgba = DynamicImage::ImageRgba8(noisy(97, 66));
        let rgb = DynamicImage::ImageRgb8(rgba.to_rgb8());
        for picture in [rgb, rgba] {
            let slow = encode_at(&picture, Some(100)).unwrap();
            let quick = encode_lossless_quickly(&picture).unwrap();
            assert_eq!(decoded(&quick), decoded(&slow));
        }
    }
}
