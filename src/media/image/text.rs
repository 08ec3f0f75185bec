//! Text drawn into pictures (the `text` command): DejaVu Sans, shipped inside the
//! binary so no system font is needed and every node draws the same glyphs. It covers
//! Latin, Greek and Cyrillic (and more); its licence is `assets/fonts/DejaVuSans-LICENSE.txt`.
//!
//! Shaping is rustybuzz's (HarfBuzz's algorithm: kerning, ligatures, combining marks
//! placed on their base letter), rasterising ab_glyph's (exact coverage of the glyph
//! outlines, so edges are antialiased). Every letter gets a thin dark outline, so white
//! text reads on white and on black alike.

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, GlyphId, PxScale, ScaleFont};
use image::{Rgba, RgbaImage};

use crate::media::image::Colour;

/// DejaVu Sans 2.37 (Debian's fonts-dejavu-core).
static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The most characters a `text` may have.
pub const MAX_CHARS: usize = 200;

/// The outline's colour: near-black, so it stays dark on any background.
const OUTLINE: [u8; 3] = [0, 0, 0];

/// The shipped font, parsed once for the shaper and once for the rasteriser (each
/// crate keeps its own view of the same bytes).
struct Fonts {
    shaper: rustybuzz::Face<'static>,
    raster: FontRef<'static>,
}

fn fonts() -> &'static Fonts {
    static FONTS: OnceLock<Fonts> = OnceLock::new();
    FONTS.get_or_init(|| Fonts {
        shaper: rustybuzz::Face::from_slice(FONT_BYTES, 0).expect("the shipped font parses"),
        raster: FontRef::try_from_slice(FONT_BYTES).expect("the shipped font parses"),
    })
}

/// The outline's width for a font size: about a sixteenth of the size, at least 1 px.
pub fn outline_px(font_size_px: f32) -> u32 {
    (font_size_px / 16.0).round().max(1.0) as u32
}

/// One glyph of laid-out text: which, and where its origin sits (pixels from the
/// text's top-left, before the outline's padding).
struct Placed {
    id: GlyphId,
    x: f32,
    y: f32,
}

/// Text shaped at a size: its glyphs and the size of its box, outline included.
pub struct Layout {
    glyphs: Vec<Placed>,
    scale: PxScale,
    outline: u32,
    /// The laid-out box (advance widths × line heights), outline included.
    pub width: f32,
    pub height: f32,
}

/// Shapes `text` at `font_size_px` (the em size: a capital letter is about 0.73 of
/// it): one line per `\n`, each line left-aligned; other control characters are left
/// out. A character the font lacks (CJK, emoji) is drawn as its empty box.
pub fn layout(text: &str, font_size_px: f32) -> Layout {
    let fonts = fonts();
    let size = if font_size_px.is_finite() {
        font_size_px.max(1.0)
    } else {
        1.0
    };
    // ab_glyph's scale is the height from descent to ascent; a font size is an em.
    let units_per_em = fonts.raster.units_per_em().unwrap_or(2048.0);
    let scale = PxScale::from(size * fonts.raster.height_unscaled() / units_per_em);
    let scaled = fonts.raster.as_scaled(scale);
    let unit = scaled.h_scale_factor();
    let line_height = scaled.height() + scaled.line_gap();
    let outline = outline_px(size);
    let pad = outline as f32;
    let mut glyphs = Vec::new();
    let mut width = 0.0f32;
    let mut lines = 0;
    for (n, line) in text.split('\n').enumerate() {
        lines += 1;
        let mut buffer = rustybuzz::UnicodeBuffer::new();
        // Control characters (a tab, the `\r` of a `\r\n`) have no glyph: they would
        // be drawn as the font's empty box.
        let printable: String = line.chars().filter(|c| !c.is_control()).collect();
        buffer.push_str(&printable);
        let shaped = rustybuzz::shape(&fonts.shaper, &[], buffer);
        let baseline = pad + scaled.ascent() + n as f32 * line_height;
        let mut x = pad;
        for (info, pos) in shaped.glyph_infos().iter().zip(shaped.glyph_positions()) {
            glyphs.push(Placed {
                id: GlyphId(info.glyph_id as u16),
                x: x + pos.x_offset as f32 * unit,
                y: baseline - pos.y_offset as f32 * unit,
            });
            x += pos.x_advance as f32 * unit;
        }
        width = width.max(x + pad);
    }
    let height = 2.0 * pad + scaled.height() + (lines - 1) as f32 * line_height;
    Layout {
        glyphs,
        scale,
        outline,
        width,
        height,
    }
}

/// `text` (UTF-8; `\n` starts a new line) drawn at `font_size_px` in `colour` with a
/// thin dark outline, on a transparent picture bounded tightly by the ink (outline
/// included). Text with no ink at all (only spaces) gives a 1×1 transparent picture.
/// The colour's alpha applies to letters and outline alike.
pub fn render_text(text: &str, font_size_px: f32, colour: Colour) -> RgbaImage {
    layout(text, font_size_px).render(colour)
}

