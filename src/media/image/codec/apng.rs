//! APNG: which PNGs animate, their frames as viewers show them, and the APNG writer.
//!
//! A PNG animates when one valid `acTL` chunk comes before the image data and declares
//! two frames or more, or one frame apart from the default image (an animating viewer
//! shows that frame, not the default image); any other PNG (no `acTL`, one frame that
//! is the default image, several `acTL`, a count of 0) is a still picture, read by the
//! still path as Pillow reads it.
//!
//! The default image (`IDAT`) may or may not be the animation's first frame: with no
//! `fcTL` before it, it is a picture for readers that do not animate, outside the
//! animation. Pillow then shows it as frame 0, before the animation frames; the
//! service keeps it ([`ApngFrames::default_image`]) so that an APNG output keeps it as
//! its own default image, and leaves it out of animated WebP and video outputs, as
//! animating viewers leave it out (see `animation.rs`).
//!
//! Frames are read here from the `png` crate's raw subframes (the `image` crate's APNG
//! reader refuses 16-bit files and drops the default image), whatever the number of
//! `fdAT` chunks a frame's data is split over, and laid on the canvas every animation
//! shares (`codec::canvas`, with GIF) by their `fcTL`: `blend_op` source,
//! or over as Pillow lays it, after the previous frame's `dispose_op` (none,
//! background, previous), as the APNG specification says; 16-bit samples are cut to 8
//! bits, palettes and `tRNS` expanded.

use std::io::Cursor;
use std::num::NonZeroU32;

use image::metadata::LoopCount;
use image::{Delay, Frame, ImageError, ImageResult, RgbaImage};
use png::{BlendOp, DisposeOp, Transformations};

use crate::media::image::codec::canvas::{Blend, Canvas, Dispose, Rect};

mod writer;
pub(crate) use writer::ApngWriter;

/// What a valid `acTL` before the image data declares — frames and plays (0:
/// forever) — and whether an `fcTL` comes before the image data (the default image is
/// then the first frame). `None` for a still PNG (see the module's docs).
pub(crate) fn animation_control(bytes: &[u8]) -> Option<(u32, u32, bool)> {
    let be = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let (mut at, mut found, mut framed) = (8, None, false);
    loop {
        let length = be(at)? as usize;
        match bytes.get(at + 4..at + 8)? {
            b"IDAT" => break,
            // Pillow ignores every acTL once there are two; so does the service.
            b"acTL" if found.is_some() => return None,
            b"acTL" => found = Some((be(at + 8)?, be(at + 12)?)),
            b"fcTL" => framed = true,
            _ => {}
        }
        at = at.checked_add(length)?.checked_add(12)?;
    }
    found
        .filter(|&(frames, _)| frames > 0 && frames <= 1 << 31)
        .map(|(frames, plays)| (frames, plays, framed))
}

/// Whether `bytes` is an APNG: two frames or more, or one frame apart from the default
/// image (what an animating viewer shows is then that frame, not the default image).
pub(crate) fn is_animated(bytes: &[u8]) -> bool {
    animation_control(bytes).is_some_and(|(frames, _, framed)| frames > 1 || !framed)
}

/// The composited frames of an APNG, one at a time.
pub(crate) struct ApngFrames<'a> {
    reader: png::Reader<Cursor<&'a [u8]>>,
    /// The raw subframe, reused.
    buffer: Vec<u8>,
    canvas: Canvas,
    remaining: u32,
    /// The default image, when it is not a frame of the animation.
    pub default_image: Option<RgbaImage>,
    /// The frame count the `acTL` declares.
    pub declared: u32,
    pub plays: LoopCount,
    /// The `iCCP` profile, if any.
    pub icc_profile: Option<Vec<u8>>,
    /// Whether the pixels are palette entries (see [`ApngFrames::draw`]).
    indexed: bool,
}

