//! The parts of libheif's C API (Debian's `libheif1` 1.15) that decoding HEIC and AVIF
//! (`heif`) uses.

use std::ffi::{c_char, c_int, c_void};

#[repr(C)]
pub(super) struct Context {
    _opaque: [u8; 0],
}
#[repr(C)]
pub(super) struct Handle {
    _opaque: [u8; 0],
}
#[repr(C)]
pub(super) struct Image {
    _opaque: [u8; 0],
}

/// `struct heif_error`: `code` 0 is success; `message` is always a valid C string.
#[repr(C)]
pub(super) struct HeifError {
    pub code: c_int,
    pub subcode: c_int,
    pub message: *const c_char,
}

pub(super) const COLORSPACE_RGB: c_int = 1;
pub(super) const CHROMA_INTERLEAVED_RGB: c_int = 10;
pub(super) const CHROMA_INTERLEAVED_RGBA: c_int = 11;
pub(super) const CHANNEL_INTERLEAVED: c_int = 10;

#[link(name = "heif")]
extern "C" {
    pub(super) fn heif_init(params: *const c_void) -> HeifError;
    pub(super) fn heif_context_alloc() -> *mut Context;
    pub(super) fn heif_context_free(context: *mut Context);
    pub(super) fn heif_context_read_from_memory_without_copy(
        context: *mut Context,
        bytes: *const c_void,
        size: usize,
        options: *const c_void,
    ) -> HeifError;
    pub(super) fn heif_context_get_primary_image_handle(
        context: *mut Context,
        handle: *mut *mut Handle,
    ) -> HeifError;
    pub(super) fn heif_image_handle_release(handle: *const Handle);
    pub(super) fn heif_image_handle_get_width(handle: *const Handle) -> c_int;
    pub(super) fn heif_image_handle_get_height(handle: *const Handle) -> c_int;
    pub(super) fn heif_image_handle_has_alpha_channel(handle: *const Handle) -> c_int;
    pub(super) fn heif_image_handle_get_raw_color_profile_size(handle: *const Handle) -> usize;
    pub(super) fn heif_image_handle_get_raw_color_profile(
        handle: *const Handle,
        out: *mut c_void,
    ) -> HeifError;
    pub(super) fn heif_decode_image(
        handle: *const Handle,
        image: *mut *mut Image,
        colorspace: c_int,
        chroma: c_int,
        options: *const c_void,
    ) -> HeifError;
    pub(super) fn heif_image_get_plane_readonly(
        image: *const Image,
        channel: c_int,
        stride: *mut c_int,
    ) -> *const u8;
    pub(super) fn heif_image_get_width(image: *const Image, channel: c_int) -> c_int;
    pub(super) fn heif_image_get_height(image: *const Image, channel: c_int) -> c_int;
    pub(super) fn heif_image_release(image: *const Image);
}
