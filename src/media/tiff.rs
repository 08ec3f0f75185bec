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

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Once;

use image::{DynamicImage, RgbImage, RgbaImage};

use self::samples::Samples;
use super::MediaError;

#[repr(C)]
struct Tiff {
    _opaque: [u8; 0],
}

type ReadWrite = unsafe extern "C" fn(*mut c_void, *mut c_void, isize) -> isize;
type Seek = unsafe extern "C" fn(*mut c_void, u64, c_int) -> u64;
type Close = unsafe extern "C" fn(*mut c_void) -> c_int;
type Size = unsafe extern "C" fn(*mut c_void) -> u64;
type Map = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut u64) -> c_int;
type Unmap = unsafe extern "C" fn(*mut c_void, *mut c_void, u64);

#[link(name = "tiff")]
extern "C" {
    #[allow(clippy::too_many_arguments)]
    fn TIFFClientOpen(
        name: *const c_char,
        mode: *const c_char,
        handle: *mut c_void,
        read: ReadWrite,
        write: ReadWrite,
        seek: Seek,
        close: Close,
        size: Size,
        map: Map,
        unmap: Unmap,
    ) -> *mut Tiff;
    fn TIFFClose(tiff: *mut Tiff);
    fn TIFFGetField(tiff: *mut Tiff, tag: u32, ...) -> c_int;
    fn TIFFGetFieldDefaulted(tiff: *mut Tiff, tag: u32, ...) -> c_int;
    fn TIFFSetField(tiff: *mut Tiff, tag: u32, ...) -> c_int;
    fn TIFFRGBAImageOK(tiff: *mut Tiff, message: *mut c_char) -> c_int;
    fn TIFFReadRGBAImageOriented(
        tiff: *mut Tiff,
        width: u32,
        height: u32,
        raster: *mut u32,
        orientation: c_int,
        stop_on_error: c_int,
    ) -> c_int;
    fn TIFFSetErrorHandler(handler: *const c_void) -> *const c_void;
    fn TIFFSetWarningHandler(handler: *const c_void) -> *const c_void;
}

const TAG_IMAGE_WIDTH: u32 = 256;
const TAG_IMAGE_LENGTH: u32 = 257;
const TAG_BITS_PER_SAMPLE: u32 = 258;
const TAG_COMPRESSION: u32 = 259;
const COMPRESSION_OJPEG: u16 = 6;
const TAG_PHOTOMETRIC: u32 = 262;
const TAG_ORIENTATION: u32 = 274;
const TAG_SAMPLES_PER_PIXEL: u32 = 277;
const TAG_PLANAR_CONFIG: u32 = 284;
const TAG_INK_SET: u32 = 332;
const TAG_EXTRA_SAMPLES: u32 = 338;
const TAG_SAMPLE_FORMAT: u32 = 339;
const PHOTOMETRIC_MIN_IS_BLACK: u16 = 1;
const PHOTOMETRIC_RGB: u16 = 2;
const PHOTOMETRIC_SEPARATED: u16 = 5;
const SAMPLE_FORMAT_UINT: u16 = 1;
const SAMPLE_FORMAT_INT: u16 = 2;
const SAMPLE_FORMAT_IEEEFP: u16 = 3;
const TAG_ICC_PROFILE: u32 = 34675;
const EXTRA_SAMPLE_ASSOCIATED_ALPHA: u16 = 1;
const EXTRA_SAMPLE_UNASSOCIATED_ALPHA: u16 = 2;

/// The bytes libtiff reads, and where it is.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: u64,
}

unsafe extern "C" fn read(handle: *mut c_void, buf: *mut c_void, size: isize) -> isize {
    let cursor = &mut *(handle as *mut Cursor);
    let start = cursor.at.min(cursor.bytes.len() as u64) as usize;
    let n = (size.max(0) as usize).min(cursor.bytes.len() - start);
    std::ptr::copy_nonoverlapping(cursor.bytes.as_ptr().add(start), buf as *mut u8, n);
    cursor.at = (start + n) as u64;
    n as isize
}

unsafe extern "C" fn write(_: *mut c_void, _: *mut c_void, _: isize) -> isize {
    -1
}

