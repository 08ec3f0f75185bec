//! JPEG through libjpeg-turbo's TurboJPEG 3 API, as tolerant as libjpeg itself.
//!
//! libjpeg reports two kinds of trouble: errors, after which it cannot go on, and
//! warnings (stray bytes before a marker, a bad ICC or APP segment, a corrupt run of
//! entropy-coded data), after which it goes on and the pixels are complete. Pillow,
//! browsers and ffmpeg all show a picture that only drew warnings; the `turbojpeg`
//! crate returns both kinds as the same `Err`, so this small wrapper over its raw
//! bindings asks the library which kind it was (`tj3GetErrorCode`).
//!
//! One warning is still a failure: "Premature end of JPEG file", a truncated file.
//! libjpeg pads such a picture with grey, and Pillow (the reference the corpus test
//! compares with) refuses it; a truncated upload is better reported than half-shown.

use std::ffi::{c_int, CStr};
use std::ptr::NonNull;

use turbojpeg::raw;
use turbojpeg::ScalingFactor;

use crate::media::error::MediaError;

/// The message libjpeg gives for a file that ends before its last scan does.
const TRUNCATED: &str = "Premature end of JPEG file";

/// What a JPEG's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JpegHeader {
    pub width: usize,
    pub height: usize,
    /// CMYK and YCCK cannot be turned into RGB by libjpeg-turbo.
    pub is_cmyk: bool,
    /// Lossless JPEG cannot be scaled while decoding.
    pub is_lossless: bool,
}

/// One TurboJPEG decompressor; not shared between threads.
pub(crate) struct JpegDecoder {
    handle: NonNull<std::ffi::c_void>,
}

impl JpegDecoder {
    /// `Io` when libjpeg-turbo cannot allocate its state.
    pub fn new() -> Result<Self, MediaError> {
        // SAFETY: tj3Init has no preconditions; a null result is handled.
        let handle = unsafe { raw::tj3Init(raw::TJINIT_TJINIT_DECOMPRESS as c_int) };
        NonNull::new(handle)
            .map(|handle| JpegDecoder { handle })
            .ok_or_else(|| std::io::Error::other("libjpeg-turbo could not be initialised").into())
    }

    /// Reads the header; warnings in the segments before the first scan are ignored.
    ///
    /// `InvalidMedia` when libjpeg cannot read the header at all.
    pub fn header(&mut self, bytes: &[u8]) -> Result<JpegHeader, MediaError> {
        // SAFETY: the handle is live and the buffer is valid for its length.
        let res = unsafe {
            raw::tj3DecompressHeader(self.handle.as_ptr(), bytes.as_ptr(), bytes.len() as _)
        };
        self.check(res)?;
        let get = |param: raw::TJPARAM| {
            // SAFETY: the handle is live; tj3Get only reads a parameter.
            unsafe { raw::tj3Get(self.handle.as_ptr(), param as c_int) }
        };
        let (width, height) = (
            get(raw::TJPARAM_TJPARAM_JPEGWIDTH),
            get(raw::TJPARAM_TJPARAM_JPEGHEIGHT),
        );
        if width <= 0 || height <= 0 {
            return Err(corrupt());
        }
        let colorspace = get(raw::TJPARAM_TJPARAM_COLORSPACE);
        Ok(JpegHeader {
            width: width as usize,
            height: height as usize,
            is_cmyk: colorspace == raw::TJCS_TJCS_CMYK as c_int
                || colorspace == raw::TJCS_TJCS_YCCK as c_int,
            is_lossless: get(raw::TJPARAM_TJPARAM_LOSSLESS) != 0,
        })
    }

    /// Decodes `bytes` (whose header was read by [`JpegDecoder::header`]) as packed RGB,
    /// shrunk by `factor` in the DCT domain. Returns the pixels and their size.
    ///
    /// `InvalidMedia` for a truncated file or one libjpeg cannot decode.
    pub fn decode_rgb(
        &mut self,
        bytes: &[u8],
        header: &JpegHeader,
        factor: ScalingFactor,
    ) -> Result<(Vec<u8>, usize, usize), MediaError> {
        let scaling = raw::tjscalingfactor {
            num: factor.num() as c_int,
            denom: factor.denom() as c_int,
        };
        // SAFETY: the handle is live.
        let res = unsafe { raw::tj3SetScalingFactor(self.handle.as_ptr(), scaling) };
        self.check(res)?;
        let (width, height) = (factor.scale(header.width), factor.scale(header.height));
        let pitch = width.checked_mul(3).ok_or_else(corrupt)?;
        let mut pixels = vec![0u8; pitch.checked_mul(height).ok_or_else(corrupt)?];
        // SAFETY: `pixels` holds `height` rows of `pitch` bytes, the size libjpeg-turbo
        // writes for this header and scaling factor in RGB.
        let res = unsafe {
            raw::tj3Decompress8(
                self.handle.as_ptr(),
                bytes.as_ptr(),
                bytes.len() as _,
                pixels.as_mut_ptr(),
                pitch as c_int,
                raw::TJPF_TJPF_RGB as c_int,
            )
        };
        self.check(res)?;
        Ok((pixels, width, height))
    }

    /// Turns a TurboJPEG return code into our outcome: success, a warning that the
    /// picture survives, or an error.
    fn check(&mut self, res: c_int) -> Result<(), MediaError> {
        if res == 0 {
            return Ok(());
        }
        // SAFETY: the handle is live; the string is owned by the handle and copied here.
        let (code, message) = unsafe {
            let code = raw::tj3GetErrorCode(self.handle.as_ptr());
            let message = CStr::from_ptr(raw::tj3GetErrorStr(self.handle.as_ptr()))
                .to_string_lossy()
                .into_owned();
            (code, message)
        };
        if message.contains(TRUNCATED) {
            return Err(MediaError::InvalidMedia(
                "the JPEG file is truncated: its image data ends early".into(),
            ));
        }
        if code == raw::TJERR_TJERR_WARNING as c_int {
            tracing::debug!(warning = %message, "libjpeg warning ignored, as libjpeg does");
            return Ok(());
        }
        tracing::debug!(error = %message, "libjpeg could not decode a JPEG");
        Err(corrupt())
    }
}

impl Drop for JpegDecoder {
    fn drop(&mut self) {
        // SAFETY: the handle came from tj3Init and is destroyed once.
        unsafe { raw::tj3Destroy(self.handle.as_ptr()) }
    }
}

fn corrupt() -> MediaError {
    MediaError::InvalidMedia("the JPEG data is corrupt and no decoder can read it".into())
}
