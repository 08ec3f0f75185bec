//! libwebp's animation encoder (`WebPAnimEncoder`), fed a frame at a time.

use image::RgbaImage;

use crate::media::error::MediaError;
use crate::media::image::ops::WEBP_QUALITY;

/// libwebp's animation encoder.
pub(super) struct AnimatedWebp {
    encoder: *mut libwebp_sys::WebPAnimEncoder,
    config: libwebp_sys::WebPConfig,
    timestamp_ms: f64,
    /// Each frame's delay as handed to the encoder (whole milliseconds).
    delays: Vec<i32>,
    loops: u32,
    /// Whether any frame fed has a pixel that is not opaque (see [`with_alpha_flag`]).
    transparent: bool,
}

// SAFETY: the encoder is used from one thread at a time (moved, never shared).
unsafe impl Send for AnimatedWebp {}

impl AnimatedWebp {
    pub(super) fn new(width: u32, height: u32, loops: u32) -> Result<AnimatedWebp, MediaError> {
        let failed = || MediaError::InvalidMedia("the animated WebP encoder did not start".into());
        let mut config = libwebp_sys::WebPConfig::new_with_preset(
            libwebp_sys::WebPPreset::WEBP_PRESET_DEFAULT,
            WEBP_QUALITY,
        )
        .map_err(|()| failed())?;
        // libwebp's second thread (analysis in halves, alpha beside the colour) for
        // each frame: the same bytes, 0.263 → 0.225 s for a 3 s 480×270 GIF.
        config.thread_level = 1;
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
                delays: Vec::new(),
                loops,
                transparent: false,
            })
        }
    }

    pub(super) fn add(&mut self, frame: &RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
        self.transparent = self.transparent || frame.pixels().any(|p| p[3] < 255);
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
        let start = self.timestamp_ms.round() as i32;
        self.timestamp_ms += delay_ms;
        self.delays.push(self.timestamp_ms.round() as i32 - start);
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
            let bytes = unfold_repeats(&bytes, &self.delays, self.loops).unwrap_or(bytes);
            Ok(with_alpha_flag(bytes, self.transparent))
        }
    }
}

impl Drop for AnimatedWebp {
    fn drop(&mut self) {
        // SAFETY: created by WebPAnimEncoderNewInternal, deleted once.
        unsafe { libwebp_sys::WebPAnimEncoderDelete(self.encoder) }
    }
}

/// `webp` with its `VP8X` alpha flag set when the frames fed were not all opaque.
/// libwebp's encoder sets the flag from the frames it writes, and it trims a frame to
/// the rectangle that changes: a first frame whose transparent border is trimmed away
/// leaves no frame with alpha, and readers that go by the flag (Pillow, the reference
/// of the real-file check) then show the uncovered canvas black instead of transparent.
fn with_alpha_flag(mut webp: Vec<u8>, transparent: bool) -> Vec<u8> {
    const ALPHA: u8 = 0x10;
    if transparent && webp.get(12..16) == Some(b"VP8X") && webp.len() > 20 {
        webp[20] |= ALPHA;
    }
    webp
}

/// `webp` with every frame the encoder folded into the one before (it drops a frame
/// identical to its predecessor and lengthens that one's delay) put back as a frame of
/// its own: a transparent frame blended over the canvas, which changes nothing on
/// screen but keeps the source's frame count and each frame's own delay — libwebp's
/// own device for delays too long for one frame. The frame's disposal moves to the
/// last of its fillers (which then covers the frame's rectangle), so that the frames
/// after the frame see the canvas it left, not a canvas cleared too early. Frames that were all alike come back
/// from the encoder as a still image, which becomes an animation again (playing
/// `loops` times). `None` (keep `webp`) when nothing was folded or the delays do not
/// add up to a folding.
fn unfold_repeats(webp: &[u8], delays: &[i32], loops: u32) -> Option<Vec<u8>> {
    use libwebp_sys as w;
    let data = w::WebPData {
        bytes: webp.as_ptr(),
        size: webp.len(),
    };
    // SAFETY: the mux copies `webp`; every frame taken from it is cleared after it is
    // pushed back (pushing copies it again), and the mux is deleted on every path.
    unsafe {
        let mux = w::WebPMuxCreateInternal(&data, 1, w::WEBP_MUX_ABI_VERSION as _);
        if mux.is_null() {
            return None;
        }
        let unfolded = unfold_in(mux, delays, loops);
        w::WebPMuxDelete(mux);
        unfolded
    }
}