unsafe extern "C" fn seek(handle: *mut c_void, offset: u64, whence: c_int) -> u64 {
    let cursor = &mut *(handle as *mut Cursor);
    // SEEK_SET takes the offset as is; SEEK_CUR and SEEK_END as a signed step.
    let target = match whence {
        1 => i128::from(cursor.at) + i128::from(offset as i64),
        2 => cursor.bytes.len() as i128 + i128::from(offset as i64),
        _ => i128::from(offset),
    };
    match u64::try_from(target) {
        // An offset past the end stays there: reads then return nothing.
        Ok(at) => {
            cursor.at = at;
            at
        }
        Err(_) => u64::MAX,
    }
}

unsafe extern "C" fn close(_: *mut c_void) -> c_int {
    0
}

unsafe extern "C" fn size(handle: *mut c_void) -> u64 {
    let cursor = &*(handle as *const Cursor);
    cursor.bytes.len() as u64
}

unsafe extern "C" fn no_map(_: *mut c_void, _: *mut *mut c_void, _: *mut u64) -> c_int {
    0
}

unsafe extern "C" fn no_unmap(_: *mut c_void, _: *mut c_void, _: u64) {}

/// An open TIFF, closed on drop.
pub(crate) struct TiffFile<'a> {
    tiff: *mut Tiff,
    // Boxed: libtiff keeps a pointer to it for the life of `tiff`.
    _cursor: Box<Cursor<'a>>,
    pub width: u32,
    pub height: u32,
    /// The Orientation tag (1 when absent), as stored.
    pub orientation: u16,
    layout: Layout,
}

/// Which of libtiff's interfaces reads the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `TIFFReadRGBAImage`: every photometric, 1 to 16 bits per sample.
    Rgba,
    /// The decoded strips or tiles, turned into colours here.
    Samples(Samples),
}

impl Drop for TiffFile<'_> {
    fn drop(&mut self) {
        // SAFETY: `tiff` came from TIFFClientOpen and is closed once.
        unsafe { TIFFClose(self.tiff) }
    }
}

fn damaged(why: &str) -> MediaError {
    MediaError::InvalidMedia(format!("the TIFF data {why}"))
}

/// Opens `bytes` and reads its first directory: size and orientation.
pub(crate) fn open(bytes: &[u8]) -> Result<TiffFile<'_>, MediaError> {
    static QUIET: Once = Once::new();
    // SAFETY: a null handler makes libtiff print nothing; errors come back as results.
    QUIET.call_once(|| unsafe {
        TIFFSetErrorHandler(std::ptr::null());
        TIFFSetWarningHandler(std::ptr::null());
    });
    let mut cursor = Box::new(Cursor { bytes, at: 0 });
    let handle = &mut *cursor as *mut Cursor as *mut c_void;
    // SAFETY: the callbacks only touch `cursor`, which outlives the handle (it is
    // dropped after TIFFClose, being a later field of TiffFile).
    let tiff = unsafe {
        TIFFClientOpen(
            c"source".as_ptr(),
            c"rm".as_ptr(),
            handle,
            read,
            write,
            seek,
            close,
            size,
            no_map,
            no_unmap,
        )
    };
    if tiff.is_null() {
        return Err(damaged("is damaged and no decoder can read it"));
    }
    let (mut width, mut height, mut orientation) = (0u32, 0u32, 1u16);
    // SAFETY: these tags are read into the C types libtiff documents for them.
    unsafe {
        TIFFGetField(tiff, TAG_IMAGE_WIDTH, &mut width as *mut u32);
        TIFFGetField(tiff, TAG_IMAGE_LENGTH, &mut height as *mut u32);
        TIFFGetField(tiff, TAG_ORIENTATION, &mut orientation as *mut u16);
    }
    let mut file = TiffFile {
        tiff,
        _cursor: cursor,
        width,
        height,
        orientation,
        layout: Layout::Rgba,
    };
    if width == 0 || height == 0 {
        return Err(damaged("declares no image size"));
    }
    file.layout = file.layout()?;
    Ok(file)
}

