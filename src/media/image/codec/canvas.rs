//! The one canvas model of every animation the service decodes: GIF (`gif::frames`)
//! and APNG (`apng`) frames are laid here, so that a frame comes out alike whichever
//! format and whichever command (`resize-image`, `image-to-webp`, `image-to-video`,
//! `gif-to-video`, through `media::animation`) it goes through.
//!
//! Each frame covers a rectangle of the canvas. Before it is drawn, the frame before
//! it leaves the canvas as its disposal says (GIF's disposal method, APNG's
//! `dispose_op`), as browsers and the APNG specification do:
//! - [`Dispose::None`]: the canvas is left as the frame drew it;
//! - [`Dispose::Background`]: its rectangle is cleared to transparent — browsers
//!   ignore a GIF's background colour, and APNG has none;
//! - [`Dispose::Previous`]: its rectangle is put back as it was before the frame was
//!   drawn. A first frame has nothing before it: its `Previous` is `Background`, as
//!   the APNG specification says (and a GIF's first frame had a transparent canvas
//!   under it, which is the same).
//!
//! A frame's pixels are laid by its [`Blend`]: replacing the canvas (APNG's
//! `blend_op` source), laid over it ("over", as Pillow, the reference of the
//! real-file check, lays it: see [`over`]), or pasted through their alpha cut at half
//! (a GIF's transparent index, which leaves the canvas under it as it was; an
//! APNG palette frame laid over, as Pillow pastes palette frames).
//!
//! The canvas never grows: what a frame draws past it is clipped.

use image::{Rgba, RgbaImage};

/// A frame's rectangle on the canvas: x, y, width, height.
pub(crate) type Rect = (u32, u32, u32, u32);

/// How a frame leaves the canvas once it has been shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dispose {
    None,
    Background,
    Previous,
}

/// How a frame's pixels are laid onto the canvas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blend {
    /// The frame's pixels replace the canvas's, alpha included.
    Source,
    /// Laid over the canvas by their alpha (see [`over`]).
    Over,
    /// A pixel of alpha 128 or more replaces the canvas's, any other leaves it.
    Cut,
}

/// The canvas an animation's frames are laid on, in turn.
pub(crate) struct Canvas {
    image: RgbaImage,
    /// How the frame drawn last leaves the canvas, over which rectangle, and (for
    /// `Previous`) what it covered.
    pending: Option<(Dispose, Rect, Option<RgbaImage>)>,
    /// Whether a frame has been begun.
    started: bool,
}

impl Canvas {
    /// A transparent canvas of `width` × `height`.
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            image: RgbaImage::new(width, height),
            pending: None,
            started: false,
        }
    }

    pub fn dimensions(&self) -> (u32, u32) {
        self.image.dimensions()
    }

    /// The canvas as the last frame left it drawn (its disposal not yet applied).
    pub fn image(&self) -> &RgbaImage {
        &self.image
    }

    /// Fills the whole canvas with `colour`: what lies under the first frame, for a
    /// format that says (a GIF without transparency, as Pillow lays it).
    pub fn fill(&mut self, colour: [u8; 4]) {
        let (w, h) = self.dimensions();
        fill(&mut self.image, (0, 0, w, h), colour);
    }

    /// Starts a frame over `rect` that leaves the canvas as `dispose` says once
    /// shown: the frame before it is disposed of first, and what `rect` covers is
    /// kept when the new frame is to put it back.
    pub fn begin(&mut self, rect: Rect, dispose: Dispose) {
        match self.pending.take() {
            Some((Dispose::Background, rect, _)) => fill(&mut self.image, rect, [0; 4]),
            Some((Dispose::Previous, (x, y, _, _), Some(saved))) => {
                image::imageops::replace(&mut self.image, &saved, x.into(), y.into());
            }
            _ => {}
        }
        let rect = self.clip(rect);
        let dispose = match dispose {
            Dispose::Previous if !self.started => Dispose::Background,
            other => other,
        };
        let saved = (dispose == Dispose::Previous).then(|| {
            let (x, y, w, h) = rect;
            image::imageops::crop_imm(&self.image, x, y, w, h).to_image()
        });
        self.pending = Some((dispose, rect, saved));
        self.started = true;
    }

    /// Lays `pixel` at (`x`, `y`) by `blend`; nothing past the canvas.
    #[inline]
    pub fn put(&mut self, x: u32, y: u32, pixel: [u8; 4], blend: Blend) {
        let Some(dest) = self.image.get_pixel_mut_checked(x, y) else {
            return;
        };
        match blend {
            Blend::Source => *dest = Rgba(pixel),
            Blend::Cut => {
                if pixel[3] >= 128 {
                    *dest = Rgba(pixel);
                }
            }
            Blend::Over => match pixel[3] {
                255 => *dest = Rgba(pixel),
                0 => {}
                _ => *dest = over(*dest, pixel),
            },
        }
    }

    /// The part of `rect` that lies on the canvas.
    fn clip(&self, (x, y, w, h): Rect) -> Rect {
        let (cw, ch) = self.dimensions();
        let (x, y) = (x.min(cw), y.min(ch));
        (x, y, w.min(cw - x), h.min(ch - y))
    }
}

fn fill(image: &mut RgbaImage, (x, y, w, h): Rect, colour: [u8; 4]) {
    let (cw, ch) = image.dimensions();
    for ty in y..(y + h).min(ch) {
        for tx in x..(x + w).min(cw) {
            image.put_pixel(tx, ty, Rgba(colour));
        }
    }
}

/// `source` laid over `dest` as Pillow lays an APNG frame of `blend_op` over (the
/// reference of the real-file check): pasted through its own alpha, every channel —
/// alpha included — moved from `dest` towards `source` by `alpha / 255`, rounded as
/// Pillow rounds. The APNG specification's "over" differs for partly transparent
/// pixels: over an opaque pixel it stays opaque, where Pillow's fades.
pub(crate) fn over(dest: Rgba<u8>, source: [u8; 4]) -> Rgba<u8> {
    let mask = u32::from(source[3]);
    let mut out = [0u8; 4];
    for i in 0..4 {
        let sum = u32::from(dest[i]) * (255 - mask) + u32::from(source[i]) * mask + 128;
        out[i] = (((sum >> 8) + sum) >> 8) as u8;
    }
    Rgba(out)
}

#[cfg(test)]
mod tests;
