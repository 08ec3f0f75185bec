//! libwebp's animation encoder (`WebPAnimEncoder`), fed a frame at a time.

use image::RgbaImage;

use super::super::image_ops::WEBP_QUALITY;
use super::super::MediaError;

/// libwebp's animation encoder.
pub(super) struct AnimatedWebp {
    encoder: *mut libwebp_sys::WebPAnimEncoder,
    config: libwebp_sys::WebPConfig,
    timestamp_ms: f64,
}

// SAFETY: the encoder is used from one thread at a time (moved, never shared).
unsafe impl Send for AnimatedWebp {}

impl AnimatedWebp {
    pub(super) fn new(width: u32, height: u32, loops: u32) -> Result<AnimatedWebp, MediaError> {
        let failed = || MediaError::InvalidMedia("the animated WebP encoder did not start".into());
        let config = libwebp_sys::WebPConfig::new_with_preset(
            libwebp_sys::WebPPreset::WEBP_PRESET_DEFAULT,
            WEBP_QUALITY,
        )
        .map_err(|()| failed())?;
        // SAFETY: the options are initialised by libwebp before use; the encoder is
        // deleted in Drop.
        unsafe {
            let mut options: libwebp_sys::WebPAnimEncoderOptions = std::mem::zeroed();
            let abi = libwebp_sys::WEBP_MUX_ABI_VERSION as std::ffi::c_int;
            if libwebp_sys::WebPAnimEncoderOptionsInitInternal(&mut options, abi) == 0 {
                return Err(failed());
            }
            options.anim_params.loop_count = loops as std::ffi::c_int;
            options.allow_mixed = 0;
            let encoder =
                libwebp_sys::WebPAnimEncoderNewInternal(width as _, height as _, &options, abi);
            if encoder.is_null() {
                return Err(failed());
            }
            Ok(AnimatedWebp {
                encoder,
                config,
                timestamp_ms: 0.0,
            })
        }
    }

    pub(super) fn add(&mut self, frame: &RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
        // SAFETY: the picture imports `frame` (width × height RGBA) and is freed here.
        unsafe {
            let mut picture = libwebp_sys::WebPPicture::new()
                .map_err(|()| MediaError::InvalidMedia("no WebP picture".into()))?;
            picture.use_argb = 1;
            picture.width = frame.width() as _;
            picture.height = frame.height() as _;
            let imported = libwebp_sys::WebPPictureImportRGBA(
                &mut picture,
                frame.as_raw().as_ptr(),
                (frame.width() * 4) as _,
            );
            let added = imported != 0
                && libwebp_sys::WebPAnimEncoderAdd(
                    self.encoder,
                    &mut picture,
                    self.timestamp_ms.round() as _,
                    &self.config,
                ) != 0;
            libwebp_sys::WebPPictureFree(&mut picture);
            if !added {
                return Err(MediaError::InvalidMedia(
                    "a frame could not be encoded as WebP".into(),
                ));
            }
        }
        self.timestamp_ms += delay_ms;
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Vec<u8>, MediaError> {
        // SAFETY: the last call marks the end time; the assembled data is copied and
        // freed by libwebp's own clear.
        unsafe {
            let end = self.timestamp_ms.round() as _;
            libwebp_sys::WebPAnimEncoderAdd(
                self.encoder,
                std::ptr::null_mut(),
                end,
                std::ptr::null(),
            );
            let mut data: libwebp_sys::WebPData = std::mem::zeroed();
            if libwebp_sys::WebPAnimEncoderAssemble(self.encoder, &mut data) == 0 {
                return Err(MediaError::InvalidMedia(
                    "the animated WebP could not be assembled".into(),
                ));
            }
            let bytes = std::slice::from_raw_parts(data.bytes, data.size).to_vec();
            libwebp_sys::WebPDataClear(&mut data);
            Ok(bytes)
        }
    }
}

impl Drop for AnimatedWebp {
    fn drop(&mut self) {
        // SAFETY: created by WebPAnimEncoderNewInternal, deleted once.
        unsafe { libwebp_sys::WebPAnimEncoderDelete(self.encoder) }
    }
}
