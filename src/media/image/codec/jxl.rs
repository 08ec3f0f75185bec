//! JPEG XL input, decoded by jxl-oxide (pure Rust) rather than libjxl's C++ decoder:
//! a hostile file meets bounds-checked code in this process, as every other in-process
//! decoder here is either Rust or a library fuzzed for decades; and jxl-oxide reads
//! what we need — animations (composited keyframes with their durations), embedded ICC
//! profiles (converted to sRGB through Little CMS, the CMS the rest of the service
//! uses) and the codestream's orientation (applied while the pixels are copied out, so
//! a picture comes out upright, as libheif's do).
//!
//! Limits come before pixels: [`open`] feeds the file a window at a time until the
//! image header parses, refuses a size past the pixel limit there, and only then hands
//! the decoder the rest. The decoder's own allocations are metered by an
//! [`AllocTracker`] holding what the caller's reservation allows
//! ([`BYTES_PER_PIXEL`] a pixel), so a file whose frames are larger than its header
//! (frames may lie outside the canvas) fails rather than outgrowing the reservation.
//! libjxl writes our JPEG XL outputs (`jxl_encode`).

use image::{DynamicImage, RgbImage, RgbaImage};
use jxl_oxide::{AllocTracker, EnumColourEncoding, InitializeResult, JxlImage, RenderingIntent};

use crate::media::error::MediaError;

/// What decoding takes a pixel at most, in bytes: jxl-oxide's planes are f32 (colour
/// and alpha, 16 bytes), plus the working copies of its filters and upsampling and
/// the 8-bit RGBA copied out (4). The whole server peaked at 374 MiB decoding a 12 MP
/// photo (bench/jxl.py), about 33 bytes a pixel with its own baseline; the allocation
/// meter holds the decoder to this figure, so an estimate too low fails files, not
/// the machine.
pub(crate) const BYTES_PER_PIXEL: u64 = 36;

/// What jxl-oxide keeps of each frame of an animation once it is rendered, in bytes a
/// pixel (f32 RGBA): it holds every rendered frame until the file is closed (a later
/// frame may blend onto any of them), so an animation's decoder grows with its frames.
pub(crate) const KEPT_FRAME_BYTES_PER_PIXEL: u64 = 16;

/// What the decoder may allocate besides the pixels: ICC profiles, the entropy
/// coders' tables, the group tables of a small picture.
const FIXED_BYTES: usize = 32 << 20;

/// A JPEG XL whose header has been read and whose size is within the limit; its
/// frames are loaded (not yet decoded).
pub(crate) struct JxlFile {
    image: JxlImage,
    /// The upright size (the codestream's orientation applied).
    pub width: u32,
    pub height: u32,
    /// The displayed frames (keyframes): more than one for an animation.
    pub frames: usize,
    /// How many times an animation plays (0: for ever).
    pub loops: u32,
    /// Milliseconds a tick of the animation's frame durations lasts.
    tick_ms: f64,
    /// What the decoder may take at most (its allocation meter's limit).
    pub decoder_bytes: u64,
}

/// `InvalidMedia` naming JPEG XL for a decoder error.
fn damaged(e: impl std::fmt::Display) -> MediaError {
    MediaError::InvalidMedia(format!("the JPEG XL data is damaged ({e})"))
}

