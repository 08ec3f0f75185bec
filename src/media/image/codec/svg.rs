//! SVG through resvg (pure Rust: roxmltree parses, usvg resolves styles and shapes
//! text, tiny-skia paints), drawn straight at the size the edit needs, so a logo is
//! as sharp at 4096 px as at 64.
//!
//! An SVG is a program that may point anywhere; this reader lets it point nowhere:
//! - no file or URL is opened: `<image>` reads only `data:` URIs (the default
//!   resolver would read any path on this machine), there is no resources directory,
//!   and usvg has no network client, so `@import`, `@font-face` and external `<use>`
//!   are ignored;
//! - text is set in the bundled DejaVu Sans, the one font in the font database (no
//!   system font is looked up, so every node draws the same glyphs);
//! - the XML is parsed with a node limit (roxmltree also refuses entity loops and
//!   expansion more than 10 deep), and the canvas is checked against the pixel limit
//!   before anything is drawn: an SVG that claims to be 10⁹ px wide is
//!   `image_too_large`.
//!
//! SVGZ (gzip) is not read: it would need a decompression bound of its own.

use std::sync::{Arc, OnceLock};

use image::{DynamicImage, RgbImage, RgbaImage};
use resvg::usvg::roxmltree;
use resvg::{tiny_skia, usvg};

use crate::media::error::MediaError;

/// The most XML nodes (elements, text, entity expansions) an SVG may have: a large
/// illustration has tens of thousands; past this it is a bomb, not a drawing.
pub(crate) const MAX_NODES: u32 = 500_000;

/// A parsed SVG and its own (intrinsic) size, rounded to whole pixels.
pub(crate) struct SvgFile {
    tree: usvg::Tree,
    pub width: u32,
    pub height: u32,
}

/// The font database: the bundled font and nothing else, every generic family
/// (`serif`, `monospace`, …) mapped onto it.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            db.load_font_data(crate::media::image::text::FONT_BYTES.to_vec());
            let family = "DejaVu Sans";
            db.set_serif_family(family);
            db.set_sans_serif_family(family);
            db.set_monospace_family(family);
            db.set_cursive_family(family);
            db.set_fantasy_family(family);
            Arc::new(db)
        })
        .clone()
}

/// usvg's options with every way out closed (see the module's documentation).
fn options() -> usvg::Options<'static> {
    usvg::Options {
        resources_dir: None,
        font_family: "DejaVu Sans".into(),
        fontdb: fonts(),
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: usvg::ImageHrefResolver::default_data_resolver(),
            resolve_string: Box::new(|href, _| {
                tracing::debug!(%href, "an SVG's reference to an outside image was ignored");
                None
            }),
        },
        ..usvg::Options::default()
    }
}

/// Parses `bytes` and checks its size against `max_pixels`. `InvalidMedia` for what is
/// not a well-formed SVG (or has more than [`MAX_NODES`] nodes), `ImageTooLarge` for
/// a canvas past the limit.
pub(crate) fn open(bytes: &[u8], max_pixels: u64) -> Result<SvgFile, MediaError> {
    let invalid = |why: &str| MediaError::InvalidMedia(format!("the SVG {why}"));
    let text = std::str::from_utf8(bytes).map_err(|_| invalid("is not UTF-8 text"))?;
    let xml_options = roxmltree::ParsingOptions {
        allow_dtd: true,
        nodes_limit: MAX_NODES,
    };
    let doc = roxmltree::Document::parse_with_options(text, xml_options).map_err(|e| {
        tracing::debug!(error = %e, "an SVG did not parse");
        match e {
            roxmltree::Error::NodesLimitReached => invalid("has too many XML nodes"),
            roxmltree::Error::EntityReferenceLoop(_) => {
                invalid("has entities that expand too far (an entity bomb)")
            }
            _ => invalid("is not well-formed XML"),
        }
    })?;
    let tree = usvg::Tree::from_xmltree(&doc, &options()).map_err(|e| {
        tracing::debug!(error = %e, "usvg refused an SVG");
        match e {
            usvg::Error::ElementsLimitReached => invalid("has too many elements"),
            usvg::Error::InvalidSize => invalid("has no valid width, height or viewBox"),
            _ => invalid("is not an SVG picture"),
        }
    })?;
    let size = tree.size();
    let side = |v: f32| v.ceil().clamp(1.0, u32::MAX as f32) as u32;
    let (width, height) = (side(size.width()), side(size.height()));
    check_pixels(width, height, max_pixels)?;
    Ok(SvgFile {
        tree,
        width,
        height,
    })
}

/// `ImageTooLarge` for a canvas of more than `max_pixels`.
fn check_pixels(width: u32, height: u32, max_pixels: u64) -> Result<(), MediaError> {
    if u64::from(width) * u64::from(height) > max_pixels {
        return Err(MediaError::ImageTooLarge {
            width: width.into(),
            height: height.into(),
            limit: max_pixels,
        });
    }
    Ok(())
}

impl SvgFile {
    /// The size [`SvgFile::draw`] paints for these minimums: the picture scaled, keeping
    /// its shape, until it covers `min_width` × `min_height` (smaller than its own size
    /// too: a vector has no resolution to lose), within `max_pixels` (a cover crop of a
    /// thin drawing may ask for more than the limit; it is then drawn as large as the
    /// limit allows and resampled).
    pub fn drawn_size(&self, (min_width, min_height): (u32, u32), max_pixels: u64) -> (u32, u32) {
        let (w, h) = (f64::from(self.width), f64::from(self.height));
        let mut scale = (f64::from(min_width) / w).max(f64::from(min_height) / h);
        let most = (max_pixels as f64 / (w * h)).sqrt();
        let capped = scale * scale * w * h > max_pixels as f64;
        if capped {
            scale = most;
        }
        let side = |v: f64| ((v * scale).round().clamp(1.0, u32::MAX.into())) as u32;
        if capped {
            // Rounded down, so that the size stays within the limit.
            let down = |v: f64| ((v * scale).floor().clamp(1.0, u32::MAX.into())) as u32;
            return (down(w), down(h));
        }
        (side(w).max(min_width), side(h).max(min_height))
    }

    /// Paints the picture at [`SvgFile::drawn_size`] (checked against `max_pixels`):
    /// `Rgba8` when anything is transparent, else `Rgb8`.
    pub fn draw(self, min: (u32, u32), max_pixels: u64) -> Result<DynamicImage, MediaError> {
        let (width, height) = self.drawn_size(min, max_pixels);
        check_pixels(width, height, max_pixels)?;
        let mut pixmap =
            tiny_skia::Pixmap::new(width, height).ok_or_else(|| MediaError::ImageTooLarge {
                width: width.into(),
                height: height.into(),
                limit: max_pixels,
            })?;
        let size = self.tree.size();
        let transform = tiny_skia::Transform::from_scale(
            width as f32 / size.width(),
            height as f32 / size.height(),
        );
        resvg::render(&self.tree, transform, &mut pixmap.as_mut());
        let mut rgba = Vec::with_capacity(pixmap.data().len());
        let mut opaque = true;
        for pixel in pixmap.pixels() {
            let c = pixel.demultiply();
            opaque &= c.alpha() == 255;
            rgba.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
        }
        drop(pixmap);
        let image = RgbaImage::from_raw(width, height, rgba).expect("the buffer fits the size");
        Ok(if opaque {
            let rgb: Vec<u8> = image.pixels().flat_map(|p| [p[0], p[1], p[2]]).collect();
            DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, rgb).expect("fits"))
        } else {
            DynamicImage::ImageRgba8(image)
        })
    }
}

#[cfg(test)]
mod tests;
