//! Animated GIF and WebP through `resize-image` and `image-to-webp`: every frame
//! resized and re-encoded, delays and loop count kept (decisions.md §11).
//!
//! APNG is not animated yet: its default image (which may not be a frame of the
//! animation at all) goes the still path, as Pillow and non-APNG readers show it.
//!
//! Frames stream: each is decoded (composited onto the canvas, as viewers show it),
//! resized and handed to the encoder before the next is decoded, so memory is a few
//! canvases whatever the length. The video limits apply: the canvas to the frame pixel
//! limit, the frame count and the total of the delays to theirs.
//!
//! Encoders: GIF by the `gif` crate through `image` (a palette per frame, NeuQuant);
//! animated WebP by libwebp's `WebPAnimEncoder` (lossy q80, as still WebP, alpha kept).

use std::io::Cursor;

use image::codecs::gif::{GifDecoder, GifEncoder, Repeat};
use image::codecs::webp::WebPDecoder;
use image::metadata::LoopCount;
use image::{AnimationDecoder, DynamicImage, Frames, ImageDecoder, RgbaImage};

use super::image_ops::{resize, scaled_size, WEBP_QUALITY};
use super::transcode::VideoLimits;
use super::{ImageFormat, MediaError, MediaFormat};

/// Whether `bytes` (of `format`) hold an animation of more than one frame.
pub(crate) fn is_animated(bytes: &[u8], format: MediaFormat) -> bool {
    match format {
        MediaFormat::Gif => super::gif::scan(bytes).is_ok_and(|scan| scan.frames > 1),
        MediaFormat::Webp => WebPDecoder::new(Cursor::new(bytes)).is_ok_and(|d| d.has_animation()),
        _ => false,
    }
}

/// The frames of an animation, its canvas and how often it plays.
fn open(
    bytes: &[u8],
    format: MediaFormat,
) -> Result<(Frames<'_>, (u32, u32), LoopCount), MediaError> {
    let bad = |e: image::ImageError| {
        MediaError::InvalidMedia(format!("the animated {} is damaged ({e})", format.name()))
    };
    Ok(match format {
        MediaFormat::Gif => {
            let decoder = GifDecoder::new(Cursor::new(bytes)).map_err(bad)?;
            let (size, plays) = (decoder.dimensions(), decoder.loop_count());
            (decoder.into_frames(), size, plays)
        }
        _ => {
            let decoder = WebPDecoder::new(Cursor::new(bytes)).map_err(bad)?;
            let (size, plays) = (decoder.dimensions(), decoder.loop_count());
            (decoder.into_frames(), size, plays)
        }
    })
}

/// `bytes`, an animation of `format`, with every frame scaled by `scale`, written as
/// `output` (GIF or WebP).
pub(crate) fn resize_animation(
    bytes: &[u8],
    format: MediaFormat,
    scale: f64,
    output: ImageFormat,
    limits: &VideoLimits,
    max_pixels: u64,
) -> Result<Vec<u8>, MediaError> {
    let (frames, (width, height), plays) = open(bytes, format)?;
    let canvas = u64::from(width) * u64::from(height);
    if canvas > limits.max_pixels {
        return Err(MediaError::VideoTooLarge {
            width,
            height,
            limit: limits.max_pixels,
        });
    }
    let (w, h) = scaled_size(width, height, scale, output, max_pixels)?;
    let mut encoder = Encoder::new(output, w, h, plays)?;
    let (mut count, mut elapsed_ms) = (0u64, 0f64);
    for frame in frames {
        super::cancel::checkpoint()?;
        let frame = frame.map_err(|e| {
            MediaError::InvalidMedia(format!("a frame of the {} is damaged ({e})", format.name()))
        })?;
        count += 1;
        if count > limits.max_frames {
            return Err(MediaError::TooManyFrames {
                frames: count,
                limit: limits.max_frames,
                what: "frames a video may have",
            });
        }
        let (numer, denom) = frame.delay().numer_denom_ms();
        let delay_ms = f64::from(numer) / f64::from(denom.max(1));
        elapsed_ms += delay_ms;
        if elapsed_ms / 1000.0 > limits.max_seconds {
            return Err(MediaError::VideoTooLong {
                seconds: elapsed_ms / 1000.0,
                limit: limits.max_seconds,
            });
        }
        let resized = resize(DynamicImage::ImageRgba8(frame.into_buffer()), w, h)?;
        encoder.add(resized.into_rgba8(), delay_ms)?;
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
}

impl Encoder {
    fn new(output: ImageFormat, w: u32, h: u32, plays: LoopCount) -> Result<Encoder, MediaError> {
        let failed = |e: &dyn std::fmt::Display| {
            MediaError::InvalidMedia(format!("the animation could not be encoded ({e})"))
        };
        let loops = match plays {
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
            _ => Encoder::Webp(AnimatedWebp::new(w, h, loops)?),
        })
    }

    fn add(&mut self, frame: RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
        let failed = |e: &dyn std::fmt::Display| {
            MediaError::InvalidMedia(format!("a frame could not be encoded ({e})"))
        };
        match self {
            Encoder::Gif(gif, _) => {
                let delay = image::Delay::from_numer_denom_ms(delay_ms.round() as u32, 1);
                gif.encode_frame(image::Frame::from_parts(frame, 0, 0, delay))
                    .map_err(|e| failed(&e))
            }
            Encoder::Webp(webp) => webp.add(&frame, delay_ms),
        }
    }

    fn finish(self) -> Result<Vec<u8>, MediaError> {
        match self {
            Encoder::Gif(gif, sink) => {
                drop(gif);
                Ok(sink.take())
            }
            Encoder::Webp(webp) => webp.finish(),
        }
    }
}

/// libwebp's animation encoder.
struct AnimatedWebp {
    encoder: *mut libwebp_sys::WebPAnimEncoder,
    config: libwebp_sys::WebPConfig,
    timestamp_ms: f64,
}

// SAFETY: the encoder is used from one thread at a time (moved, never shared).
unsafe impl Send for AnimatedWebp {}

impl AnimatedWebp {
    fn new(width: u32, height: u32, loops: u32) -> Result<AnimatedWebp, MediaError> {
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

    fn add(&mut self, frame: &RgbaImage, delay_ms: f64) -> Result<(), MediaError> {
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

    fn finish(self) -> Result<Vec<u8>, MediaError> {
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
