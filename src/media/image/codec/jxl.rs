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

/// What decoding a whole frame takes a pixel at most, in bytes: jxl-oxide's planes
/// are f32, and it keeps its render of the frame while converting a copy of it to
/// sRGB. Measured (the process's peak RSS over a decode, less its baseline, with the
/// 8-bit copy out made after the decoder is dropped): 24.8–25.1 bytes a pixel for
/// lossy RGB photos of 12, 24 and 48 MP, 26.0–26.3 for other efforts, distances and
/// lossless RGBA at 4 MP, 30.0 for lossy RGBA; 32 with a margin. The allocation
/// meter holds the decoder to it, so an estimate too low fails a file
/// (`too_much_work`), not the machine.
pub(crate) const BYTES_PER_PIXEL: u64 = 32;

/// Stills of more pixels than this are rendered in strips of rows
/// (`jxl_pixels::in_strips`): whole, 14 MP take up to 448 MB at [`BYTES_PER_PIXEL`].
const WHOLE_MAX_PIXELS: u64 = 14_000_000;

/// What one strip's render covers at most, in pixels, the groups on either side of
/// it included: 384 MB of planes at [`BYTES_PER_PIXEL`].
const STRIP_RENDER_PIXELS: u64 = 12_000_000;

/// What the decoder takes a pixel of the whole picture besides a strip's render, in
/// strips: the LF image (a 64th of the pixels, f32), frame tables.
const STRIPS_SLACK_PER_PIXEL: u64 = 1;

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
    /// Rows a strip of a large still is rendered in (`None`: the frame whole).
    strip_rows: Option<u32>,
    /// Channels the picture comes out with (3 or 4).
    channels: u64,
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
    open_metered(bytes, max_pixels, (BYTES_PER_PIXEL, FIXED_BYTES), too_large)
}

/// [`open`] with the allocation meter holding the decoder to `per_pixel` bytes a
/// pixel and `fixed` bytes besides.
fn open_metered(
    bytes: &[u8],
    max_pixels: u64,
    (per_pixel, fixed): (u64, usize),
    too_large: impl Fn(u64, u64) -> MediaError,
) -> Result<JxlFile, MediaError> {
    let tracker = AllocTracker::with_limit(fixed);
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
    let allowed = pixels.saturating_mul(per_pixel).min(1 << 48);
    tracker.expand_limit(usize::try_from(allowed).unwrap_or(usize::MAX));
    let metered = |e: Box<dyn std::error::Error + Send + Sync>| {
        let allowed = allowed + fixed as u64;
        past_the_meter(&*e, allowed, (width, height)).unwrap_or_else(|| damaged(e))
    };
    let mut rest = &bytes[at..];
    while !rest.is_empty() && !image.is_loading_done() {
        let consumed = image.feed_bytes(rest).map_err(metered)?;
        if consumed == 0 {
            break;
        }
        rest = &rest[consumed..];
    }
    image.finalize().map_err(metered)?;
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
    let mut decoder_bytes = allowed + fixed as u64;
    let group = image
        .frame_header(0)
        .map_or(256, |header| header.group_dim());
    // Only pictures without extra channels: jxl-oxide 0.12 panics cropping one (an
    // alpha plane) along the picture's bottom edge.
    let plain = image.image_header().metadata.ec_info.is_empty();
    let strip_rows =
        (frames == 1 && plain && pixels > WHOLE_MAX_PIXELS).then(|| strip_rows(width, group));
    if let Some(rows) = strip_rows {
        let strip = striped_bytes(width, height, rows, group);
        if strip < allowed {
            // Loading took a fraction of a byte a pixel: the strips' limit holds.
            tracker
                .shrink_limit((allowed - strip) as usize)
                .map_err(|refused| {
                    let refused: Box<dyn std::error::Error + Send + Sync> = Box::new(refused);
                    metered(refused)
                })?;
            decoder_bytes = strip + fixed as u64;
        }
    }
    if frames > 1 {
        let kept = (frames as u64)
            .saturating_mul(pixels)
            .saturating_mul(KEPT_FRAME_BYTES_PER_PIXEL)
            .min(1 << 48);
        tracker.expand_limit(kept as usize);
        decoder_bytes += kept;
    }
    let channels = if image.pixel_format().has_alpha() {
        4
    } else {
        3
    };
    Ok(JxlFile {
        image,
        width,
        height,
        frames,
        loops,
        tick_ms,
        decoder_bytes,
        strip_rows,
        channels,
    })
}

