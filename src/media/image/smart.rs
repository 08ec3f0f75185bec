//! `gravity: smart`: which window of a picture to keep when a `cover` box crops it.
//!
//! The algorithm is libvips's `attention` measure, with a better search. Each pixel
//! of a small copy of the picture (at most [`SMALL_SIDE`] pixels a side: the measure
//! looks at objects, not texture, and the whole search then costs well under a
//! millisecond) scores the sum of three cues of where people look:
//! - **edges**: the Sobel gradient magnitude of the luminance (detail, outlines,
//!   text; a flat sky or wall scores nothing);
//! - **saturation**: chroma (`max − min` of R, G, B) past a threshold, so vivid
//!   objects stand out of greyish backgrounds;
//! - **skin**: the classic RGB skin-tone rule (Kovač, Peer and Solina 2003), weighted
//!   most, because faces are what a crop must not cut.
//!
//! libvips blurs that map and centres the crop on its single hottest point; here a
//! summed-area table (integral image) scores every window of the crop's size in
//! O(1) each, and the window holding the most salience wins — an object larger than
//! a blur radius is kept whole rather than centred on its busiest corner. Among
//! windows that tie (an object smaller than the window fits in many), the one whose
//! centre is nearest the salience's centre of mass wins, so the object sits as
//! central as the picture allows; a picture with no salience at all gets the centre.
//! No model or training data: cheap, deterministic and explainable, which is what a
//! default-on crop for thumbnails needs (docs/SMARTCROP.md shows its choices).

use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions};
use image::{DynamicImage, RgbImage};

/// The longest side of the copy the measure runs on.
pub(crate) const SMALL_SIDE: u32 = 256;

/// How much each cue counts (each is 0–1 per pixel).
const EDGE_WEIGHT: f64 = 1.0;
const SATURATION_WEIGHT: f64 = 1.0;
const SKIN_WEIGHT: f64 = 1.5;

/// The top-left corner, in `image`'s pixels, of the `size` (width, height) window of
/// `image` holding the most salience.
pub fn window(image: &DynamicImage, size: (f64, f64)) -> (f64, f64) {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (ww, wh) = (size.0.min(w), size.1.min(h));
    if ww >= w && wh >= h {
        return (0.0, 0.0);
    }
    let small = small_copy(image);
    let k = f64::from(small.width()) / w;
    let map = salience(&small);
    let sw = ((ww * k).round() as usize).clamp(1, map.width);
    let sh = ((wh * k).round() as usize).clamp(1, map.height);
    let (sx, sy) = map.best_window(sw, sh);
    // Back to the picture's pixels, the window kept inside it.
    let left = (sx as f64 / k).clamp(0.0, w - ww);
    let top = (sy as f64 / k).clamp(0.0, h - wh);
    (left, top)
}

/// `image` as RGB at most `SMALL_SIDE` a side (transparency composited onto black:
/// what is not there draws no attention).
fn small_copy(image: &DynamicImage) -> RgbImage {
    let (w, h) = (image.width(), image.height());
    let k = (f64::from(SMALL_SIDE) / f64::from(w.max(h))).min(1.0);
    let (sw, sh) = (
        ((f64::from(w) * k).round() as u32).max(1),
        ((f64::from(h) * k).round() as u32).max(1),
    );
    let rgb = match image {
        DynamicImage::ImageRgb8(rgb) => DynamicImage::ImageRgb8(rgb.clone()),
        other => {
            let rgba = other.to_rgba8();
            let mut rgb = RgbImage::new(w, h);
            for (out, px) in rgb.pixels_mut().zip(rgba.pixels()) {
                let a = u16::from(px[3]);
                let [r, g, b, _] = px.0.map(|c| ((u16::from(c) * a + 127) / 255) as u8);
                *out = image::Rgb([r, g, b]);
            }
            DynamicImage::ImageRgb8(rgb)
        }
    };
    if (sw, sh) == (w, h) {
        return rgb.into_rgb8();
    }
    let mut small = DynamicImage::new_rgb8(sw, sh);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Bilinear));
    match mediaedit_pixels::resize(&rgb, &mut small, &options) {
        Ok(()) => small.into_rgb8(),
        // Both pictures are RGB8 of non-zero size, which the resizer always takes.
        Err(_) => rgb
            .resize_exact(sw, sh, image::imageops::FilterType::Triangle)
            .into_rgb8(),
    }
}