/// # Safety
/// `mux` is a valid mux of an animation.
unsafe fn unfold_in(mux: *mut libwebp_sys::WebPMux, delays: &[i32], loops: u32) -> Option<Vec<u8>> {
    use libwebp_sys as w;
    let mut count = 0;
    w::WebPMuxNumChunks(mux, w::WebPChunkId::WEBP_CHUNK_ANMF, &mut count);
    let still = count == 0;
    let count = if still {
        1
    } else {
        usize::try_from(count).ok()?
    };
    if count >= delays.len() {
        return None;
    }
    let mut frames = Vec::with_capacity(count);
    for nth in 1..=count {
        let mut frame: w::WebPMuxFrameInfo = std::mem::zeroed();
        if w::WebPMuxGetFrame(mux, nth as u32, &mut frame) != w::WebPMuxError::WEBP_MUX_OK {
            break;
        }
        frames.push(frame);
    }
    let complete = frames.len() == count;
    if still && complete {
        let frame = &mut frames[0];
        frame.duration = delays.iter().sum();
        frame.id = w::WebPChunkId::WEBP_CHUNK_ANMF;
        frame.dispose_method = w::WebPMuxAnimDispose::WEBP_MUX_DISPOSE_NONE;
        frame.blend_method = w::WebPMuxAnimBlend::WEBP_MUX_NO_BLEND;
        let params = w::WebPMuxAnimParams {
            bgcolor: 0xFFFF_FFFF,
            loop_count: loops as _,
        };
        w::WebPMuxSetAnimationParams(mux, &params);
    }
    let groups = fold_groups(
        &frames.iter().map(|f| f.duration).collect::<Vec<_>>(),
        delays,
    );
    let mut ok = complete && groups.is_some();
    if let (true, Some(groups)) = (complete, &groups) {
        while w::WebPMuxDeleteFrame(mux, 1) == w::WebPMuxError::WEBP_MUX_OK {}
        for (frame, group) in frames.iter_mut().zip(groups) {
            frame.duration = group[0];
            let dispose = frame.dispose_method;
            let fillers = &group[1..];
            if !fillers.is_empty() {
                frame.dispose_method = w::WebPMuxAnimDispose::WEBP_MUX_DISPOSE_NONE;
            }
            ok &= w::WebPMuxPushFrame(mux, frame, 1) == w::WebPMuxError::WEBP_MUX_OK;
            let Some((&last, between)) = fillers.split_last() else {
                continue;
            };
            let cleared = dispose == w::WebPMuxAnimDispose::WEBP_MUX_DISPOSE_BACKGROUND;
            let size = |frame: &w::WebPMuxFrameInfo| {
                let mut features: w::WebPBitstreamFeatures = std::mem::zeroed();
                let read = w::WebPGetFeaturesInternal(
                    frame.bitstream.bytes,
                    frame.bitstream.size,
                    &mut features,
                    w::WEBP_DECODER_ABI_VERSION as _,
                );
                (read == w::VP8StatusCode::VP8_STATUS_OK)
                    .then_some((features.width as u32, features.height as u32))
            };
            // The pixel fills in between; the last filler disposes as the frame did,
            // over the frame's rectangle when that is cleared.
            let last_size = if cleared { size(frame) } else { Some((1, 1)) };
            let (Some(pixel), Some(cover)) = (
                transparent(1, 1),
                last_size.and_then(|(fw, fh)| transparent(fw, fh)),
            ) else {
                ok = false;
                continue;
            };
            let push = |bitstream: &[u8], delay: i32, at: (i32, i32), dispose| {
                let mut filler: w::WebPMuxFrameInfo = std::mem::zeroed();
                filler.bitstream = w::WebPData {
                    bytes: bitstream.as_ptr(),
                    size: bitstream.len(),
                };
                filler.x_offset = at.0;
                filler.y_offset = at.1;
                filler.duration = delay;
                filler.id = w::WebPChunkId::WEBP_CHUNK_ANMF;
                filler.dispose_method = dispose;
                filler.blend_method = w::WebPMuxAnimBlend::WEBP_MUX_BLEND;
                w::WebPMuxPushFrame(mux, &filler, 1) == w::WebPMuxError::WEBP_MUX_OK
            };
            let none = w::WebPMuxAnimDispose::WEBP_MUX_DISPOSE_NONE;
            for &delay in between {
                ok &= push(&pixel, delay, (0, 0), none);
            }
            let at = if cleared {
                (frame.x_offset, frame.y_offset)
            } else {
                (0, 0)
            };
            ok &= push(&cover, last, at, dispose);
        }
    }
    frames
        .iter_mut()
        .for_each(|f| w::WebPDataClear(&mut f.bitstream));
    if !ok {
        return None;
    }
    let mut out: w::WebPData = std::mem::zeroed();
    if w::WebPMuxAssemble(mux, &mut out) != w::WebPMuxError::WEBP_MUX_OK {
        return None;
    }
    let bytes = std::slice::from_raw_parts(out.bytes, out.size).to_vec();
    w::WebPDataClear(&mut out);
    Some(bytes)
}