/// Upright rows a strip of a `width`-wide still holds: whole groups (`group` rows),
/// as many as keep its render, with a group on either side, within
/// [`STRIP_RENDER_PIXELS`]; one group at least.
fn strip_rows(width: u32, group: u32) -> u32 {
    let group = u64::from(group.max(1));
    let rendered_rows = STRIP_RENDER_PIXELS / u64::from(width.max(1));
    let rows = rendered_rows.saturating_sub(2 * group) / group * group;
    rows.max(group).min(u64::from(u32::MAX)) as u32
}

/// What the decoder may take rendering a `width` × `height` still in strips of
/// `rows`: a strip's render with a group of rows on either side, and the slack.
fn striped_bytes(width: u32, height: u32, rows: u32, group: u32) -> u64 {
    let rendered_rows = (u64::from(rows) + 2 * u64::from(group)).min(u64::from(height));
    let pixels = u64::from(width) * u64::from(height);
    u64::from(width) * rendered_rows * BYTES_PER_PIXEL + pixels * STRIPS_SLACK_PER_PIXEL
}

impl JxlFile {
    /// Whether it is an animation of more than one frame.
    pub fn is_animated(&self) -> bool {
        self.frames > 1
    }

    /// The upright picture of displayed frame `index`, in sRGB, as `Rgb8` or `Rgba8`
    /// (grey pictures widened to RGB), and how long it shows in milliseconds.
    pub fn frame(&self, index: usize) -> Result<(DynamicImage, f64), MediaError> {
        let render = self.image.render_frame(index).map_err(|e| self.failed(e))?;
        let delay_ms = f64::from(render.duration()) * self.tick_ms;
        let layout = super::jxl_pixels::Layout::of(&self.image, index);
        let pixels = super::jxl_pixels::copy_out(&layout, &render);
        Ok((picture(pixels)?, delay_ms))
    }

    /// The first frame: the still picture. The decoder is dropped once the frame is
    /// rendered (it keeps its own render of the frame and the frame's data), so the
    /// copy out into 8 bits is made beside the rendered planes alone.
    pub fn decode(mut self) -> Result<DynamicImage, MediaError> {
        if let Some(rows) = self.strip_rows {
            let (allowed, size) = (self.decoder_bytes, (self.width, self.height));
            let failed = |e: Box<dyn std::error::Error + Send + Sync>| {
                past_the_meter(&*e, allowed, size).unwrap_or_else(|| damaged(e))
            };
            return picture(super::jxl_pixels::in_strips(&mut self.image, rows, failed)?);
        }
        let render = self.image.render_frame(0).map_err(|e| self.failed(e))?;
        let layout = super::jxl_pixels::Layout::of(&self.image, 0);
        drop(self.image);
        picture(super::jxl_pixels::copy_out(&layout, &render))
    }

    /// Bytes a pixel decoding the still takes at most: [`BYTES_PER_PIXEL`] for a frame
    /// rendered whole; in strips, a strip's render and the slack spread over the
    /// picture, and the 8-bit picture they are copied into.
    pub fn decoding_bytes_per_pixel(&self) -> u64 {
        let pixels = u64::from(self.width) * u64::from(self.height);
        match self.strip_rows {
            None => BYTES_PER_PIXEL,
            Some(_) => (self.decoder_bytes.div_ceil(pixels.max(1))) + self.channels,
        }
    }

