//! An open TIFF (libtiff over bytes in memory), its layout and the tags read from it.

use crate::media::error::MediaError;
use crate::media::image::codec::sys::tiff::{
    thandle_t, tmsize_t, toff_t, TIFFClientOpen, TIFFClose, TIFFRGBAImageOK,
    TIFFReadRGBAImageOriented, TIFFSetErrorHandler, TIFFSetWarningHandler, COMPRESSION_OJPEG,
    EXTRASAMPLE_ASSOCALPHA, EXTRASAMPLE_UNASSALPHA, INKSET_CMYK, PHOTOMETRIC_MINISBLACK,
    PHOTOMETRIC_RGB, PHOTOMETRIC_SEPARATED, PLANARCONFIG_CONTIG, SAMPLEFORMAT_IEEEFP,
    SAMPLEFORMAT_INT, SAMPLEFORMAT_UINT, TIFF, TIFFTAG_BITSPERSAMPLE, TIFFTAG_COMPRESSION,
    TIFFTAG_EXTRASAMPLES, TIFFTAG_ICCPROFILE, TIFFTAG_IMAGELENGTH, TIFFTAG_IMAGEWIDTH,
    TIFFTAG_INKSET, TIFFTAG_ORIENTATION, TIFFTAG_PHOTOMETRIC, TIFFTAG_PLANARCONFIG,
    TIFFTAG_SAMPLEFORMAT, TIFFTAG_SAMPLESPERPIXEL,
};
use crate::media::image::codec::tiff::pixels::Samples;
use image::{DynamicImage, RgbImage, RgbaImage};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Once;

/// libtiff's `#define`d values (tags, enumerations) as the `u16` values its fields
/// hold; every one of them fits.
pub(super) const fn short(value: u32) -> u16 {
    assert!(value <= u16::MAX as u32);
    value as u16
}

pub(super) const COMPRESSION_OLD_JPEG: u16 = short(COMPRESSION_OJPEG);

pub(super) const MIN_IS_BLACK: u16 = short(PHOTOMETRIC_MINISBLACK);

pub(super) const RGB: u16 = short(PHOTOMETRIC_RGB);

pub(super) const SEPARATED: u16 = short(PHOTOMETRIC_SEPARATED);

pub(super) const CONTIGUOUS: u16 = short(PLANARCONFIG_CONTIG);

pub(super) const INKS_CMYK: u16 = short(INKSET_CMYK);

pub(super) const UINT: u16 = short(SAMPLEFORMAT_UINT);

pub(super) const INT: u16 = short(SAMPLEFORMAT_INT);

pub(super) const FLOAT: u16 = short(SAMPLEFORMAT_IEEEFP);

pub(super) const ASSOCIATED_ALPHA: u16 = short(EXTRASAMPLE_ASSOCALPHA);

pub(super) const UNASSOCIATED_ALPHA: u16 = short(EXTRASAMPLE_UNASSALPHA);

/// The bytes libtiff reads, and where it is.
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: u64,
}

/// An open TIFF, closed on drop.
pub(crate) struct TiffFile<'a> {
    pub(super) tiff: *mut TIFF,
    // Boxed: libtiff keeps a pointer to it for the life of `tiff`.
    pub(super) _cursor: Box<Cursor<'a>>,
    pub width: u32,
    pub height: u32,
    /// The Orientation tag (1 when absent), as stored.
    pub orientation: u16,
    pub(super) layout: Layout,
}

/// Which of libtiff's interfaces reads the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
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

pub(super) fn damaged(why: &str) -> MediaError {
    MediaError::InvalidMedia(format!("the TIFF data {why}"))
}

/// Opens `bytes` and reads its first directory: size and orientation.
pub(crate) fn open(bytes: &[u8]) -> Result<TiffFile<'_>, MediaError> {
    static QUIET: Once = Once::new();
    // SAFETY: a null handler makes libtiff print nothing; errors come back as results.
    QUIET.call_once(|| unsafe {
        TIFFSetErrorHandler(None);
        TIFFSetWarningHandler(None);
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
            Some(read),
            Some(write),
            Some(seek),
            Some(close),
            Some(size),
            Some(no_map),
            Some(no_unmap),
        )
    };
    if tiff.is_null() {
        return Err(damaged("is damaged and no decoder can read it"));
    }
    let mut file = TiffFile {
        tiff,
        _cursor: cursor,
        width: 0,
        height: 0,
        orientation: 1,
        layout: Layout::Rgba,
    };
    file.width = file.field::<u32>(TIFFTAG_IMAGEWIDTH).unwrap_or(0);
    file.height = file.field::<u32>(TIFFTAG_IMAGELENGTH).unwrap_or(0);
    file.orientation = file.field::<u16>(TIFFTAG_ORIENTATION).unwrap_or(1);
    if file.width == 0 || file.height == 0 {
        return Err(damaged("declares no image size"));
    }
    file.layout = file.layout()?;
    Ok(file)
}