/// Salience per pixel, row by row.
pub(crate) struct SalienceMap {
    pub width: usize,
    pub height: usize,
    pub values: Vec<f64>,
}

/// The attention map of `rgb`: edges + saturation + skin per pixel.
pub(crate) fn salience(rgb: &RgbImage) -> SalienceMap {
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    let luma: Vec<f64> = rgb
        .pixels()
        .map(|p| 0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2]))
        .collect();
    let at = |x: usize, y: usize| luma[y * width + x];
    let mut values = vec![0.0; width * height];
    for (i, p) in rgb.pixels().enumerate() {
        let (x, y) = (i % width, i / width);
        let mut score = 0.0;
        // The border has no full neighbourhood; its pixels count their colour only.
        if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
            let gx = at(x + 1, y - 1) + 2.0 * at(x + 1, y) + at(x + 1, y + 1)
                - at(x - 1, y - 1)
                - 2.0 * at(x - 1, y)
                - at(x - 1, y + 1);
            let gy = at(x - 1, y + 1) + 2.0 * at(x, y + 1) + at(x + 1, y + 1)
                - at(x - 1, y - 1)
                - 2.0 * at(x, y - 1)
                - at(x + 1, y - 1);
            // A step of 64 levels between neighbours (a clear outline) counts fully.
            score += EDGE_WEIGHT * ((gx * gx + gy * gy).sqrt() / 256.0).min(1.0);
        }
        let [r, g, b] = p.0.map(i32::from);
        let chroma = r.max(g).max(b) - r.min(g).min(b);
        score += SATURATION_WEIGHT * (f64::from(chroma - 48) / 112.0).clamp(0.0, 1.0);
        if is_skin(r, g, b) {
            score += SKIN_WEIGHT;
        }
        values[i] = score;
    }
    SalienceMap {
        width,
        height,
        values,
    }
}

/// Kovač, Peer and Solina's rule for skin in daylight (RGB).
fn is_skin(r: i32, g: i32, b: i32) -> bool {
    let spread = r.max(g).max(b) - r.min(g).min(b);
    r > 95 && g > 40 && b > 20 && spread > 15 && (r - g).abs() > 15 && r > g && r > b
}

impl SalienceMap {
    /// The top-left corner of the `ww` × `wh` window with the most salience; ties go
    /// to the window centred nearest the salience's centre of mass (the picture's
    /// centre when there is none).
    pub fn best_window(&self, ww: usize, wh: usize) -> (usize, usize) {
        let (w, h) = (self.width, self.height);
        // Summed-area table with a zero row and column in front.
        let mut sat = vec![0.0f64; (w + 1) * (h + 1)];
        let (mut total, mut cx, mut cy) = (0.0, 0.0, 0.0);
        for y in 0..h {
            let mut row = 0.0;
            for x in 0..w {
                let v = self.values[y * w + x];
                row += v;
                total += v;
                cx += v * (x as f64 + 0.5);
                cy += v * (y as f64 + 0.5);
                sat[(y + 1) * (w + 1) + x + 1] = sat[y * (w + 1) + x + 1] + row;
            }
        }
        let (cx, cy) = if total > 0.0 {
            (cx / total, cy / total)
        } else {
            (w as f64 / 2.0, h as f64 / 2.0)
        };
        let sum = |x: usize, y: usize| {
            let s = |x: usize, y: usize| sat[y * (w + 1) + x];
            s(x + ww, y + wh) - s(x, y + wh) - s(x + ww, y) + s(x, y)
        };
        let mut best = (0, 0);
        let (mut best_sum, mut best_distance) = (f64::NEG_INFINITY, f64::INFINITY);
        // Sums this close are ties (float noise of the table).
        let tie = 1e-9 * total.max(1.0);
        for y in 0..=(h - wh) {
            for x in 0..=(w - ww) {
                let s = sum(x, y);
                let dx = x as f64 + ww as f64 / 2.0 - cx;
                let dy = y as f64 + wh as f64 / 2.0 - cy;
                let distance = dx * dx + dy * dy;
                if s > best_sum + tie || (s >= best_sum - tie && distance < best_distance) {
                    best = (x, y);
                    best_sum = s;
                    best_distance = distance;
                }
            }
        }
        best
    }
}
