//! AVIF output through libheif's encoder API with libaom behind it — the AV1 encoder
//! `avifenc` (libavif) uses. At equal SSIM its files are 10–38 % larger than avifenc's
//! (libheif's RGB→YCbCr conversion and encoder controls; docs/PERFORMANCE.md): encoding
//! through libavif itself is the planned fix.
//!
//! Settings: lossy quality 60 (libheif maps it to AV1 quantizer 25), 4:2:0 chroma,
//! libaom speed 7, as many encoder threads as cores. Alpha is encoded as its own AV1
//! image, as AVIF requires.

use std::ffi::{c_int, c_void, CStr};

use image::DynamicImage;

use super::MediaError;

use super::libheif::*;

/// The lossy quality libheif maps to AV1's quantizer (60 → 25 of 63).
pub(crate) const AVIF_QUALITY: c_int = 60;
/// libaom's speed: 7 of 0 (slowest) to 9.
pub(crate) const AVIF_SPEED: c_int = 7;

/// The resources of one encoding, freed whatever happens.
struct Encoding {
    context: *mut Context,
    encoder: *mut Encoder,
    image: *mut Image,
}

impl Drop for Encoding {
    fn drop(&mut self) {
        // SAFETY: each was allocated by libheif (or is null) and is freed once.
        unsafe {
            if !self.image.is_null() {
                heif_image_release(self.image);
            }
            if !self.encoder.is_null() {
                heif_encoder_release(self.encoder);
            }
            heif_context_free(self.context);
        }
    }
}

fn checked(error: HeifError, what: &str) -> Result<(), MediaError> {
    if error.code == 0 {
        return Ok(());
    }
    // SAFETY: libheif's messages are NUL-terminated and live as long as the library.
    let message = unsafe { CStr::from_ptr(error.message) }.to_string_lossy();
    Err(MediaError::InvalidMedia(format!(
        "the picture could not be encoded as AVIF ({what}: {message})"
    )))
}

static EMPTY: &CStr = c"";

unsafe extern "C" fn collect(
    _: *mut Context,
    data: *const c_void,
    size: usize,
    out: *mut c_void,
) -> HeifError {
    let out = &mut *(out as *mut Vec<u8>);
    out.extend_from_slice(std::slice::from_raw_parts(data as *const u8, size));
    HeifError {
        code: 0,
        subcode: 0,
        message: EMPTY.as_ptr(),
    }
}

/// `image` (`Rgb8` or `Rgba8`) as an AVIF file.
pub(crate) fn encode(image: &DynamicImage) -> Result<Vec<u8>, MediaError> {
    let (chroma, channels, pixels) = match image {
        DynamicImage::ImageRgba8(rgba) => (CHROMA_INTERLEAVED_RGBA, 4, rgba.as_raw()),
        DynamicImage::ImageRgb8(rgb) => (CHROMA_INTERLEAVED_RGB, 3, rgb.as_raw()),
        _ => {
            return Err(MediaError::InvalidMedia(
                "an unexpected pixel layout".into(),
            ))
        }
    };
    let (width, height) = (image.width() as usize, image.height() as usize);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int;
    // SAFETY: every pointer comes from libheif and is released by `Encoding`; the pixel
    // copy stays within the plane libheif allocated (height rows of `stride` bytes).
    unsafe {
        let mut encoding = Encoding {
            context: heif_context_alloc(),
            encoder: std::ptr::null_mut(),
            image: std::ptr::null_mut(),
        };
        let ctx = encoding.context;
        checked(
            heif_context_get_encoder_for_format(ctx, COMPRESSION_AV1, &mut encoding.encoder),
            "no AV1 encoder",
        )?;
        let encoder = encoding.encoder;
        checked(
            heif_encoder_set_lossy_quality(encoder, AVIF_QUALITY),
            "quality",
        )?;
        checked(
            heif_encoder_set_parameter_integer(encoder, c"speed".as_ptr(), AVIF_SPEED),
            "speed",
        )?;
        checked(
            heif_encoder_set_parameter_integer(encoder, c"threads".as_ptr(), threads),
            "threads",
        )?;
        checked(
            heif_encoder_set_parameter_string(encoder, c"chroma".as_ptr(), c"420".as_ptr()),
            "chroma",
        )?;
        let (w, h) = (width as c_int, height as c_int);
        checked(
            heif_image_create(w, h, COLORSPACE_RGB, chroma, &mut encoding.image),
            "image",
        )?;
        checked(
            heif_image_add_plane(encoding.image, CHANNEL_INTERLEAVED, w, h, 8),
            "plane",
        )?;
        let mut stride: c_int = 0;
        let plane = heif_image_get_plane(encoding.image, CHANNEL_INTERLEAVED, &mut stride);
        let row = width * channels;
        if plane.is_null() || (stride as usize) < row {
            return Err(MediaError::InvalidMedia(
                "libheif gave no plane to encode".into(),
            ));
        }
        for (y, line) in pixels.chunks_exact(row).enumerate() {
            std::ptr::copy_nonoverlapping(line.as_ptr(), plane.add(y * stride as usize), row);
        }
        let mut handle: *mut Handle = std::ptr::null_mut();
        let encoded =
            heif_context_encode_image(ctx, encoding.image, encoder, std::ptr::null(), &mut handle);
        checked(encoded, "encoding")?;
        heif_image_handle_release(handle);
        let mut out: Vec<u8> = Vec::new();
        let writer = Writer {
            api_version: 1,
            write: collect,
        };
        let written = heif_context_write(ctx, &writer, &mut out as *mut Vec<u8> as *mut c_void);
        checked(written, "writing")?;
        Ok(out)
    }
}