impl TiffFile<'_> {
    /// Which interface reads this page, or why none does. Pillow's table of sample
    /// layouts is the rule: what it reads is read, what it has no mode for (RGB of 32
    /// bits, grey of 24 or 64) is refused as it refuses it.
    fn layout(&mut self) -> Result<Layout, MediaError> {
        let bits = self.field_u16(TAG_BITS_PER_SAMPLE).unwrap_or(1);
        let samples = self.field_u16(TAG_SAMPLES_PER_PIXEL).unwrap_or(1);
        let format = self
            .field_u16(TAG_SAMPLE_FORMAT)
            .unwrap_or(SAMPLE_FORMAT_UINT);
        let contiguous = self.field_u16(TAG_PLANAR_CONFIG) == Some(1);
        // libtiff assumes min-is-black when a one-sample file leaves Photometric out,
        // as Pillow does.
        let photometric = self
            .field(TAG_PHOTOMETRIC)
            .unwrap_or(PHOTOMETRIC_MIN_IS_BLACK);
        let grey = samples == 1 && photometric == PHOTOMETRIC_MIN_IS_BLACK;
        let cmyk = photometric == PHOTOMETRIC_SEPARATED
            && samples == 4
            && contiguous
            && self.field_u16(TAG_INK_SET) == Some(1);
        // 8-bit RGB and grey, the common TIFFs, are read from their strips on every core
        // rather than through the RGBA interface's one thread (old-style JPEG aside).
        let rgb = photometric == PHOTOMETRIC_RGB && samples == 3 && contiguous;
        let plain = self.field_u16(TAG_COMPRESSION) != Some(COMPRESSION_OJPEG);
        let special = match (bits, format) {
            (8, SAMPLE_FORMAT_UINT) if grey && plain => Some(Samples::Grey8),
            (8, SAMPLE_FORMAT_UINT) if rgb && plain => Some(Samples::Rgb8),
            (12, SAMPLE_FORMAT_UINT) if grey => Some(Samples::Grey12),
            (32, SAMPLE_FORMAT_UINT | SAMPLE_FORMAT_INT) if grey => Some(Samples::GreyInt32),
            (32, SAMPLE_FORMAT_IEEEFP) if grey => Some(Samples::GreyFloat32),
            (16, SAMPLE_FORMAT_UINT) if cmyk => Some(Samples::Cmyk16),
            _ => None,
        };
        if let Some(samples) = special {
            return Ok(Layout::Samples(samples));
        }
        if photometric == PHOTOMETRIC_RGB && samples == 4 && self.alpha().is_none() {
            self.fourth_sample_is_alpha();
        }
        let mut message = [0 as c_char; 1024];
        // SAFETY: libtiff writes at most 1024 bytes of message, NUL-terminated.
        if unsafe { TIFFRGBAImageOK(self.tiff, message.as_mut_ptr()) } == 0 {
            let why = unsafe { CStr::from_ptr(message.as_ptr()) }.to_string_lossy();
            tracing::debug!(%why, "libtiff cannot read this TIFF as RGBA");
            return Err(damaged("uses a sample layout no supported decoder reads"));
        }
        Ok(Layout::Rgba)
    }

    /// An RGB page of four samples that leaves ExtraSamples out: Pillow (its "missing
    /// ExtraSamples" modes) shows the fourth as alpha, where libtiff would drop it;
    /// telling libtiff so makes both agree. Panorama stitchers write such files.
    fn fourth_sample_is_alpha(&mut self) {
        let kinds = [EXTRA_SAMPLE_UNASSOCIATED_ALPHA];
        // SAFETY: ExtraSamples is set from a count (promoted to int) and a u16 array,
        // which libtiff copies.
        unsafe { TIFFSetField(self.tiff, TAG_EXTRA_SAMPLES, 1 as c_int, kinds.as_ptr()) };
    }

    /// A u16 tag, or its default where the TIFF specification gives one.
    fn field_u16(&self, tag: u32) -> Option<u16> {
        let mut value = 0u16;
        // SAFETY: the callers name tags libtiff hands out as one u16.
        let found = unsafe { TIFFGetFieldDefaulted(self.tiff, tag, &mut value as *mut u16) };
        (found != 0).then_some(value)
    }

    /// A u16 tag as stored: `None` when absent.
    fn field(&self, tag: u32) -> Option<u16> {
        let mut value = 0u16;
        // SAFETY: the callers name tags libtiff hands out as one u16.
        let found = unsafe { TIFFGetField(self.tiff, tag, &mut value as *mut u16) };
        (found != 0).then_some(value)
    }

    /// A u32 tag, or its default where the TIFF specification gives one.
    fn field_u32(&self, tag: u32) -> Option<u32> {
        let mut value = 0u32;
        // SAFETY: the callers name tags libtiff hands out as one u32.
        let found = unsafe { TIFFGetFieldDefaulted(self.tiff, tag, &mut value as *mut u32) };
        (found != 0).then_some(value)
    }

    /// The first page as stored (not yet oriented): `Rgba8` when it has an alpha
    /// channel (associated alpha un-premultiplied), else `Rgb8`.
    pub fn decode(self) -> Result<DynamicImage, MediaError> {
        if let Layout::Samples(samples) = self.layout {
            return self.decode_samples(samples);
        }
        let pixels = self.width as usize * self.height as usize;
        let mut raster = vec![0u32; pixels];
        // Asking for the file's own orientation means no flip: the pixels come as
        // stored, and the caller applies the orientation (as for EXIF) once. The read
        // stops at the first strip or tile that does not decode: left to go on, libtiff
        // would leave it blank and call the page read, where Pillow refuses the file
        // (fuzzed files, strips shorter than RowsPerStrip says).
        // SAFETY: `raster` holds width × height pixels.
        let read = unsafe {
            TIFFReadRGBAImageOriented(
                self.tiff,
                self.width,
                self.height,
                raster.as_mut_ptr(),
                c_int::from(self.orientation.clamp(1, 8)),
                1,
            )
        };
        if read == 0 {
            return Err(damaged("is damaged and no decoder can read it"));
        }
        let alpha = self.alpha();
        // Each pixel is A<<24 | B<<16 | G<<8 | R: little-endian bytes are R, G, B, A.
        let (w, h) = (self.width, self.height);
        let image = match alpha {
            None => {
                let rgb = raster.iter().flat_map(|p| {
                    let [r, g, b, _] = p.to_le_bytes();
                    [r, g, b]
                });
                DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, rgb.collect()).unwrap())
            }
            Some(associated) => {
                let rgba = raster.iter().flat_map(|p| {
                    let [r, g, b, a] = p.to_le_bytes();
                    if associated && a > 0 && a < 255 {
                        let un = |c: u8| {
                            ((u32::from(c) * 255 + u32::from(a) / 2) / u32::from(a)).min(255) as u8
                        };
                        [un(r), un(g), un(b), a]
                    } else {
                        [r, g, b, a]
                    }
                });
                DynamicImage::ImageRgba8(RgbaImage::from_raw(w, h, rgba.collect()).unwrap())
            }
        };
        Ok(image)
    }

    /// The embedded ICC profile, if any.
    pub fn icc_profile(&self) -> Option<Vec<u8>> {
        // InterColorProfile is a u32 count of bytes.
        self.array::<u32, u8>(TAG_ICC_PROFILE).map(<[u8]>::to_vec)
    }

    /// A tag whose value libtiff hands out as a count (of type `N`) and a pointer into
    /// its own copy of the directory, valid while the file is open.
    fn array<N: Copy + Default + Into<u64>, T>(&self, tag: u32) -> Option<&[T]> {
        let (mut count, mut data) = (N::default(), std::ptr::null::<T>());
        // SAFETY: the caller names the count type libtiff documents for `tag`.
        let found = unsafe {
            TIFFGetField(
                self.tiff,
                tag,
                &mut count as *mut N,
                &mut data as *mut *const T,
            )
        };
        let count = count.into() as usize;
        if found == 0 || data.is_null() || count == 0 {
            return None;
        }
        // SAFETY: `data` points at `count` values owned by libtiff while `self` lives.
        Some(unsafe { std::slice::from_raw_parts(data, count) })
    }

    /// `Some(associated)` when the first extra sample is alpha.
    fn alpha(&self) -> Option<bool> {
        // ExtraSamples is a u16 count of u16 kinds.
        match *self.array::<u16, u16>(TAG_EXTRA_SAMPLES)?.first()? {
            EXTRA_SAMPLE_ASSOCIATED_ALPHA => Some(true),
            EXTRA_SAMPLE_UNASSOCIATED_ALPHA => Some(false),
            _ => None,
        }
    }
}

mod samples;
#[cfg(test)]
mod tests;