/// Which fed delays each encoded frame holds: consecutive runs adding up to its delay,
/// the first the frame's own. `None` when they do not add up.
fn fold_groups(encoded: &[i32], fed: &[i32]) -> Option<Vec<Vec<i32>>> {
    let mut fed = fed.iter().copied().peekable();
    let mut groups = Vec::with_capacity(encoded.len());
    for (i, &total) in encoded.iter().enumerate() {
        let mut group = vec![fed.next()?];
        while group.iter().sum::<i32>() < total {
            group.push(fed.next()?);
        }
        // A last frame takes whatever is left; zero delays fold into no frame before.
        if i + 1 == encoded.len() {
            group.extend(fed.by_ref());
        }
        if group.iter().sum::<i32>() != total {
            return None;
        }
        groups.push(group);
    }
    fed.next().is_none().then_some(groups)
}

/// A lossless WebP of `width` × `height` fully transparent pixels.
fn transparent(width: u32, height: u32) -> Option<Vec<u8>> {
    let pixels = vec![0u8; width as usize * height as usize * 4];
    let mut out: *mut u8 = std::ptr::null_mut();
    // SAFETY: `pixels` holds width × height RGBA pixels; libwebp allocates `out`,
    // freed by WebPFree.
    unsafe {
        let size = libwebp_sys::WebPEncodeLosslessRGBA(
            pixels.as_ptr(),
            width as _,
            height as _,
            (width * 4) as _,
            &mut out,
        );
        if size == 0 || out.is_null() {
            return None;
        }
        let bytes = std::slice::from_raw_parts(out, size).to_vec();
        libwebp_sys::WebPFree(out as *mut std::ffi::c_void);
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::fold_groups;

    #[test]
    fn folded_delays_are_found_as_runs_that_add_up() {
        let fed = [100, 100, 100, 50, 0];
        assert_eq!(
            fold_groups(&[300, 50], &fed),
            Some(vec![vec![100, 100, 100], vec![50, 0]])
        );
        assert_eq!(
            fold_groups(&[100, 200, 50], &fed),
            Some(vec![vec![100], vec![100, 100], vec![50, 0]])
        );
        assert_eq!(fold_groups(&[250, 100], &fed), None);
        assert_eq!(fold_groups(&[100], &[100, 100]), None);
    }
}
