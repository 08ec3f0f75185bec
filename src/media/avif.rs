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

use super::MediaError;

/// The AV1 quantizer for colour (0 lossless … 63).
pub(crate) const AVIF_QUANTIZER: c_int = 25;
/// libaom's speed: 7 of 0 (slowest) to 10.
pub(crate) const AVIF_SPEED: c_int = 7;

const PIXEL_FORMAT_YUV420: c_int = 3;
const RGB_FORMAT_RGB: c_int = 0;
const RGB_FORMAT_RGBA: c_int = 1;

#[repr(C)]
struct AvifImage {
    _opaque: [u8; 0],
}

/// `avifRGBImage` of libavif 0.11.
#[repr(C)]
struct AvifRgbImage {
    width: u32,
    height: u32,
    depth: u32,
    format: c_int,
    chroma_upsampling: c_int,
    chroma_downsampling: c_int,
    avoid_libyuv: c_int,
    ignore_alpha: c_int,
    alpha_premultiplied: c_int,
    is_float: c_int,
    pixels: *mut u8,
    row_bytes: u32,
}

/// The settings at the start of libavif 0.11's `avifEncoder` (only these are written;
/// the rest of the struct belongs to libavif).
#[repr(C)]
struct AvifEncoderSettings {
    codec_choice: c_int,
    max_threads: c_int,
    speed: c_int,
    keyframe_interval: c_int,
    timescale: u64,
    min_quantizer: c_int,
    max_quantizer: c_int,
    min_quantizer_alpha: c_int,
    max_quantizer_alpha: c_int,
}

#[repr(C)]
struct AvifRwData {
    data: *mut u8,
    size: usize,
}

#[link(name = "avif")]
extern "C" {
    fn avifImageCreate(width: u32, height: u32, depth: u32, format: c_int) -> *mut AvifImage;
    fn avifImageDestroy(image: *mut AvifImage);
    fn avifRGBImageSetDefaults(rgb: *mut AvifRgbImage, image: *const AvifImage);
    fn avifImageRGBToYUV(image: *mut AvifImage, rgb: *const AvifRgbImage) -> c_int;
    fn avifEncoderCreate() -> *mut c_void;
    fn avifEncoderWrite(
        encoder: *mut c_void,
        image: *const AvifImage,
        output: *mut AvifRwData,
    ) -> c_int;
    fn avifEncoderDestroy(encoder: *mut c_void);
    fn avifRWDataFree(data: *mut AvifRwData);
}

/// The resources of one encoding, freed whatever happens.
struct Encoding {
    image: *mut AvifImage,
    encoder: *mut c_void,
    output: AvifRwData,
}

impl Drop for Encoding {
    fn drop(&mut self) {
        // SAFETY: each was made by libavif (or is null/empty) and is freed once.
        unsafe {
            avifRWDataFree(&mut self.output);
            if !self.encoder.is_null() {
                avifEncoderDestroy(self.encoder);
            }
            if !self.image.is_null() {
                avifImageDestroy(self.image);
            }
        }
    }
}

fn failed(what: &str, result: c_int) -> MediaError {
    MediaError::InvalidMedia(format!(
        "the picture could not be encoded as AVIF ({what}: libavif result {result})"
    ))
}

/// `image` (`Rgb8` or `Rgba8`) as an AVIF file.
pub(crate) fn encode(image: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    let (format, channels, pixels) = match image {
        DynamicImage::ImageRgba8(rgba) => (RGB_FORMAT_RGBA, 4, rgba.as_raw()),
        DynamicImage::ImageRgb8(rgb) => (RGB_FORMAT_RGB, 3, rgb.as_raw()),
        _ => {
            return Err(MediaError::InvalidMedia(
                "an unexpected pixel layout".into(),
            ))
        }
    };
    let (width, height) = (image.width(), image.height());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int;
    // SAFETY: libavif reads `pixels` (height rows of width × channels bytes) during
    // avifImageRGBToYUV only; every object is released by `Encoding`.
    unsafe {
        let mut encoding = Encoding {
            image: avifImageCreate(width, height, 8, PIXEL_FORMAT_YUV420),
            encoder: std::ptr::null_mut(),
            output: AvifRwData {
                data: std::ptr::null_mut(),
                size: 0,
            },
        };
        if encoding.image.is_null() {
            return Err(failed("no image", -1));
        }
        let mut rgb: AvifRgbImage = std::mem::zeroed();
        avifRGBImageSetDefaults(&mut rgb, encoding.image);
        rgb.format = format;
        rgb.pixels = pixels.as_ptr() as *mut u8;
        rgb.row_bytes = width * channels;
        let converted = avifImageRGBToYUV(encoding.image, &rgb);
        if converted != 0 {
            return Err(failed("RGB to YUV", converted));
        }
        encoding.encoder = avifEncoderCreate();
        if encoding.encoder.is_null() {
            return Err(failed("no encoder", -1));
        }
        let settings = &mut *(encoding.encoder as *mut AvifEncoderSettings);
        settings.max_threads = threads;
        settings.speed = AVIF_SPEED;
        settings.min_quantizer = AVIF_QUANTIZER;
        settings.max_quantizer = AVIF_QUANTIZER;
        settings.min_quantizer_alpha = 0;
        settings.max_quantizer_alpha = 0;
        let written = avifEncoderWrite(encoding.encoder, encoding.image, &mut encoding.output);
        if written != 0 {
            return Err(failed("encoding", written));
        }
        Ok(std::slice::from_raw_parts(encoding.output.data, encoding.output.size).to_vec())
    }
}
