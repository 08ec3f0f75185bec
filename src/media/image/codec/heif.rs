//! HEIC/HEIF and AVIF through libheif (Debian's `libheif1`: libde265 for HEVC, dav1d
//! and libaom for AV1), the library iPhones' photos are read with everywhere.
//!
//! libheif assembles grid images from their tiles, applies the `irot`/`imir`/`clap`
//! transformations (so the size it reports is the upright one, and EXIF orientation —
//! which HEIF writers keep only for old readers — is not applied again), and converts
//! 10- and 12-bit pictures to the 8-bit RGB(A) asked for. The bytes are handed over in
//! memory; the primary image's size is checked against the pixel limit before it is
//! decoded.

use std::ffi::{c_int, c_void, CStr};
use std::sync::Once;

use image::{DynamicImage, RgbImage, RgbaImage};

use crate::format::MediaFormat;
use crate::media::error::MediaError;
use crate::media::image::codec::sys::heif::{
    heif_channel_interleaved, heif_chroma_interleaved_RGB, heif_chroma_interleaved_RGBA,
    heif_colorspace_RGB, heif_context, heif_context_alloc, heif_context_free,
    heif_context_get_image_handle, heif_context_get_list_of_top_level_image_IDs,
    heif_context_get_primary_image_handle, heif_context_read_from_memory_without_copy,
    heif_decode_image, heif_error, heif_error_Ok, heif_error_Unsupported_feature,
    heif_error_Unsupported_filetype, heif_image, heif_image_get_height,
    heif_image_get_plane_readonly, heif_image_get_width, heif_image_handle,
    heif_image_handle_get_height, heif_image_handle_get_ispe_height,
    heif_image_handle_get_ispe_width, heif_image_handle_get_raw_color_profile,
    heif_image_handle_get_raw_color_profile_size, heif_image_handle_get_width,
    heif_image_handle_has_alpha_channel, heif_image_handle_is_primary_image,
    heif_image_handle_release, heif_image_release, heif_init, heif_item_id,
};

/// An error of libheif as ours, its message kept for the log only.
fn checked(error: heif_error, format: MediaFormat, what: &str) -> Result<(), MediaError> {
    if error.code == heif_error_Ok {
        return Ok(());
    }
    // SAFETY: libheif's error messages are static, NUL-terminated strings.
    let message = unsafe { CStr::from_ptr(error.message) }.to_string_lossy();
    tracing::debug!(%message, code = error.code, "libheif refused a file");
    let kind = if error.code == heif_error_Unsupported_filetype
        || error.code == heif_error_Unsupported_feature
    {
        "uses a feature no supported decoder reads"
    } else {
        "is damaged and no decoder can read it"
    };
    Err(MediaError::InvalidMedia(format!(
        "the {} data {kind} ({what})",
        format.name()
    )))
}

/// An open HEIF file's primary image, released on drop.
pub(crate) struct HeifFile<'a> {
    context: *mut heif_context,
    handle: *mut heif_image_handle,
    format: MediaFormat,
    /// libheif reads from these bytes, which must outlive the context.
    _bytes: &'a [u8],
    /// The upright size (transformations applied).
    pub width: u32,
    pub height: u32,
}

impl Drop for HeifFile<'_> {
    fn drop(&mut self) {
        // SAFETY: both were allocated by libheif, and are freed once, handle first.
        unsafe {
            if !self.handle.is_null() {
                heif_image_handle_release(self.handle);
            }
            heif_context_free(self.context);
        }
    }
}

// SAFETY: a context and its handle are used by one thread at a time (moved, never shared).
unsafe impl Send for HeifFile<'_> {}

/// Opens `bytes` and reads the primary image's upright size.
pub(crate) fn open(bytes: &[u8], format: MediaFormat) -> Result<HeifFile<'_>, MediaError> {
    static INIT: Once = Once::new();
    // SAFETY: heif_init may be called once per process before any other call.
    INIT.call_once(|| unsafe {
        heif_init(std::ptr::null_mut());
    });
    // SAFETY: the context reads `bytes` (without copying) for as long as the HeifFile
    // lives, which borrows them.
    let mut file = HeifFile {
        context: unsafe { heif_context_alloc() },
        handle: std::ptr::null_mut(),
        format,
        _bytes: bytes,
        width: 0,
        height: 0,
    };
    unsafe {
        let read = heif_context_read_from_memory_without_copy(
            file.context,
            bytes.as_ptr() as *const c_void,
            bytes.len(),
            std::ptr::null(),
        );
        checked(read, format, "reading its boxes")?;
        file.handle = primary_image(file.context, format)?;
        let (w, h) = (
            heif_image_handle_get_width(file.handle),
            heif_image_handle_get_height(file.handle),
        );
        let ispe = (
            heif_image_handle_get_ispe_width(file.handle),
            heif_image_handle_get_ispe_height(file.handle),
        );
        // libheif 1.15 may announce a turned image unturned (see heif_boxes).
        let turned = crate::media::image::codec::heif_boxes::primary_quarter_turns(bytes)
            .is_some_and(|t| t % 2 == 1);
        let (w, h) = if turned && (w, h) == ispe {
            (h, w)
        } else {
            (w, h)
        };
        file.width = u32::try_from(w).unwrap_or(0);
        file.height = u32::try_from(h).unwrap_or(0);
    }
    if file.width == 0 || file.height == 0 {
        return Err(MediaError::InvalidMedia(format!(
            "the {} declares no image size",
            format.name()
        )));
    }
    Ok(file)
}

