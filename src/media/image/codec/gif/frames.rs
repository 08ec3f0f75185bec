//! A GIF's frames as viewers show them: the one GIF decoder of every command
//! (`resize-image`, `image-to-webp`, `image-to-video` and `gif-to-video`), so that a
//! GIF comes out the same whichever command it is given to.
//!
//! Built on the block walker of the parent module (which also reads past a second
//! header appended to the first) and `weezl`'s LZW decoder. Each frame is laid on the
//! canvas every animation shares (`codec::canvas`, with APNG) after the
//! previous frame's disposal (none, cleared to transparent, or put back as it was),
//! its transparent index leaving the canvas as it was.
//!
//! The first frame is drawn as Pillow (the reference of the real-file check) draws
//! it: the canvas is the screen grown to cover the first frame; where the first frame
//! does not reach it is transparent when the frame has a transparent index and in
//! the frame's colour 0 otherwise. A frame without any colour table is drawn with a
//! grey ramp (index `n` is grey `n`), as Pillow draws it; a colour index past the
//! table is black. A frame reaching past the canvas is clipped to it (Pillow grows
//! its canvas; a video cannot change its size midway), and the canvas is kept across
//! a stray second header (ffmpeg starts over there; Pillow and browsers do not).

use image::metadata::LoopCount;
use image::{Delay, RgbaImage};

use crate::media::error::MediaError;
use crate::media::image::codec::canvas::{Blend, Canvas, Dispose, Rect};
use crate::media::image::codec::gif::blocks::{Block, Blocks, Control, Frame};
use crate::media::image::codec::gif::scan::shown_cs;

/// The composited frames of a GIF, one at a time, each with its delay in
/// milliseconds (as browsers show it, see [`shown_cs`]).
pub(crate) struct GifFrames<'a> {
    bytes: &'a [u8],
    /// The pixels one frame's indices may take: a frame's rectangle may reach past the
    /// canvas (and is clipped), but its buffer is held to the canvas's own limit
    /// (fuzzing found a later frame of 65535x65535 allocating 4 GB).
    max_pixels: u64,
    blocks: Blocks<'a>,
    canvas: Canvas,
    /// The control of the frame to come.
    control: Control,
    first: bool,
    /// The decoded colour indices of a frame, reused.
    indices: Vec<u8>,
    pub size: (u32, u32),
    pub plays: LoopCount,
    /// The frames the blocks hold (what the iteration gives, damaged ones included).
    pub frames: u64,
}

impl<'a> GifFrames<'a> {
    /// Opens a GIF, its canvas checked against `max_pixels` before anything is drawn:
    /// `too_large(width, height)` past it, `InvalidMedia` for a header cut short, an
    /// empty screen, or no frame at all.
    pub fn open(
        bytes: &'a [u8],
        max_pixels: u64,
        too_large: impl FnOnce(u32, u32) -> MediaError,
    ) -> Result<GifFrames<'a>, MediaError> {
        let scan = crate::media::image::codec::gif::scan(bytes)?;
        let blocks = Blocks::new(bytes)?;
        // The loop count, wherever its extension is, and the first frame's extent.
        let (mut ahead, mut first) = (blocks.clone(), None);
        while let Some(block) = ahead.next_block() {
            if let Block::Frame(frame) = block {
                first = first.or(Some(frame));
            }
        }
        let (sw, sh) = scan.screen;
        let (width, height) = first.map_or((sw, sh), |f| {
            let right = u32::from(f.left) + u32::from(f.width);
            let bottom = u32::from(f.top) + u32::from(f.height);
            (sw.max(right), sh.max(bottom))
        });
        if u64::from(width) * u64::from(height) > max_pixels {
            return Err(too_large(width, height));
        }
        let plays = match ahead.loops {
            Some(0) | None => LoopCount::Infinite,
            Some(n) => LoopCount::Finite(u32::from(n).try_into().expect("not 0")),
        };
        Ok(GifFrames {
            bytes,
            max_pixels,
            blocks,
            canvas: Canvas::new(width, height),
            control: Control::default(),
            first: true,
            indices: Vec::new(),
            size: (width, height),
            plays,
            frames: scan.frames,
        })
    }

    /// The next frame drawn onto the canvas and its delay in milliseconds; `None` at
    /// the end.
    pub fn next_frame(&mut self) -> Option<Result<(RgbaImage, u32), MediaError>> {
        loop {
            match self.blocks.next_block()? {
                Block::Control(control) => self.control = control,
                Block::Frame(frame) => {
                    let control = std::mem::take(&mut self.control);
                    let drawn = self.draw(&frame, control);
                    let delay_ms = shown_cs(control.delay_cs) as u32 * 10;
                    return Some(drawn.map(|()| (self.canvas.image().clone(), delay_ms)));
                }
            }
        }
    }

    fn draw(&mut self, frame: &Frame, control: Control) -> Result<(), MediaError> {
        crate::media::cancel::checkpoint()?;
        let bytes: &'a [u8] = self.bytes;
        let palette = frame
            .palette
            .clone()
            .or_else(|| self.blocks.global_palette.clone())
            .map(|range| &bytes[range]);
        let colour = |index: u8| match palette {
            Some(table) => table
                .get(usize::from(index) * 3..usize::from(index) * 3 + 3)
                .map_or([0, 0, 0, 255], |c| [c[0], c[1], c[2], 255]),
            None => [index, index, index, 255],
        };
        if self.first {
            let background = match control.transparent {
                Some(_) => [0; 4],
                None => colour(0),
            };
            self.canvas.fill(background);
            self.first = false;
        }
        let rect: Rect = (
            frame.left.into(),
            frame.top.into(),
            frame.width.into(),
            frame.height.into(),
        );
        self.canvas.begin(rect, dispose(control.disposal));
        let (w, h) = (usize::from(frame.width), usize::from(frame.height));
        if (w * h) as u64 > self.max_pixels {
            return Err(MediaError::InvalidMedia(format!(
                "the GIF has a frame of {w}x{h} pixels, more than this service decodes"
            )));
        }
        decode_indices(bytes, frame.data, w * h, &mut self.indices);
        for (n, &index) in self.indices.iter().enumerate() {
            // The transparent index leaves the canvas under it as it was.
            let pixel = match control.transparent {
                Some(transparent) if transparent == index => [0; 4],
                _ => colour(index),
            };
            let row = stored_row(n / w.max(1), h, frame.interlaced);
            let x = u32::from(frame.left) + (n % w.max(1)) as u32;
            let y = u32::from(frame.top) + row as u32;
            self.canvas.put(x, y, pixel, Blend::Cut);
        }
        Ok(())
    }
}

