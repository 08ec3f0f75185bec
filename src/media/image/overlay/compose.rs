//! Laying one picture over another: where it goes, how it blends, and the scaled
//! copy each size of picture gets once.

use crate::media::error::MediaError;
use crate::media::image::geometry::{Colour, Gravity};
use image::{DynamicImage, RgbaImage};
use std::sync::{Arc, Mutex};

/// `margin`'s default: pixels between the overlay and the edges it is placed against.
pub const DEFAULT_MARGIN: u32 = 16;

/// `opacity`'s default: the overlay as it is.
pub const DEFAULT_OPACITY: f32 = 1.0;

/// `overlayWidth`'s default: a fifth of the base's width.
pub const DEFAULT_OVERLAY_WIDTH: f32 = 0.2;

/// `gravity`'s default for a watermark and a text: the bottom-right corner, where
/// credits and logos are usually found.
pub const DEFAULT_GRAVITY: Gravity = Gravity::Southeast;

/// `fontSize`'s default, as a fraction of the base's height.
pub const DEFAULT_FONT_SIZE_FRACTION: f32 = 0.05;

/// `color`'s default for a text.
pub const DEFAULT_TEXT_COLOUR: Colour = Colour::WHITE;

/// Where the top-left corner of a `top`-sized overlay goes on a `base`-sized picture
/// (pixels; negative or past the edge when the overlay does not fit).
///
/// A named gravity puts the overlay against its edges, `margin` pixels in (`center`
/// centres it; `north` centres it across, `margin` from the top). `focus` centres the
/// overlay on its point, moved as little as needed to stay `margin` inside the edges
/// (centred when it cannot). `smart` chooses crops, not places: an overlay with it is
/// centred.
pub fn place(base: (u32, u32), top: (u32, u32), gravity: Gravity, margin: u32) -> (i64, i64) {
    let axis = |base: u32, top: u32, anchor: f64| {
        let (base, top, margin) = (i64::from(base), i64::from(top), i64::from(margin));
        margin + ((base - top - 2 * margin) as f64 * anchor).floor() as i64
    };
    match gravity {
        Gravity::Focus { x, y } => {
            let axis = |base: u32, top: u32, at: f64| {
                let (b, t, m) = (i64::from(base), i64::from(top), i64::from(margin));
                let centred = (at.clamp(0.0, 1.0) * base as f64 - top as f64 / 2.0).round() as i64;
                if b - t - 2 * m >= 0 {
                    centred.clamp(m, b - t - m)
                } else {
                    (b - t).div_euclid(2)
                }
            };
            (axis(base.0, top.0, x), axis(base.1, top.1, y))
        }
        named => {
            let (ax, ay) = named.anchor().unwrap_or((0.5, 0.5));
            (axis(base.0, top.0, ax), axis(base.1, top.1, ay))
        }
    }
}

/// Lays `top` over `base` with its top-left corner at `at`, its alpha multiplied by
/// `opacity` (0–1): Porter-Duff source-over on straight (unpremultiplied) alpha, so a
/// transparent base stays as transparent as the overlay leaves it. The part of `top`
/// outside `base` is cut off.
pub fn composite(base: &mut RgbaImage, top: &RgbaImage, at: (i64, i64), opacity: f32) {
    let opacity = if opacity.is_finite() {
        opacity.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let (bw, bh) = (i64::from(base.width()), i64::from(base.height()));
    let (tw, th) = (i64::from(top.width()), i64::from(top.height()));
    let (x0, y0) = (at.0.max(0), at.1.max(0));
    let (x1, y1) = ((at.0 + tw).min(bw), (at.1 + th).min(bh));
    if x0 >= x1 || y0 >= y1 || opacity == 0.0 {
        return;
    }
    let (bw, tw) = (bw as usize, tw as usize);
    let span = (x1 - x0) as usize;
    let (base_raw, top_raw) = (&mut **base, top.as_raw());
    for y in y0..y1 {
        let b_row = (y as usize * bw + x0 as usize) * 4;
        let t_row = ((y - at.1) as usize * tw + (x0 - at.0) as usize) * 4;
        let b = &mut base_raw[b_row..b_row + span * 4];
        let t = &top_raw[t_row..t_row + span * 4];
        for (dst, src) in b.chunks_exact_mut(4).zip(t.chunks_exact(4)) {
            blend(dst, src, opacity);
        }
    }
}

/// One pixel of [`composite`].
pub(super) fn blend(dst: &mut [u8], src: &[u8], opacity: f32) {
    let sa = f32::from(src[3]) / 255.0 * opacity;
    if sa <= 0.0 {
        return;
    }
    let da = f32::from(dst[3]) / 255.0;
    let out_a = sa + da * (1.0 - sa);
    for c in 0..3 {
        let v = (f32::from(src[c]) * sa + f32::from(dst[c]) * da * (1.0 - sa)) / out_a;
        dst[c] = v.round().clamp(0.0, 255.0) as u8;
    }
    dst[3] = (out_a * 255.0).round().clamp(0.0, 255.0) as u8;
}

/// What an overlay made for one base size is kept for the next frame of that size:
/// every frame of an animation gets the same, made once.
#[derive(Default)]
pub(super) struct PerSize(Mutex<Option<Made>>);

/// An overlay and the base size it was made for.
pub(super) type Made = ((u32, u32), Arc<RgbaImage>);

impl PerSize {
    pub(super) fn get(
        &self,
        size: (u32, u32),
        make: impl FnOnce() -> Result<RgbaImage, MediaError>,
    ) -> Result<Arc<RgbaImage>, MediaError> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, image)) = kept.as_ref().filter(|(at, _)| *at == size) {
            return Ok(image.clone());
        }
        let image = Arc::new(make()?);
        *kept = Some((size, image.clone()));
        Ok(image)
    }
}

/// Runs `draw` on `image` as 8-bit RGBA and gives back the same colour type family:
/// a picture without alpha stays without it (the overlay blends into its pixels).
pub(super) fn over_rgba(
    image: DynamicImage,
    draw: impl FnOnce(&mut RgbaImage),
) -> Result<DynamicImage, MediaError> {
    let had_alpha = image.color().has_alpha();
    let mut rgba = image.into_rgba8();
    draw(&mut rgba);
    Ok(if had_alpha {
        DynamicImage::ImageRgba8(rgba)
    } else {
        DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(rgba).into_rgb8())
    })
}