/// The primary image, as pillow-heif picks it: the top-level image marked primary, or
/// the first top-level image where `pitm` names none (libheif 1.15 would hand out a
/// thumbnail then).
///
/// # Safety
/// `context` holds a file read without error.
unsafe fn primary_image(
    context: *mut heif_context,
    format: MediaFormat,
) -> Result<*mut heif_image_handle, MediaError> {
    let mut ids: [heif_item_id; 64] = [0; 64];
    let count = heif_context_get_list_of_top_level_image_IDs(context, ids.as_mut_ptr(), 64);
    let mut first: *mut heif_image_handle = std::ptr::null_mut();
    for &id in &ids[..count.clamp(0, 64) as usize] {
        let mut handle = std::ptr::null_mut();
        if heif_context_get_image_handle(context, id, &mut handle).code != heif_error_Ok
            || handle.is_null()
        {
            continue;
        }
        if heif_image_handle_is_primary_image(handle) != 0 {
            if !first.is_null() {
                heif_image_handle_release(first);
            }
            return Ok(handle);
        }
        if first.is_null() {
            first = handle;
        } else {
            heif_image_handle_release(handle);
        }
    }
    if first.is_null() {
        let mut handle = std::ptr::null_mut();
        checked(
            heif_context_get_primary_image_handle(context, &mut handle),
            format,
            "finding its primary image",
        )?;
        first = handle;
    }
    Ok(first)
}

impl HeifFile<'_> {
    /// The embedded ICC profile, if any (an `nclx` description is not one).
    pub fn icc_profile(&self) -> Option<Vec<u8>> {
        // SAFETY: the size is asked first and the buffer made that large.
        unsafe {
            let size = heif_image_handle_get_raw_color_profile_size(self.handle);
            if size == 0 {
                return None;
            }
            let mut profile = vec![0u8; size];
            let out = profile.as_mut_ptr() as *mut c_void;
            let error = heif_image_handle_get_raw_color_profile(self.handle, out);
            (error.code == heif_error_Ok).then_some(profile)
        }
    }

    /// The primary image, upright, as `Rgb8` or (with an alpha channel) `Rgba8`.
    pub fn decode(self) -> Result<DynamicImage, MediaError> {
        // SAFETY: the handle is valid while `self` lives.
        let alpha = unsafe { heif_image_handle_has_alpha_channel(self.handle) } != 0;
        let (chroma, channels) = if alpha {
            (heif_chroma_interleaved_RGBA, 4)
        } else {
            (heif_chroma_interleaved_RGB, 3)
        };
        let mut image: *mut heif_image = std::ptr::null_mut();
        // SAFETY: default decoding options (null): transformations applied.
        let decoded = unsafe {
            heif_decode_image(
                self.handle,
                &mut image,
                heif_colorspace_RGB,
                chroma,
                std::ptr::null(),
            )
        };
        checked(decoded, self.format, "decoding its pixels")?;
        // SAFETY: `image` was just decoded.
        let (w, h) = unsafe {
            (
                heif_image_get_width(image, heif_channel_interleaved).max(0) as usize,
                heif_image_get_height(image, heif_channel_interleaved).max(0) as usize,
            )
        };
        let mut stride: c_int = 0;
        // SAFETY: the interleaved plane is h rows of `stride` bytes, each at least
        // w × channels long; the image is released right after the copy.
        let pixels = unsafe {
            let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &mut stride);
            let row = w * channels;
            let copied = if plane.is_null() || (stride as usize) < row || row == 0 || h == 0 {
                None
            } else {
                let mut pixels = Vec::with_capacity(row * h);
                for y in 0..h {
                    let start = plane.add(y * stride as usize);
                    pixels.extend_from_slice(std::slice::from_raw_parts(start, row));
                }
                Some(pixels)
            };
            heif_image_release(image);
            copied
        };
        let pixels = pixels.ok_or_else(|| {
            MediaError::InvalidMedia(format!("the {} decoded to no picture", self.format.name()))
        })?;
        let (w, h) = (w as u32, h as u32);
        let image = if alpha {
            DynamicImage::ImageRgba8(RgbaImage::from_raw(w, h, pixels).expect("sized above"))
        } else {
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, pixels).expect("sized above"))
        };
        self.to_announced_size(image)
    }

    /// The decoded picture at the size the file announces, as libheif 1.18 (and so
    /// pillow-heif) gives it: a coded picture larger than its `ispe` is cropped to it
    /// from the top left; a smaller one means the header lies, and is refused.
    fn to_announced_size(&self, image: DynamicImage) -> Result<DynamicImage, MediaError> {
        let (w, h) = (image.width(), image.height());
        if (w, h) == (self.width, self.height) {
            return Ok(image);
        }
        if w < self.width || h < self.height {
            return Err(MediaError::InvalidMedia(format!(
                "the {} is damaged: its header says {}x{} but its picture is {w}x{h}",
                self.format.name(),
                self.width,
                self.height
            )));
        }
        Ok(image.crop_imm(0, 0, self.width, self.height))
    }
}
