//! Animated AVIF: an AV1 image sequence through libavif (`avifEncoderAddImage` a
//! frame at a time, then `avifEncoderFinish`), at the settings of a still AVIF
//! (`media::avif`) but libaom's speed, each frame lasting its own delay in
//! milliseconds.
//!
//! Every frame carries an alpha plane: libavif fixes at the first frame whether the
//! sequence has alpha, and a later frame of a GIF may be transparent where the first
//! is not; an opaque alpha plane costs a few bytes a frame (lossless, constant).

use image::{DynamicImage, RgbaImage};

use crate::media::animation::avif_loop::with_loop_count;
use crate::media::error::MediaError;
use crate::media::image::codec::avif::{failed, to_yuv, AvifEncoder};
use crate::media::image::codec::sys::avif::{
    avifEncoderAddImage, avifEncoderFinish, AVIF_ADD_IMAGE_FLAG_NONE, AVIF_RESULT_OK,
};

/// Ticks per second of the sequence: delays are whole milliseconds in every source
/// format but APNG, whose fractions round to the nearest millisecond.
const TIMESCALE: u64 = 1000;

/// libaom's speed for a sequence: a still's 7 makes libavif 0.11 run libaom 3.6 in
/// its real-time mode for the frames after the first, where it crashes (a
/// segmentation fault at 7, a failed rate-control assertion at 8, with the fixed
/// quantizer); 6 is the fastest good-quality speed.
const SEQUENCE_SPEED: std::ffi::c_int = 6;

/// libavif's encoder for an image sequence, fed a frame at a time.
pub(super) struct AnimatedAvif {
    encoder: AvifEncoder,
    /// How many times the animation plays; 0 for ever.
    loops: u32,
    /// The end of the frames so far, in milliseconds, unrounded, so that rounding
    /// each frame's delay never drifts the whole.
    elapsed_ms: f64,
    /// The same end as written, in ticks.
    written: u64,
}

// SAFETY: the encoder is used from one thread at a time (moved, never shared).
unsafe impl Send for AnimatedAvif {}

impl AnimatedAvif {
    pub(super) fn new(_width: u32, _height: u32, loops: u32) -> Result<AnimatedAvif, MediaError> {
        let encoder = AvifEncoder::new()?;
        // SAFETY: a live encoder; `timescale` is a field of libavif's own struct.
        unsafe {
            (*encoder.encoder).timescale = TIMESCALE;
            (*encoder.encoder).speed = SEQUENCE_SPEED;
        }
        Ok(AnimatedAvif {
            encoder,
            loops,
            elapsed_ms: 0.0,
            written: 0,
        })
    }

    pub(super) fn add(&mut self, frame: RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
        let bands = crate::media::cores::band_count(frame.height(), 128) as u32;
        let picture = to_yuv(&DynamicImage::ImageRgba8(frame), bands)?;
        self.elapsed_ms += delay_ms.max(0.0);
        let end = (self.elapsed_ms * TIMESCALE as f64 / 1000.0).round() as u64;
        // A frame of no delay lasts one tick: libavif gives it that anyway.
        let ticks = end.saturating_sub(self.written).max(1);
        self.written += ticks;
        // SAFETY: live encoder and picture; libavif copies what it keeps.
        let added = unsafe {
            avifEncoderAddImage(
                self.encoder.encoder,
                picture.0,
                ticks,
                AVIF_ADD_IMAGE_FLAG_NONE as _,
            )
        };
        if added != AVIF_RESULT_OK {
            return Err(failed("a frame", added));
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Vec<u8>, MediaError> {
        // SAFETY: a live encoder with at least one frame; the output is freed with it.
        let finished = unsafe { avifEncoderFinish(self.encoder.encoder, &mut self.encoder.output) };
        if finished != AVIF_RESULT_OK {
            return Err(failed("the sequence", finished));
        }
        with_loop_count(&self.encoder.bytes(), self.loops)
    }
}