    /// `MemoryTooLarge` (`too_much_work`) when the decoder went past what its
    /// allocation meter allowed, else `InvalidMedia` naming JPEG XL.
    fn failed(&self, e: Box<dyn std::error::Error + Send + Sync>) -> MediaError {
        past_the_meter(&*e, self.decoder_bytes, (self.width, self.height))
            .unwrap_or_else(|| damaged(e))
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

/// An 8-bit picture of `channels` (grey, grey+alpha, RGB, RGBA) samples a pixel, as
/// `Rgb8` or `Rgba8`.
fn picture(
    (width, height, channels, buf): (u32, u32, u32, Vec<u8>),
) -> Result<DynamicImage, MediaError> {
    let wrong = || damaged("a frame's pixels do not fill it");
    Ok(match channels {
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
    })
}

/// `MemoryTooLarge` when `e` is (or was caused by) the allocation meter refusing an
/// allocation past `allowed` bytes: the picture needs more than the reservation made
/// for it, which is too much work rather than a damaged file.
fn past_the_meter(
    e: &(dyn std::error::Error + 'static),
    allowed: u64,
    (width, height): (u32, u32),
) -> Option<MediaError> {
    let mut cause = Some(e);
    while let Some(error) = cause {
        if let Some(refused) = error.downcast_ref::<jxl_grid::OutOfMemory>() {
            return Some(MediaError::MemoryTooLarge {
                what: format!("Decoding a {width}x{height} JPEG XL"),
                bytes: allowed.saturating_add(refused.bytes() as u64),
                limit: allowed,
            });
        }
        cause = error.source();
    }
    None
}

/// Whether `bytes` hold an animated JPEG XL (of more than one frame); false for a file
/// that cannot be read.
pub(crate) fn is_animated(bytes: &[u8], max_pixels: u64) -> bool {
    let too_large = |_, _| MediaError::InvalidMedia(String::new());
    open(bytes, max_pixels, too_large).is_ok_and(|file| file.is_animated())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::image::codec::jxl_encode::{encode_at, Boxes};

    fn noisy_jxl(width: u32, height: u32) -> Vec<u8> {
        let picture = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([((x * 7) ^ (y * 3)) as u8, (y * 5) as u8, (x + y) as u8])
        });
        encode_at(&picture.into(), Some(90), &Boxes::default()).unwrap()
    }

    #[test]
    fn a_decoder_past_its_allocation_meter_is_too_much_work_not_damaged_media() {
        let bytes = noisy_jxl(256, 256);
        let too_large = |_, _| MediaError::InvalidMedia("too large".into());
        let held =
            open_metered(&bytes, u64::MAX, (1, 1 << 16), too_large).and_then(JxlFile::decode);
        let refused = held.expect_err("1 byte a pixel is not enough");
        assert_eq!(
            refused.code(),
            crate::error_code::Code::TooMuchWork,
            "{refused}"
        );
        assert!(open(&bytes, u64::MAX, too_large).unwrap().decode().is_ok());
    }

    #[test]
    fn a_still_past_14_mp_is_charged_a_strips_share_and_a_smaller_one_the_whole() {
        assert_eq!(strip_rows(6000, 256), 1280);
        assert_eq!(strip_rows(8000, 256), 768);
        assert_eq!(strip_rows(100_000, 256), 256);
        // 24 MP in strips of 1280 rows: 6000 × 1792 rows × 32 + 24 MB, 368 MB.
        assert_eq!(striped_bytes(6000, 4000, 1280, 256), 368_064_000);
        let small = open(&noisy_jxl(64, 48), u64::MAX, |_, _| unreachable!()).unwrap();
        assert_eq!(
            (small.strip_rows, small.decoding_bytes_per_pixel()),
            (None, 32)
        );
    }
}