/// Reads the header of `bytes`, refuses (`too_large(width, height)`) a picture past
/// `max_pixels`, then loads its frames. `InvalidMedia` for a damaged or truncated file.
pub(crate) fn open(
    bytes: &[u8],
    max_pixels: u64,
    too_large: impl Fn(u64, u64) -> MediaError,
) -> Result<JxlFile, MediaError> {
    let tracker = AllocTracker::with_limit(FIXED_BYTES);
    let mut uninit = JxlImage::builder()
        .alloc_tracker(tracker.clone())
        .build_uninit();
    let (mut at, mut window) = (0usize, 4096usize);
    let mut image = loop {
        let end = at.saturating_add(window).min(bytes.len());
        let consumed = uninit.feed_bytes(&bytes[at..end]).map_err(damaged)?;
        at += consumed;
        match uninit.try_init().map_err(damaged)? {
            InitializeResult::Initialized(image) => break image,
            InitializeResult::NeedMoreData(more) if end < bytes.len() => {
                uninit = more;
                if consumed == 0 {
                    window = window.saturating_mul(2);
                }
            }
            InitializeResult::NeedMoreData(_) => {
                return Err(MediaError::InvalidMedia(
                    "the JPEG XL ends inside its header".into(),
                ))
            }
        }
    };
    let (width, height) = (image.width(), image.height());
    let pixels = u64::from(width) * u64::from(height);
    if pixels > max_pixels {
        return Err(too_large(width.into(), height.into()));
    }
    // Capped so that adding it to the fixed part cannot wrap the tracker's counter.
    let allowed = pixels.saturating_mul(BYTES_PER_PIXEL).min(1 << 48);
    tracker.expand_limit(usize::try_from(allowed).unwrap_or(usize::MAX));
    let mut rest = &bytes[at..];
    while !rest.is_empty() && !image.is_loading_done() {
        let consumed = image.feed_bytes(rest).map_err(damaged)?;
        if consumed == 0 {
            break;
        }
        rest = &rest[consumed..];
    }
    image.finalize().map_err(damaged)?;
    if !image.is_loading_done() {
        return Err(MediaError::InvalidMedia(
            "the JPEG XL is truncated: it ends inside a frame".into(),
        ));
    }
    if image.pixel_format().has_black() {
        return Err(MediaError::InvalidMedia(
            "the JPEG XL is CMYK, which is not read".into(),
        ));
    }
    image.request_color_encoding(EnumColourEncoding::srgb(RenderingIntent::Relative));
    let animation = image.image_header().metadata.animation.as_ref();
    let loops = animation.map_or(0, |a| a.num_loops);
    let tick_ms = animation.filter(|a| a.tps_numerator > 0).map_or(0.0, |a| {
        1000.0 * f64::from(a.tps_denominator) / f64::from(a.tps_numerator)
    });
    let frames = image.num_loaded_keyframes();
    if frames == 0 {
        return Err(MediaError::InvalidMedia("the JPEG XL has no frame".into()));
    }
    let mut decoder_bytes = allowed + FIXED_BYTES as u64;
    if frames > 1 {
        let kept = (frames as u64)
            .saturating_mul(pixels)
            .saturating_mul(KEPT_FRAME_BYTES_PER_PIXEL)
            .min(1 << 48);
        tracker.expand_limit(kept as usize);
        decoder_bytes += kept;
    }
    Ok(JxlFile {
        image,
        width,
        height,
        frames,
        loops,
        tick_ms,
        decoder_bytes,
    })
}

impl JxlFile {
    /// Whether it is an animation of more than one frame.
    pub fn is_animated(&self) -> bool {
        self.frames > 1
    }

    /// The upright picture of displayed frame `index`, in sRGB, as `Rgb8` or `Rgba8`
    /// (grey pictures widened to RGB), and how long it shows in milliseconds.
    pub fn frame(&self, index: usize) -> Result<(DynamicImage, f64), MediaError> {
        let render = self.image.render_frame(index).map_err(damaged)?;
        let delay_ms = f64::from(render.duration()) * self.tick_ms;
        let mut stream = render.stream();
        let (width, height, channels) = (stream.width(), stream.height(), stream.channels());
        let len = width as usize * height as usize * channels as usize;
        let mut buf = vec![0u8; len];
        stream.write_to_buffer(&mut buf);
        let wrong = || damaged("a frame's pixels do not fill it");
        let image = match channels {
            1 => DynamicImage::ImageLuma8(
                image::GrayImage::from_raw(width, height, buf).ok_or_else(wrong)?,
            )
            .into_rgb8()
            .into(),
            2 => DynamicImage::ImageLumaA8(
                image::GrayAlphaImage::from_raw(width, height, buf).ok_or_else(wrong)?,
            )
            .into_rgba8()
            .into(),
            3 => RgbImage::from_raw(width, height, buf)
                .ok_or_else(wrong)?
                .into(),
            4 => RgbaImage::from_raw(width, height, buf)
                .ok_or_else(wrong)?
                .into(),
            n => return Err(damaged(format!("{n} channels"))),
        };
        Ok((image, delay_ms))
    }

    /// The first frame: the still picture.
    pub fn decode(&self) -> Result<DynamicImage, MediaError> {
        Ok(self.frame(0)?.0)
    }

    /// Every displayed frame in turn, as the `image` crate's animation decoders give
    /// them (each the whole canvas, RGBA).
    pub fn into_frames(self) -> image::Frames<'static> {
        let frames = (0..self.frames).map(move |index| {
            let (picture, delay_ms) = self.frame(index).map_err(|e| {
                image::ImageError::Decoding(image::error::DecodingError::new(
                    image::error::ImageFormatHint::Name("JPEG XL".into()),
                    e.to_string(),
                ))
            })?;
            let delay = image::Delay::from_numer_denom_ms((delay_ms * 1000.0).round() as u32, 1000);
            Ok(image::Frame::from_parts(picture.into_rgba8(), 0, 0, delay))
        });
        image::Frames::new(Box::new(frames))
    }
}

/// Whether `bytes` hold an animated JPEG XL (of more than one frame); false for a file
/// that cannot be read.
pub(crate) fn is_animated(bytes: &[u8], max_pixels: u64) -> bool {
    let too_large = |_, _| MediaError::InvalidMedia(String::new());
    open(bytes, max_pixels, too_large).is_ok_and(|file| file.is_animated())
}
