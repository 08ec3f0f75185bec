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

use crate::media::image::geometry::Colour;

/// DejaVu Sans 2.37 (Debian's fonts-dejavu-core).
pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The most characters a `text` may have.
pub const MAX_CHARS: usize = 200;

/// The bytes drawing text holds per pixel of its canvas at most: the letters'
/// coverage, the outline's and one horizontal maximum while the outline is grown, or
/// the two coverages and the painted picture after (4 bytes each).
pub const MEMORY_PER_PIXEL: u64 = 3 * 4;

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

/// The glyphs of a layout outlined, and the canvas that holds their ink with room for
/// the outline: its top-left in layout pixels and its size.
struct Canvas {
    outlined: Vec<ab_glyph::OutlinedGlyph>,
    origin: (i64, i64),
    size: (usize, usize),
}

impl Layout {
    /// The most memory [`Layout::render`] holds at once: its canvas at
    /// [`MEMORY_PER_PIXEL`] (exact: the glyphs are outlined to find it, not drawn).
    pub fn memory(&self) -> u64 {
        self.canvas()
            .map_or(0, |c| (c.size.0 * c.size.1) as u64 * MEMORY_PER_PIXEL)
    }

    /// The canvas, or `None` for text with no ink at all. The ink may reach past the
    /// advance box (overhangs, accents above the ascent): the canvas is the union of
    /// every glyph's pixel bounds, padded by the outline.
    fn canvas(&self) -> Option<Canvas> {
        let fonts = fonts();
        let pad = self.outline as i64 + 1;
        let outlined: Vec<_> = self
            .glyphs
            .iter()
            .filter_map(|g| {
                let glyph = g.id.with_scale_and_position(self.scale, point(g.x, g.y));
                fonts.raster.outline_glyph(glyph)
            })
            .collect();
        let bounds = outlined
            .iter()
            .map(|o| o.px_bounds())
            .reduce(|a, b| ab_glyph::Rect {
                min: point(a.min.x.min(b.min.x), a.min.y.min(b.min.y)),
                max: point(a.max.x.max(b.max.x), a.max.y.max(b.max.y)),
            })?;
        let (x0, y0) = (bounds.min.x.floor() as i64, bounds.min.y.floor() as i64);
        let w = bounds.max.x.ceil() as i64 - x0 + 2 * pad;
        let h = bounds.max.y.ceil() as i64 - y0 + 2 * pad;
        Some(Canvas {
            outlined,
            origin: (x0 - pad, y0 - pad),
            size: (w as usize, h as usize),
        })
    }

    /// The laid-out text drawn (see [`render_text`]).
    pub fn render(&self, colour: Colour) -> RgbaImage {
        let Some(Canvas {
            outlined,
            origin: (x0, y0),
            size: (w, h),
        }) = self.canvas()
        else {
            return RgbaImage::new(1, 1);
        };
        let mut fill = vec![0f32; w * h];
        for glyph in &outlined {
            let b = glyph.px_bounds();
            let (gx, gy) = (b.min.x as i64 - x0, b.min.y as i64 - y0);
            glyph.draw(|x, y, c| {
                let px = (gx + i64::from(x)) as usize;
                let py = (gy + i64::from(y)) as usize;
                let cell = &mut fill[py * w + px];
                // Overlapping glyphs (a mark on its letter) add up, capped at full.
                *cell = (*cell + c).min(1.0);
            });
        }
        let ring = dilate(&fill, (w, h), self.outline as usize);
        paint(&fill, &ring, (w, h), colour)
    }
}

/// The letters' coverage grown by a disc of `radius` pixels: the outline's coverage
/// ([`mediaedit_pixels::dilate_disc`], which keeps two canvases besides the letters',
/// whatever the radius: [`MEMORY_PER_PIXEL`] counts them). It runs in that crate so
/// that it is optimised in every build: at `fontSize` 2048 it takes hundreds of
/// passes over the canvas.
fn dilate(fill: &[f32], size: (usize, usize), radius: usize) -> Vec<f32> {
    mediaedit_pixels::dilate_disc(fill, size, radius)
}

/// The letters in `colour` over the outline in [`OUTLINE`] (source-over per pixel),
/// on a picture cut to the smallest box holding every pixel with ink (1×1 and
/// transparent when there is none). The outline covers the letters, so its box is the
/// ink's.
fn paint(fill: &[f32], ring: &[f32], (w, h): (usize, usize), colour: Colour) -> RgbaImage {
    let [r, g, b, a] = colour.0;
    let alpha = f32::from(a) / 255.0;
    let coverage = |i: usize| {
        let (f, o) = (fill[i], ring[i].max(fill[i]));
        (f, o, f + o * (1.0 - f))
    };
    let inked = |i: usize| (coverage(i).2 * alpha * 255.0).round() >= 1.0;
    let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
    for y in 0..h {
        let row = y * w;
        if let Some(first) = (0..w).find(|&x| inked(row + x)) {
            let last = (0..w).rev().find(|&x| inked(row + x)).unwrap_or(first);
            (x0, x1) = (x0.min(first), x1.max(last + 1));
            (y0, y1) = (y0.min(y), y + 1);
        }
    }
    if x1 <= x0 || y1 <= y0 {
        return RgbaImage::new(1, 1);
    }
    let mut image = RgbaImage::new((x1 - x0) as u32, (y1 - y0) as u32);
    for (x, y, pixel) in image.enumerate_pixels_mut() {
        let (f, o, out_a) = coverage((y as usize + y0) * w + x as usize + x0);
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

#[cfg(test)]
mod tests;