/// A Graphic Control Extension's disposal method: 2 clears, 3 puts back, and 0, 1
/// and the values GIF89a leaves undefined keep the frame, as browsers read them.
fn dispose(method: u8) -> Dispose {
    match method {
        2 => Dispose::Background,
        3 => Dispose::Previous,
        _ => Dispose::None,
    }
}

impl Iterator for GifFrames<'_> {
    type Item = image::ImageResult<image::Frame>;

    /// The frames as the `image` crate's animation iterators give them, for the
    /// animation steps (`media::animation`).
    fn next(&mut self) -> Option<Self::Item> {
        let frame = self.next_frame()?;
        Some(
            frame
                .map(|(canvas, ms)| {
                    image::Frame::from_parts(canvas, 0, 0, Delay::from_numer_denom_ms(ms, 1))
                })
                .map_err(|e| {
                    image::ImageError::Decoding(image::error::DecodingError::new(
                        image::error::ImageFormatHint::Exact(image::ImageFormat::Gif),
                        e.to_string(),
                    ))
                }),
        )
    }
}

/// The row of the frame that the `row`th row of its data fills: interlaced GIFs store
/// every 8th row from 0, every 8th from 4, every 4th from 2, then every 2nd from 1.
fn stored_row(row: usize, height: usize, interlaced: bool) -> usize {
    if !interlaced {
        return row;
    }
    let passes = [(0, 8), (4, 8), (2, 4), (1, 2)];
    let mut left = row;
    for (start, step) in passes {
        let rows = height.saturating_sub(start).div_ceil(step);
        if left < rows {
            return start + left * step;
        }
        left -= rows;
    }
    row
}

/// The colour indices of the frame whose LZW data starts at `at` (the minimum code
/// size byte), at most `max` of them, into `out`. Data cut short or damaged gives the
/// indices decoded before the damage: the rest of the frame is not drawn, as
/// browsers leave it.
fn decode_indices(bytes: &[u8], at: usize, max: usize, out: &mut Vec<u8>) {
    out.clear();
    let Some(&min_code_size) = bytes.get(at) else {
        return;
    };
    if !(1..=11).contains(&min_code_size) {
        return;
    }
    let mut data = Vec::new();
    let mut block = at + 1;
    while let Some(&len) = bytes.get(block) {
        if len == 0 {
            break;
        }
        let end = (block + 1 + usize::from(len)).min(bytes.len());
        data.extend_from_slice(&bytes[block + 1..end]);
        block = end;
    }
    let mut decoder = weezl::decode::Decoder::new(weezl::BitOrder::Lsb, min_code_size);
    out.resize(max, 0);
    let (mut read, mut written) = (0, 0);
    while written < max {
        let result = decoder.decode_bytes(&data[read..], &mut out[written..]);
        read += result.consumed_in;
        written += result.consumed_out;
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in + result.consumed_out > 0 => {}
            _ => break,
        }
    }
    out.truncate(written);
}

#[cfg(test)]
pub(crate) mod tests;
