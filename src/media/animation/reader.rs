//! Reading an animation: its frames, each the whole canvas, as the limits allow them.

use std::io::Cursor;

use image::codecs::webp::WebPDecoder;
use image::metadata::LoopCount;
use image::{AnimationDecoder, Frames, ImageDecoder, RgbaImage};

use crate::format::MediaFormat;
use crate::media::animation::pixels;
use crate::media::error::MediaError;
use crate::media::image::codec::apng::ApngFrames;
use crate::media::image::codec::gif::frames::GifFrames;
use crate::media::limits::VideoLimits;

/// An animation's frames as the limits allow them: each the whole canvas (RGBA) and
/// its delay in milliseconds. `TooManyFrames` and `VideoTooLong` as soon as a frame
/// passes them, `InvalidMedia` for a damaged frame.
pub(crate) struct Animation<'a> {
    frames: Frames<'a>,
    format: MediaFormat,
    limits: VideoLimits,
    count: u64,
    elapsed_ms: f64,
    /// The canvas.
    pub size: (u32, u32),
    pub plays: LoopCount,
    /// The frame count the file states before its frames (APNG's `acTL`, WebP's
    /// `ANMF` chunks, a GIF's image descriptors).
    pub declared: Option<u64>,
    /// What the decoder keeps besides the frame it hands out (a JPEG XL's: every
    /// frame it rendered); 0 for the formats decoded a frame at a time.
    pub decoder_bytes: u64,
    /// An APNG's default image when it is not a frame of the animation.
    pub default_image: Option<RgbaImage>,
    /// The embedded ICC profile's conversion to sRGB, applied to every frame as to a
    /// still (colour.rs).
    to_srgb: Option<lcms2::Transform<u8, u8>>,
}

/// Opens an animation of `format`, checking its canvas (and declared frame count)
/// against `limits` before any frame is decoded.
pub(crate) fn open<'a>(
    bytes: &'a [u8],
    format: MediaFormat,
    limits: &VideoLimits,
) -> Result<Animation<'a>, MediaError> {
    let bad = |e: image::ImageError| {
        MediaError::InvalidMedia(format!("the animated {} is damaged ({e})", format.name()))
    };
    let mut icc = None;
    let mut decoder_bytes = 0;
    let (frames, size, plays, declared, mut default_image) = match format {
        MediaFormat::Gif => {
            let too_large = |width, height| MediaError::VideoTooLarge {
                width,
                height,
                limit: limits.max_pixels,
            };
            let gif = GifFrames::open(bytes, limits.max_pixels, too_large)?;
            let (size, plays, frames) = (gif.size, gif.plays, Some(gif.frames));
            (Frames::new(Box::new(gif)), size, plays, frames, None)
        }
        MediaFormat::Png => {
            let max_bytes = limits.max_pixels.saturating_mul(8).saturating_add(64 << 20);
            let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
            let mut apng = ApngFrames::open(bytes, max_bytes).map_err(bad)?;
            let default_image = apng.default_image.take();
            icc = apng.icc_profile.take();
            let (size, plays) = (apng.dimensions(), apng.plays);
            let declared = Some(u64::from(apng.declared));
            (
                Frames::new(Box::new(apng)),
                size,
                plays,
                declared,
                default_image,
            )
        }
        MediaFormat::Jxl => {
            let too_large = |width, height| MediaError::VideoTooLarge {
                width: u32::try_from(width).unwrap_or(u32::MAX),
                height: u32::try_from(height).unwrap_or(u32::MAX),
                limit: limits.max_pixels,
            };
            let file = crate::media::image::codec::jxl::open(bytes, limits.max_pixels, too_large)?;
            let size = (file.width, file.height);
            let plays = match std::num::NonZeroU32::new(file.loops) {
                Some(n) => LoopCount::Finite(n),
                None => LoopCount::Infinite,
            };
            let declared = Some(file.frames as u64);
            decoder_bytes = file.decoder_bytes;
            (file.into_frames(), size, plays, declared, None)
        }
        _ => {
            let mut decoder = WebPDecoder::new(Cursor::new(bytes)).map_err(bad)?;
            let (size, plays) = (decoder.dimensions(), decoder.loop_count());
            icc = decoder.icc_profile().ok().flatten();
            let declared = Some(pixels::webp_frame_count(bytes));
            (decoder.into_frames(), size, plays, declared, None)
        }
    };
    let (width, height) = size;
    if u64::from(width) * u64::from(height) > limits.max_pixels {
        return Err(MediaError::VideoTooLarge {
            width,
            height,
            limit: limits.max_pixels,
        });
    }
    if let Some(frames) = declared.filter(|&n| n > limits.max_frames) {
        return Err(too_many(frames, limits));
    }
    let to_srgb = icc
        .as_deref()
        .and_then(crate::media::image::colour::rgba_to_srgb);
    if let (Some(transform), Some(image)) = (&to_srgb, &mut default_image) {
        transform.transform_in_place(image);
    }
    Ok(Animation {
        frames,
        format,
        limits: *limits,
        count: 0,
        elapsed_ms: 0.0,
        size,
        plays,
        declared,
        decoder_bytes,
        default_image,
        to_srgb,
    })
}

impl Iterator for Animation<'_> {
    type Item = Result<(RgbaImage, f64), MediaError>;

    fn next(&mut self) -> Option<Self::Item> {
        let frame = self.frames.next()?;
        Some(self.checked(frame))
    }
}

impl Animation<'_> {
    fn checked(
        &mut self,
        frame: image::ImageResult<image::Frame>,
    ) -> Result<(RgbaImage, f64), MediaError> {
        crate::media::cancel::checkpoint()?;
        let name = self.format.name();
        let frame = frame.map_err(|e| {
            MediaError::InvalidMedia(format!("a frame of the {name} is damaged ({e})"))
        })?;
        self.count += 1;
        if self.count > self.limits.max_frames {
            return Err(too_many(self.count, &self.limits));
        }
        let (numer, denom) = frame.delay().numer_denom_ms();
        let delay_ms = f64::from(numer) / f64::from(denom.max(1));
        self.elapsed_ms += delay_ms;
        if self.elapsed_ms / 1000.0 > self.limits.max_seconds {
            return Err(MediaError::VideoTooLong {
                seconds: self.elapsed_ms / 1000.0,
                limit: self.limits.max_seconds,
            });
        }
        let mut pixels = frame.into_buffer();
        if let Some(transform) = &self.to_srgb {
            transform.transform_in_place(&mut pixels);
        }
        Ok((pixels, delay_ms))
    }
}

fn too_many(frames: u64, limits: &VideoLimits) -> MediaError {
    MediaError::TooManyFrames {
        frames,
        limit: limits.max_frames,
        what: "frames a video may have",
    }
}
