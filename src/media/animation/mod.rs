//! Animated GIF, WebP and APNG through the image commands and `image-to-webp`: every
//! frame transformed (`media::image`) and re-encoded, delays and loop count kept
//! (docs/API.md, "Animated images"); the same frames feed `gif-to-video` for WebP and
//! APNG.
//!
//! Frames stream: each is decoded (composited onto the canvas, as viewers show it),
//! resized and handed to the encoder before the next is decoded, so memory is a few
//! canvases whatever the length. The video limits apply: the canvas to the frame pixel
//! limit, the frame count (the declared count first, where the format declares one)
//! and the total of the delays to theirs.
//!
//! An APNG's default image that is not a frame of the animation (see `apng.rs`) stays
//! the APNG output's default image, so still viewers and Pillow show what they showed
//! of the source; an animated WebP (and a video) has no place for such a picture, so
//! it is left out, as players leave it out: as a first frame "lasting 0 ms" browsers
//! would flash it for 100 ms.
//!
//! Encoders: GIF by the `gif` crate through `image` (a palette per frame, NeuQuant);
//! animated WebP by libwebp's `WebPAnimEncoder` (lossy q80, as still WebP, alpha kept);
//! APNG by the `png` crate (whole RGBA frames, fast deflate); an AVIF image sequence
//! by libavif (`avif.rs`).

use std::io::Cursor;
use std::sync::Arc;

use image::codecs::gif::{GifEncoder, Repeat};
use image::codecs::webp::WebPDecoder;
use image::metadata::LoopCount;
use image::{DynamicImage, RgbaImage};

use crate::format::{ImageFormat, MediaFormat};
use crate::media::error::MediaError;
use crate::media::image::codec::apng::ApngWriter;
use crate::media::image::pipeline::{check_format_size, settle, Settled};
use crate::media::image::{output_size, peak, FrameOp};
use crate::media::limits::VideoLimits;
use crate::media::memory::MemoryBudget;

mod reader;
mod sampled;

pub(crate) use reader::{open, Animation};

/// Whether `bytes` (of `format`) hold an animation of more than one frame.
pub(crate) fn is_animated(bytes: &[u8], format: MediaFormat) -> bool {
    match format {
        MediaFormat::Gif => {
            crate::media::image::codec::gif::scan(bytes).is_ok_and(|scan| scan.frames > 1)
        }
        MediaFormat::Webp => WebPDecoder::new(Cursor::new(bytes)).is_ok_and(|d| d.has_animation()),
        MediaFormat::Png => crate::media::image::codec::apng::is_animated(bytes),
        MediaFormat::Jxl => crate::media::image::codec::jxl::is_animated(bytes, u64::MAX),
        _ => false,
    }
}

/// `bytes`, an animation of `format`, with `ops` applied to every frame (the same box
/// for every frame: choices made from the pixels are made once, from the first
/// frame, or from frames sampled across it for `gravity: face`, see `sampled`), written
/// as `output` (GIF, WebP, an AVIF sequence or, for an APNG, PNG).
/// The output size and the format's limit are checked before any frame is decoded.
pub(crate) fn transform_animation(
    bytes: &[u8],
    format: MediaFormat,
    ops: &[Box<dyn FrameOp>],
    output: ImageFormat,
    (limits, max_pixels, memory): (&VideoLimits, u64, &Arc<MemoryBudget>),
) -> Result<Vec<u8>, MediaError> {
    let mut animation = open(bytes, format, limits)?;
    let size = output_size(ops, animation.size, max_pixels)?;
    check_format_size(size, output)?;
    let peak = peak::animation(bytes.len() as u64, animation.size, animation.declared, ops)
        + animation.decoder_bytes;
    let (w, h) = animation.size;
    let what = format!("Transforming a {w}x{h} animation");
    let _lease = memory.reserve(peak, &what)?;
    let mut encoder = Encoder::new(output, size, &animation)?;
    // Only an APNG has a place for a picture outside the animation; an animated WebP
    // would play it as a frame (browsers show a 0 ms frame for 100 ms: a flash of a
    // picture the source never shows), so it is left out there, as players leave it.
    let default_image = animation
        .default_image
        .take()
        .filter(|_| output == ImageFormat::Png);
    let sampled = sampled::settled(bytes, format, ops, (limits, memory))?;
    let (settled, first) = match (animation.next().transpose()?, sampled) {
        (Some((rgba, delay_ms)), Some(settled)) => {
            let first = settled.apply(DynamicImage::ImageRgba8(rgba))?;
            (settled, Some((first, delay_ms)))
        }
        (Some((rgba, delay_ms)), None) => {
            let (settled, first) = settle(ops, DynamicImage::ImageRgba8(rgba))?;
            (settled, Some((first, delay_ms)))
        }
        (None, _) => (Settled::unsettled(ops), None),
    };
    if let Some(default) = default_image {
        let image = settled.apply(DynamicImage::ImageRgba8(default))?;
        encoder.add(image.into_rgba8(), 0.0)?;
    }
    if let Some((first, delay_ms)) = first {
        encoder.add(first.into_rgba8(), delay_ms)?;
    }
    for frame in &mut animation {
        let (rgba, delay_ms) = frame?;
        let image = settled.apply(DynamicImage::ImageRgba8(rgba))?;
        encoder.add(image.into_rgba8(), delay_ms)?;
    }
    encoder.finish()
}

