//! `blur-faces` on a picture: each face's box, grown by `padding`, blurred or
//! pixelated in place; nothing outside the boxes changes.
//!
//! The strength follows the face, not the picture: the blur's radius is a quarter of
//! the box's shorter side (three box-blur passes, close to a Gaussian, so no feature
//! survives) and a pixelated face is at most 8 blocks across, so a face is unreadable
//! at any size and a small face is not smeared over its surroundings.

use image::{DynamicImage, Rgba, RgbaImage};

use crate::media::image::faces::face::Face;

/// How a face is hidden (`style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Blur,
    Pixelate,
}

impl Style {
    pub const NAMES: &'static [&'static str] = &["blur", "pixelate"];

    pub fn from_name(name: &str) -> Option<Style> {
        match name {
            "blur" => Some(Style::Blur),
            "pixelate" => Some(Style::Pixelate),
            _ => None,
        }
    }
}

/// Blocks across the shorter side of a pixelated box.
pub const PIXELATE_BLOCKS: f64 = 8.0;

/// The box `face` grown by `padding` (a fraction of its side, on each side) and
/// clipped to a picture of `size`, in whole pixels: (x, y, width, height).
pub fn padded(face: &Face, padding: f64, (w, h): (u32, u32)) -> Option<(u32, u32, u32, u32)> {
    let (pw, ph) = (face.width * padding, face.height * padding);
    let x0 = (face.x - pw).floor().clamp(0.0, f64::from(w));
    let y0 = (face.y - ph).floor().clamp(0.0, f64::from(h));
    let x1 = (face.right() + pw).ceil().clamp(0.0, f64::from(w));
    let y1 = (face.bottom() + ph).ceil().clamp(0.0, f64::from(h));
    let (bw, bh) = ((x1 - x0) as u32, (y1 - y0) as u32);
    (bw > 0 && bh > 0).then_some((x0 as u32, y0 as u32, bw, bh))
}

/// `image` with every face of `faces` (in its pixels) hidden in `style`.
pub fn hide(image: DynamicImage, faces: &[Face], style: Style, padding: f64) -> DynamicImage {
    if faces.is_empty() {
        return image;
    }
    let had_alpha = image.color().has_alpha();
    let mut rgba = image.into_rgba8();
    let size = rgba.dimensions();
    for face in faces {
        if let Some(region) = padded(face, padding, size) {
            match style {
                Style::Blur => blur_region(&mut rgba, region),
                Style::Pixelate => pixelate_region(&mut rgba, region),
            }
        }
    }
    if had_alpha {
        DynamicImage::ImageRgba8(rgba)
    } else {
        DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(rgba).to_rgb8())
    }
}

/// Three passes of a box blur of radius a quarter of the region's shorter side, each
/// pass across then down, the region's edge pixels repeated beyond it.
fn blur_region(image: &mut RgbaImage, (x, y, w, h): (u32, u32, u32, u32)) {
    let radius = (w.min(h) / 4).max(1) as usize;
    let (w, h) = (w as usize, h as usize);
    let mut buf: Vec<[f32; 4]> = Vec::with_capacity(w * h);
    for yy in 0..h {
        for xx in 0..w {
            let p = image.get_pixel(x + xx as u32, y + yy as u32).0;
            buf.push(p.map(f32::from));
        }
    }
    let mut line = Vec::new();
    for _ in 0..3 {
        for row in 0..h {
            line.clear();
            line.extend((0..w).map(|i| buf[row * w + i]));
            box_pass(&line, radius, |i, v| buf[row * w + i] = v);
        }
        for col in 0..w {
            line.clear();
            line.extend((0..h).map(|i| buf[i * w + col]));
            box_pass(&line, radius, |i, v| buf[i * w + col] = v);
        }
    }
    for yy in 0..h {
        for xx in 0..w {
            let v = buf[yy * w + xx].map(|c| c.round().clamp(0.0, 255.0) as u8);
            image.put_pixel(x + xx as u32, y + yy as u32, Rgba(v));
        }
    }
}

/// One box-blur pass over `line` (edges clamped), each result handed to `out`.
fn box_pass(line: &[[f32; 4]], radius: usize, mut out: impl FnMut(usize, [f32; 4])) {
    let n = line.len();
    let at = |i: isize| line[i.clamp(0, n as isize - 1) as usize];
    let r = radius as isize;
    let mut sum = [0f32; 4];
    for i in -r..=r {
        let p = at(i);
        (0..4).for_each(|c| sum[c] += p[c]);
    }
    let k = 1.0 / (2 * radius + 1) as f32;
    for i in 0..n as isize {
        out(i as usize, sum.map(|s| s * k));
        let (add, sub) = (at(i + r + 1), at(i - r));
        (0..4).for_each(|c| sum[c] += add[c] - sub[c]);
    }
}

/// The region in square blocks (at most [`PIXELATE_BLOCKS`] across its shorter side),
/// each the mean of its pixels.
fn pixelate_region(image: &mut RgbaImage, (x, y, w, h): (u32, u32, u32, u32)) {
    let block = ((f64::from(w.min(h)) / PIXELATE_BLOCKS).ceil() as u32).max(2);
    for by in (y..y + h).step_by(block as usize) {
        for bx in (x..x + w).step_by(block as usize) {
            let (ex, ey) = ((bx + block).min(x + w), (by + block).min(y + h));
            let mut sum = [0u64; 4];
            for yy in by..ey {
                for xx in bx..ex {
                    let p = image.get_pixel(xx, yy).0;
                    (0..4).for_each(|c| sum[c] += u64::from(p[c]));
                }
            }
            let n = u64::from((ex - bx) * (ey - by)).max(1);
            let mean = Rgba(sum.map(|s| ((s + n / 2) / n) as u8));
            for yy in by..ey {
                for xx in bx..ex {
                    image.put_pixel(xx, yy, mean);
                }
            }
        }
    }
}