impl<'a> ApngFrames<'a> {
    /// Opens an APNG (one [`is_animated`] said yes to), reading its default image when
    /// that is not a frame. `max_bytes` bounds the decoder's own allocations.
    pub fn open(bytes: &'a [u8], max_bytes: usize) -> ImageResult<ApngFrames<'a>> {
        let mut decoder =
            png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: max_bytes });
        decoder.set_transformations(Transformations::EXPAND | Transformations::STRIP_16);
        let reader = decoder.read_info().map_err(damaged)?;
        let info = reader.info();
        let (width, height) = (info.width, info.height);
        let actl = info.animation_control.ok_or_else(|| damaged("no acTL"))?;
        let separate_default = info.frame_control.is_none();
        let icc_profile = info.icc_profile.as_ref().map(|p| p.to_vec());
        let indexed = info.color_type == png::ColorType::Indexed;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| damaged("too large"))?;
        // The canvas and the frame buffer are allocated here, before any caller can
        // weigh the header: both are held to `max_bytes` first (found by fuzzing: a
        // header of 5 GB of canvas was allocated at once).
        let canvas = u64::from(width) * u64::from(height) * 4;
        if canvas.saturating_add(size as u64) > max_bytes as u64 {
            return Err(damaged("its canvas is larger than this service decodes"));
        }
        let mut frames = ApngFrames {
            reader,
            buffer: vec![0; size],
            canvas: Canvas::new(width, height),
            remaining: actl.num_frames,
            default_image: None,
            declared: actl.num_frames,
            plays: NonZeroU32::new(actl.num_plays).map_or(LoopCount::Infinite, LoopCount::Finite),
            icc_profile,
            indexed,
        };
        if separate_default {
            let (w, h) = frames.read_subframe()?;
            let mut image = Canvas::new(width, height);
            image.begin((0, 0, w, h), Dispose::None);
            frames.draw(&mut image, (0, 0, w, h), BlendOp::Source);
            frames.default_image = Some(image.image().clone());
        }
        Ok(frames)
    }

    pub fn dimensions(&self) -> (u32, u32) {
        self.canvas.dimensions()
    }

    /// Decodes the next subframe into `buffer`; its size.
    fn read_subframe(&mut self) -> ImageResult<(u32, u32)> {
        let (reader, buffer) = (&mut self.reader, &mut self.buffer);
        let out =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reader.next_frame(buffer)))
                .map_err(|_| damaged("the decoder gave up"))?
                .map_err(damaged)?;
        if out.bit_depth != png::BitDepth::Eight {
            return Err(damaged("a bit depth left after expansion"));
        }
        Ok((out.width, out.height))
    }

    /// Lays the subframe in `buffer` (of the rectangle `x, y, w, h`) on `canvas`.
    fn draw(&self, canvas: &mut Canvas, (x, y, w, h): Rect, blend: BlendOp) {
        let (color, _) = self.reader.output_color_type();
        let samples = color.samples();
        let line = w as usize * samples;
        let blend = match blend {
            BlendOp::Source => Blend::Source,
            // Pillow pastes a palette frame's indices through its alpha, so a pixel
            // takes the frame's palette entry or keeps its own (an index between two
            // is rounded to one of them), colours never mixed.
            BlendOp::Over if self.indexed => Blend::Cut,
            BlendOp::Over => Blend::Over,
        };
        for (row, pixels) in self
            .buffer
            .chunks_exact(line.max(1))
            .take(h as usize)
            .enumerate()
        {
            for (col, px) in pixels.chunks_exact(samples).enumerate() {
                let source = match *px {
                    [l] => [l, l, l, 255],
                    [l, a] => [l, l, l, a],
                    [r, g, b] => [r, g, b, 255],
                    [r, g, b, a] => [r, g, b, a],
                    _ => [0; 4],
                };
                canvas.put(x + col as u32, y + row as u32, source, blend);
            }
        }
    }

    fn next_frame(&mut self) -> ImageResult<Frame> {
        let (w, h) = self.read_subframe()?;
        let fc = self
            .reader
            .info()
            .frame_control
            .ok_or_else(|| damaged("no fcTL"))?;
        let rect = (fc.x_offset, fc.y_offset, w, h);
        let (cw, ch) = self.canvas.dimensions();
        if u64::from(fc.x_offset) + u64::from(w) > u64::from(cw)
            || u64::from(fc.y_offset) + u64::from(h) > u64::from(ch)
        {
            return Err(damaged("a frame outside the canvas"));
        }
        let dispose = match fc.dispose_op {
            DisposeOp::None => Dispose::None,
            DisposeOp::Background => Dispose::Background,
            DisposeOp::Previous => Dispose::Previous,
        };
        let mut canvas = std::mem::replace(&mut self.canvas, Canvas::new(0, 0));
        canvas.begin(rect, dispose);
        self.draw(&mut canvas, rect, fc.blend_op);
        self.canvas = canvas;
        // Delays are fractions of a second; a denominator of 0 means 100.
        let den = if fc.delay_den == 0 { 100 } else { fc.delay_den };
        let delay = Delay::from_numer_denom_ms(u32::from(fc.delay_num) * 1000, den.into());
        Ok(Frame::from_parts(self.canvas.image().clone(), 0, 0, delay))
    }
}

impl Iterator for ApngFrames<'_> {
    type Item = ImageResult<Frame>;

    fn next(&mut self) -> Option<ImageResult<Frame>> {
        self.remaining = self.remaining.checked_sub(1)?;
        let frame = self.next_frame();
        if frame.is_err() {
            // Nothing after a damaged frame is read.
            self.remaining = 0;
        }
        Some(frame)
    }
}

/// A damaged animation, as the error the `image` crate's frame iterators give.
fn damaged(error: impl std::fmt::Display) -> ImageError {
    ImageError::Decoding(image::error::DecodingError::new(
        image::error::ImageFormatHint::Exact(image::ImageFormat::Png),
        error.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vast_canvas_is_refused_before_it_is_allocated() {
        let bytes = include_bytes!("../../testdata/apng-vast-canvas.png");
        assert!(is_animated(bytes));
        let Err(error) = ApngFrames::open(bytes, 64 << 20) else {
            panic!("a canvas of gigabytes was opened");
        };
        assert!(error.to_string().contains("larger than"), "{error}");
    }

    #[test]
    fn a_png_animates_with_one_actl_of_two_frames_or_more_before_its_data() {
        let chunk = |kind: &[u8], data: &[u8]| {
            let mut c = (data.len() as u32).to_be_bytes().to_vec();
            c.extend_from_slice(kind);
            c.extend_from_slice(data);
            c.extend_from_slice(&[0; 4]);
            c
        };
        let png = |chunks: &[Vec<u8>]| {
            let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
            bytes.extend(chunk(b"IHDR", &[0; 13]));
            chunks.iter().for_each(|c| bytes.extend(c));
            bytes.extend(chunk(b"IDAT", &[]));
            bytes
        };
        let actl = |frames: u32| chunk(b"acTL", &[frames.to_be_bytes(), [0; 4]].concat());
        assert!(is_animated(&png(&[actl(2)])));
        // One frame after a separate default image: the frame is what viewers show.
        assert!(is_animated(&png(&[actl(1)])));
        let fctl = chunk(b"fcTL", &[0; 26]);
        assert!(!is_animated(&png(&[actl(1), fctl.clone()])));
        assert!(is_animated(&png(&[actl(2), fctl])));
        assert!(!is_animated(&png(&[])));
        assert!(!is_animated(&png(&[actl(0)])));
        assert!(!is_animated(&png(&[actl(3), actl(3)])));
    }
}
