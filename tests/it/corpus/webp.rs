//! Animated WebP outputs read by libwebp's own animation decoder (`WebPAnimDecoder`,
//! what Chrome and Pillow use), not by the `image` crate's, whose compositing of
//! partly transparent frames differs: the outputs are judged as viewers show them. A
//! WebP that does not say it has alpha (`VP8X`'s flag) is shown opaque, as Pillow
//! shows it (in RGB), whatever its frames leave uncovered.

use image::RgbaImage;

/// Every frame of a WebP (one for a still) as libwebp composites it, with its delay
/// in milliseconds.
pub fn frames(bytes: &[u8]) -> Result<Vec<(RgbaImage, i32)>, String> {
    use libwebp_sys as webp;
    // SAFETY: the options are initialised by libwebp; the decoder reads `bytes` (alive
    // for the whole call) and is deleted before returning; each frame's buffer is
    // libwebp's until the next call, and is copied out before it.
    unsafe {
        let mut options: webp::WebPAnimDecoderOptions = std::mem::zeroed();
        let abi = webp::WEBP_DEMUX_ABI_VERSION as std::ffi::c_int;
        if webp::WebPAnimDecoderOptionsInitInternal(&mut options, abi) == 0 {
            return Err("no WebP decoder options".into());
        }
        options.color_mode = webp::WEBP_CSP_MODE::MODE_RGBA;
        let data = webp::WebPData {
            bytes: bytes.as_ptr(),
            size: bytes.len(),
        };
        let decoder = webp::WebPAnimDecoderNewInternal(&data, &options, abi);
        if decoder.is_null() {
            return Err("libwebp does not read the WebP".into());
        }
        let mut info: webp::WebPAnimInfo = std::mem::zeroed();
        webp::WebPAnimDecoderGetInfo(decoder, &mut info);
        let (width, height) = (info.canvas_width, info.canvas_height);
        let mut features: webp::WebPBitstreamFeatures = std::mem::zeroed();
        let read = webp::WebPGetFeaturesInternal(
            bytes.as_ptr(),
            bytes.len(),
            &mut features,
            webp::WEBP_DECODER_ABI_VERSION as _,
        );
        let opaque = read != webp::VP8StatusCode::VP8_STATUS_OK || features.has_alpha == 0;
        let mut frames = Vec::new();
        let mut before = 0;
        while webp::WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            let (mut buffer, mut timestamp) = (std::ptr::null_mut(), 0);
            if webp::WebPAnimDecoderGetNext(decoder, &mut buffer, &mut timestamp) == 0 {
                webp::WebPAnimDecoderDelete(decoder);
                return Err("a WebP frame does not decode".into());
            }
            let len = width as usize * height as usize * 4;
            let mut pixels = std::slice::from_raw_parts(buffer, len).to_vec();
            if opaque {
                pixels.chunks_exact_mut(4).for_each(|p| p[3] = 255);
            }
            frames.push((
                RgbaImage::from_raw(width, height, pixels).unwrap(),
                timestamp - before,
            ));
            before = timestamp;
        }
        webp::WebPAnimDecoderDelete(decoder);
        Ok(frames)
    }
}