impl Layout {
    /// The laid-out text drawn (see [`render_text`]).
    pub fn render(&self, colour: Colour) -> RgbaImage {
        let fonts = fonts();
        let pad = self.outline as usize + 1;
        // The ink may reach past the advance box (italics overhang, accents above the
        // ascent): the canvas is the union of every glyph's pixel bounds.
        let outlined: Vec<_> = self
            .glyphs
            .iter()
            .filter_map(|g| {
                let glyph = g.id.with_scale_and_position(self.scale, point(g.x, g.y));
                fonts.raster.outline_glyph(glyph)
            })
            .collect();
        let Some(bounds) = outlined
            .iter()
            .map(|o| o.px_bounds())
            .reduce(|a, b| ab_glyph::Rect {
                min: point(a.min.x.min(b.min.x), a.min.y.min(b.min.y)),
                max: point(a.max.x.max(b.max.x), a.max.y.max(b.max.y)),
            })
        else {
            return RgbaImage::new(1, 1);
        };
        let (x0, y0) = (bounds.min.x.floor() as i64, bounds.min.y.floor() as i64);
        let w = (bounds.max.x.ceil() as i64 - x0) as usize + 2 * pad;
        let h = (bounds.max.y.ceil() as i64 - y0) as usize + 2 * pad;
        let mut fill = vec![0f32; w * h];
        for glyph in &outlined {
            let b = glyph.px_bounds();
            let (gx, gy) = (b.min.x as i64 - x0, b.min.y as i64 - y0);
            glyph.draw(|x, y, c| {
                let px = (gx + i64::from(x)) as usize + pad;
                let py = (gy + i64::from(y)) as usize + pad;
                let cell = &mut fill[py * w + px];
                // Overlapping glyphs (a mark on its letter) add up, capped at full.
                *cell = (*cell + c).min(1.0);
            });
        }
        let ring = dilate(&fill, (w, h), self.outline as usize);
        let image = paint(&fill, &ring, (w, h), colour);
        crop_to_ink(image)
    }
}

/// The letters' coverage grown by a disc of `radius` pixels: the outline's coverage.
///
/// A disc rather than a square keeps the outline's corners round. Each row of the disc
/// is a horizontal maximum of its half-width, computed once per distinct width, so the
/// cost is a few radius² operations per pixel; the radius is a sixteenth of the font
/// size, and the canvas only the text's box.
fn dilate(fill: &[f32], (w, h): (usize, usize), radius: usize) -> Vec<f32> {
    let r = radius as isize;
    let half_widths: Vec<usize> = (-r..=r)
        .map(|dy| (((r * r - dy * dy) as f64).sqrt().round()) as usize)
        .collect();
    let mut by_width: Vec<Option<Vec<f32>>> = vec![None; radius + 1];
    for &hw in &half_widths {
        if by_width[hw].is_none() {
            by_width[hw] = Some(horizontal_max(fill, (w, h), hw));
        }
    }
    let mut out = vec![0f32; w * h];
    for (i, dy) in (-r..=r).enumerate() {
        let rows = by_width[half_widths[i]].as_ref().expect("computed above");
        for y in 0..h as isize {
            let sy = y + dy;
            if sy < 0 || sy >= h as isize {
                continue;
            }
            let (dst, src) = (y as usize * w, sy as usize * w);
            for x in 0..w {
                let v = rows[src + x];
                if v > out[dst + x] {
                    out[dst + x] = v;
                }
            }
        }
    }
    out
}

/// Each pixel's maximum over the `half` pixels either side in its row.
fn horizontal_max(fill: &[f32], (w, h): (usize, usize), half: usize) -> Vec<f32> {
    let mut out = vec![0f32; w * h];
    for y in 0..h {
        let row = &fill[y * w..(y + 1) * w];
        for x in 0..w {
            let (from, to) = (x.saturating_sub(half), (x + half + 1).min(w));
            out[y * w + x] = row[from..to].iter().copied().fold(0.0, f32::max);
        }
    }
    out
}

/// The letters in `colour` over the outline in [`OUTLINE`] (source-over per pixel).
fn paint(fill: &[f32], ring: &[f32], (w, h): (usize, usize), colour: Colour) -> RgbaImage {
    let [r, g, b, a] = colour.0;
    let alpha = f32::from(a) / 255.0;
    let mut image = RgbaImage::new(w as u32, h as u32);
    for (i, pixel) in image.pixels_mut().enumerate() {
        let (f, o) = (fill[i], ring[i].max(fill[i]));
        let out_a = f + o * (1.0 - f);
        if out_a <= 0.0 {
            continue;
        }
        let mix = |c: u8, dark: u8| {
            let v = (f32::from(c) * f + f32::from(dark) * o * (1.0 - f)) / out_a;
            v.round().clamp(0.0, 255.0) as u8
        };
        *pixel = Rgba([
            mix(r, OUTLINE[0]),
            mix(g, OUTLINE[1]),
            mix(b, OUTLINE[2]),
            (out_a * alpha * 255.0).round() as u8,
        ]);
    }
    image
}

/// `image` cut to the smallest box holding every pixel that is not fully transparent.
fn crop_to_ink(image: RgbaImage) -> RgbaImage {
    let (w, h) = image.dimensions();
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for (x, y, p) in image.enumerate_pixels() {
        if p[3] > 0 {
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
        }
    }
    if x1 <= x0 || y1 <= y0 {
        return RgbaImage::new(1, 1);
    }
    image::imageops::crop_imm(&image, x0, y0, x1 - x0, y1 - y0).to_image()
}

#[cfg(test)]
mod tests;
