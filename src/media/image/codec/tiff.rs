//! TIFF through libtiff, the library Pillow (the reference) decodes compressed TIFFs
//! with (Debian's `libtiff6`, linked as `libtiff`). Its `TIFFRGBAImage` interface reads
//! every compression and photometric it knows (JPEG-in-TIFF, LZW, Deflate, PackBits,
//! CCITT, YCbCr, CMYK, CIELab, palettes, 1- to 16-bit samples, strips or tiles, planar
//! or chunky) as 8-bit RGBA; the layouts Pillow reads beyond it (grey of 12 or 32 bits,
//! 16-bit CMYK) are decoded strip by strip in [`samples`]. Pillow's table of sample
//! layouts decides: what it has no mode for (RGB of 32 bits, grey of 24) is refused, as
//! the pure-Rust decoder of the `image` crate, which read some of those and missed a
//! third of Pillow's test images, is no longer asked.
//!
//! Only the first page is read. The bytes are handed over in memory (`TIFFClientOpen`
//! with read/seek/size callbacks over a slice): libtiff never opens a file itself. The
//! size is read from the first directory and checked against the pixel limit before a
//! pixel buffer exists.

mod file;
pub(crate) use file::open;
pub(crate) use file::TiffFile;

mod fields;
mod pixels;
mod samples;
#[cfg(test)]
mod tests;
