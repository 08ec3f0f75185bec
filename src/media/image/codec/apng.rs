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
//! Frames are composited here from the `png` crate's raw subframes (the `image`
//! crate's APNG reader refuses 16-bit files and drops the default image), whatever the
//! number of `fdAT` chunks a frame's data is split over: each is laid onto the canvas
//! by its `fcTL` (`blend_op` source, or over as Pillow lays it, see [`over`]) after
//! the previous frame's `dispose_op` (none, background, previous), as the APNG
//! specification says; 16-bit samples are cut to 8 bits, palettes and `tRNS` expanded.

use std::io::Cursor;
use std::num::NonZeroU32;

use image::metadata::LoopCount;
use image::{Delay, Frame, ImageError, ImageResult, Rgba, RgbaImage};
use png::{BlendOp, DisposeOp, Transformations};

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
    canvas: RgbaImage,
    /// The canvas region under the previous frame, for `dispose_op` previous.
    saved: Option<RgbaImage>,
    /// How the previous frame leaves the canvas, and where it was.
    pending: Option<(DisposeOp, (u32, u32, u32, u32))>,
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
            canvas: RgbaImage::new(width, height),
            saved: None,
            pending: None,
            remaining: actl.num_frames,
            default_image: None,
            declared: actl.num_frames,
            plays: NonZeroU32::new(actl.num_plays).map_or(LoopCount::Infinite, LoopCount::Finite),
            icc_profile,
            indexed,
        };
        if separate_default {
            let (w, h) = frames.read_subframe()?;
            let mut image = RgbaImage::new(width, height);
            frames.draw(&mut image, (0, 0, w, h), BlendOp::Source);
            frames.default_image = Some(image);
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

    /// Draws the subframe in `buffer` (of the rectangle `x, y, w, h`) onto `target`.
    fn draw(&self, target: &mut RgbaImage, (x, y, w, h): (u32, u32, u32, u32), blend: BlendOp) {
        let (color, _) = self.reader.output_color_type();
        let samples = color.samples();
        let line = w as usize * samples;
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
                let (tx, ty) = (x + col as u32, y + row as u32);
                let Some(dest) = target.get_pixel_mut_checked(tx, ty) else {
                    continue;
                };
                match blend {
                    BlendOp::Source => *dest = Rgba(source),
                    // Pillow pastes a palette frame's indices through its alpha, so a
                    // pixel takes the frame's palette entry or keeps its own (an index
                    // between two is rounded to one of them), colours never mixed.
                    BlendOp::Over if self.indexed => {
                        if source[3] >= 128 {
                            *dest = Rgba(source);
                        }
                    }
                    BlendOp::Over => *dest = over(*dest, source),
                }
            }
        }
    }

    fn next_frame(&mut self) -> ImageResult<Frame> {
        // The previous frame leaves the canvas as its dispose_op says.
        match self.pending.take() {
            Some((DisposeOp::Background, (x, y, w, h))) => {
                for ty in y..y + h {
                    for tx in x..x + w {
                        if let Some(p) = self.canvas.get_pixel_mut_checked(tx, ty) {
                            *p = Rgba([0; 4]);
                        }
                    }
                }
            }
            Some((DisposeOp::Previous, (x, y, _, _))) => {
                if let Some(saved) = self.saved.take() {
                    image::imageops::replace(&mut self.canvas, &saved, x.into(), y.into());
                }
            }
            _ => {}
        }
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
        let mut dispose = fc.dispose_op;
        if dispose == DisposeOp::Previous {
            if self.remaining + 1 == self.declared {
                // The first frame has nothing before it: the specification says to
                // clear it instead.
                dispose = DisposeOp::Background;
            } else {
                let region = image::imageops::crop_imm(&self.canvas, rect.0, rect.1, w, h);
                self.saved = Some(region.to_image());
            }
        }
        let mut canvas = std::mem::take(&mut self.canvas);
        self.draw(&mut canvas, rect, fc.blend_op);
        self.canvas = canvas;
        self.pending = Some((dispose, rect));
        // Delays are fractions of a second; a denominator of 0 means 100.
        let den = if fc.delay_den == 0 { 100 } else { fc.delay_den };
        let delay = Delay::from_numer_denom_ms(u32::from(fc.delay_num) * 1000, den.into());
        Ok(Frame::from_parts(self.canvas.clone(), 0, 0, delay))
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

/// `source` laid over `dest` as Pillow lays an APNG frame of `blend_op` over (the
/// reference of the real-file check): pasted through its own alpha, every channel —
/// alpha included — moved from `dest` towards `source` by `alpha / 255`, rounded as
/// Pillow rounds. The APNG specification's "over" differs for partly transparent
/// pixels: over an opaque pixel it stays opaque, where Pillow's fades.
fn over(dest: Rgba<u8>, source: [u8; 4]) -> Rgba<u8> {
    let mask = u32::from(source[3]);
    let mut out = [0u8; 4];
    for i in 0..4 {
        let sum = u32::from(dest[i]) * (255 - mask) + u32::from(source[i]) * mask + 128;
        out[i] = (((sum >> 8) + sum) >> 8) as u8;
    }
    Rgba(out)
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
    fn over_blends_by_the_source_alpha() {
        let dest = Rgba([0, 0, 255, 255]);
        assert_eq!(over(dest, [255, 0, 0, 255]), Rgba([255, 0, 0, 255]));
        assert_eq!(over(dest, [255, 0, 0, 0]), dest);
        assert_eq!(over(dest, [255, 0, 0, 128]), Rgba([128, 0, 127, 191]));
        // Pillow's own test file: 127 frames of green at alpha 2 laid over opaque
        // green fade it to alpha 97.
        let faded = (0..127).fold(Rgba([0, 255, 0, 255]), |d, _| over(d, [0, 255, 0, 2]));
        assert_eq!(faded, Rgba([0, 255, 0, 97]));
    }

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
