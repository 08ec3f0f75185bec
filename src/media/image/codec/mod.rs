//! The image codecs read and written in this process: the C libraries (libjpeg-turbo,
//! libtiff, libheif, libavif; `sys` declares the ones without a maintained binding)
//! the BMP reader written to match Pillow, the SVG renderer (resvg), and the GIF and APNG structure readers
//! (blocks and chunks, frames laid on the one canvas of `canvas.rs` as viewers lay
//! them), the APNG writer, and libwebp's decoder for the WebPs we wrote ourselves.

pub(crate) mod apng;
pub(crate) mod avif;
pub(crate) mod bmp;
pub(crate) mod canvas;
pub(crate) mod gif;
pub(crate) mod heif;
pub(crate) mod heif_boxes;
pub(crate) mod jpeg;
pub(crate) mod jxl;
pub(crate) mod jxl_encode;
mod jxl_pixels;
pub(crate) mod svg;
pub(crate) mod sys;
pub(crate) mod tiff;
pub(crate) mod webp;