/// Where the GIF encoder writes: it gives its writer back only by being dropped (which
/// writes the file's end), so the bytes are shared with it.
#[derive(Clone, Default)]
struct Sink(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    fn take(self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

/// The encoder of one output format, fed a frame at a time.
enum Encoder {
    Gif(GifEncoder<Sink>, Sink),
    Webp(AnimatedWebp),
    Apng(ApngWriter<Sink>, Sink),
    Avif(AnimatedAvif),
    Jxl(JxlWriter),
}

impl Encoder {
    fn new(output: ImageFormat, (w, h): (u32, u32), of: &Animation) -> Result<Encoder, MediaError> {
        let failed = |e: &dyn std::fmt::Display| {
            MediaError::InvalidMedia(format!("the animation could not be encoded ({e})"))
        };
        let loops = match of.plays {
            LoopCount::Infinite => 0,
            LoopCount::Finite(n) => n.get(),
        };
        Ok(match output {
            ImageFormat::Gif => {
                let sink = Sink::default();
                let mut gif = GifEncoder::new_with_speed(sink.clone(), 10);
                let repeat = if loops == 0 {
                    Repeat::Infinite
                } else {
                    Repeat::Finite(loops.min(u32::from(u16::MAX)) as u16)
                };
                gif.set_repeat(repeat).map_err(|e| failed(&e))?;
                Encoder::Gif(gif, sink)
            }
            ImageFormat::Png => {
                let sink = Sink::default();
                let frames = u32::try_from(of.declared.unwrap_or(0)).unwrap_or(u32::MAX);
                let separate = of.default_image.is_some();
                let apng = ApngWriter::new(
                    sink.clone(),
                    (w, h),
                    png::ColorType::Rgba,
                    frames,
                    loops,
                    separate,
                )
                .map_err(|e| failed(&e))?;
                Encoder::Apng(apng, sink)
            }
            ImageFormat::Avif => Encoder::Avif(AnimatedAvif::new(w, h, loops)?),
            ImageFormat::Jxl => {
                let boxes = Boxes::default();
                Encoder::Jxl(JxlWriter::new((w, h), true, Some(loops), None, &boxes)?)
            }
            _ => Encoder::Webp(AnimatedWebp::new(w, h, loops)?),
        })
    }

    fn add(&mut self, mut frame: RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
        let failed = |e: &dyn std::fmt::Display| {
            MediaError::InvalidMedia(format!("a frame could not be encoded ({e})"))
        };
        match self {
            Encoder::Gif(gif, _) => {
                crate::media::image::ops::gif_transparency(&mut frame);
                let delay = image::Delay::from_numer_denom_ms(delay_ms.round() as u32, 1);
                gif.encode_frame(image::Frame::from_parts(frame, 0, 0, delay))
                    .map_err(|e| failed(&e))
            }
            Encoder::Webp(webp) => webp.add(&frame, delay_ms),
            Encoder::Avif(avif) => avif.add(frame, delay_ms),
            Encoder::Jxl(jxl) => jxl.add(frame.as_raw(), delay_ms),
            Encoder::Apng(apng, _) => apng.add(frame.as_raw(), delay_ms).map_err(|e| failed(&e)),
        }
    }

    fn finish(self) -> Result<Vec<u8>, MediaError> {
        match self {
            Encoder::Gif(gif, sink) => {
                drop(gif);
                Ok(sink.take())
            }
            Encoder::Webp(webp) => webp.finish(),
            Encoder::Avif(avif) => avif.finish(),
            Encoder::Jxl(jxl) => jxl.finish(),
            Encoder::Apng(apng, sink) => {
                apng.finish().map_err(|e| {
                    MediaError::InvalidMedia(format!("the APNG could not be finished ({e})"))
                })?;
                Ok(sink.take())
            }
        }
    }
}

mod avif;
mod avif_loop;
pub(crate) mod pixels;
mod webp;
use crate::media::image::codec::jxl_encode::{Boxes, JxlWriter};
use avif::AnimatedAvif;
use webp::AnimatedWebp;