impl TiffFile<'_> {
    /// Which interface reads this page, or why none does. Pillow's table of sample
    /// layouts is the rule: what it reads is read, what it has no mode for (RGB of 32
    /// bits, grey of 24 or 64) is refused as it refuses it.
    pub(super) fn layout(&mut self) -> Result<Layout, MediaError> {
        let bits = self.defaulted::<u16>(TIFFTAG_BITSPERSAMPLE).unwrap_or(1);
        let samples = self.defaulted::<u16>(TIFFTAG_SAMPLESPERPIXEL).unwrap_or(1);
        let format = self.defaulted::<u16>(TIFFTAG_SAMPLEFORMAT).unwrap_or(UINT);
        let contiguous = self.defaulted::<u16>(TIFFTAG_PLANARCONFIG) == Some(CONTIGUOUS);
        // libtiff assumes min-is-black when a one-sample file leaves Photometric out,
        // as Pillow does.
        let photometric = self
            .field::<u16>(TIFFTAG_PHOTOMETRIC)
            .unwrap_or(MIN_IS_BLACK);
        let grey = samples == 1 && photometric == MIN_IS_BLACK;
        let cmyk = photometric == SEPARATED
            && samples == 4
            && contiguous
            && self.defaulted::<u16>(TIFFTAG_INKSET) == Some(INKS_CMYK);
        // 8-bit RGB and grey, the common TIFFs, are read from their strips on every core
        // rather than through the RGBA interface's one thread (old-style JPEG aside).
        let rgb = photometric == RGB && samples == 3 && contiguous;
        let plain = self.defaulted::<u16>(TIFFTAG_COMPRESSION) != Some(COMPRESSION_OLD_JPEG);
        let special = match (bits, format) {
            (8, UINT) if grey && plain => Some(Samples::Grey8),
            (8, UINT) if rgb && plain => Some(Samples::Rgb8),
            (12, UINT) if grey => Some(Samples::Grey12),
            (32, UINT | INT) if grey => Some(Samples::GreyInt32),
            (32, FLOAT) if grey => Some(Samples::GreyFloat32),
            (16, UINT) if cmyk => Some(Samples::Cmyk16),
            _ => None,
        };
        if let Some(samples) = special {
            return Ok(Layout::Samples(samples));
        }
        if photometric == RGB && samples == 4 && self.alpha().is_none() {
            // Pillow (its "missing ExtraSamples" modes) shows the fourth sample as
            // alpha, where libtiff would drop it; telling libtiff so makes both agree.
            // Panorama stitchers write such files.
            self.set_u16_array(TIFFTAG_EXTRASAMPLES, &[UNASSOCIATED_ALPHA]);
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
        self.array::<u32, u8>(TIFFTAG_ICCPROFILE)
            .map(<[u8]>::to_vec)
    }

    /// `Some(associated)` when the first extra sample is alpha.
    pub(super) fn alpha(&self) -> Option<bool> {
        // ExtraSamples is a u16 count of u16 kinds.
        match *self.array::<u16, u16>(TIFFTAG_EXTRASAMPLES)?.first()? {
            ASSOCIATED_ALPHA => Some(true),
            UNASSOCIATED_ALPHA => Some(false),
            _ => None,
        }
    }
}

unsafe extern "C" fn read(handle: thandle_t, buf: *mut c_void, size: tmsize_t) -> tmsize_t {
    let cursor = &mut *(handle as *mut Cursor);
    let start = cursor.at.min(cursor.bytes.len() as u64) as usize;
    let n = (size.max(0) as usize).min(cursor.bytes.len() - start);
    std::ptr::copy_nonoverlapping(cursor.bytes.as_ptr().add(start), buf as *mut u8, n);
    cursor.at = (start + n) as u64;
    n as tmsize_t
}

unsafe extern "C" fn write(_: thandle_t, _: *mut c_void, _: tmsize_t) -> tmsize_t {
    -1
}

unsafe extern "C" fn seek(handle: thandle_t, offset: toff_t, whence: c_int) -> toff_t {
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

unsafe extern "C" fn close(_: thandle_t) -> c_int {
    0
}

unsafe extern "C" fn size(handle: thandle_t) -> toff_t {
    let cursor = &*(handle as *const Cursor);
    cursor.bytes.len() as u64
}

unsafe extern "C" fn no_map(_: thandle_t, _: *mut *mut c_void, _: *mut toff_t) -> c_int {
    0
}

unsafe extern "C" fn no_unmap(_: thandle_t, _: *mut c_void, _: toff_t) {}
