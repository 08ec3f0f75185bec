//! A PDF source becomes the picture of one page before an image command runs: `page`
//! (1 by default; `page:N` in a render's transform) drawn by poppler
//! (`media::pdf`), then handed to the command as a PNG.
//!
//! The page is a picture of its 72-dpi size. A command whose output does not depend on
//! how many pixels the page has — `resize-image` to a `width`/`height` box — has the
//! page drawn at the size it makes (vector-sharp, not a 72-dpi bitmap scaled up, and a
//! thumbnail drawn small rather than drawn large and shrunk); any other (a `scale`, a
//! crop in pixels, a rotation) gets the 72-dpi picture.

use std::path::Path;

use super::options::{OptionSpec, Options};
use super::spec::Shape;
use crate::media::{Media, MediaError, MediaFile, PageSize};

/// Which page of a PDF source the image commands read.
pub const PAGE: OptionSpec = OptionSpec::integer(
    "page",
    "The page of a PDF source to read (1–100000, 1 by default); other sources have one picture and ignore it.",
    1.0,
    100_000.0,
    Some(1.0),
);

/// Page [`PAGE`] of the PDF `input`, drawn as the command needs it, into `dir`:
/// `predict` is the command's size of output for an input's shape.
pub(super) async fn draw(
    predict: impl Fn(Shape) -> Option<(u32, u32)>,
    media: &Media,
    input: &MediaFile,
    options: &Options,
    dir: &Path,
) -> Result<MediaFile, MediaError> {
    let page = options.number(&PAGE) as u32;
    let made = |(width, height): (u32, u32)| {
        predict(Shape {
            size: Some((width, height)),
            frames: Some(1),
            seconds: None,
        })
    };
    let scale = |(width, height): (u32, u32)| {
        let times = |k: u32| made((width.saturating_mul(k), height.saturating_mul(k)));
        match (times(1), times(2)) {
            (Some((w, h)), Some(same)) if (w, h) == same => {
                (f64::from(w) / f64::from(width)).max(f64::from(h) / f64::from(height))
            }
            _ => 1.0,
        }
    };
    media
        .pdf_page(
            input,
            page,
            fixed_side(made).unwrap_or(PageSize::Scaled(scale)),
            dir,
        )
        .await
}

/// Pages of every shape and size a command could be given, tiny ones included (a
/// `withoutEnlargement` resize leaves those as they are).
const PROBES: [(u32, u32); 6] = [
    (1, 2),
    (2, 1),
    (500, 1000),
    (1000, 500),
    (3000, 7000),
    (7000, 3000),
];

/// The side every output has whatever page the command is given (`resize-image` to a
/// `width` alone): then the page can be drawn at that side without its size being
/// read first, and the drawer is asked once (see `media::pdf`).
fn fixed_side<F>(made: impl Fn((u32, u32)) -> Option<(u32, u32)>) -> Option<PageSize<F>> {
    let outputs: Option<Vec<(u32, u32)>> = PROBES.iter().map(|&shape| made(shape)).collect();
    let outputs = outputs?;
    let (width, height) = *outputs.first()?;
    if width > 0 && outputs.iter().all(|&(w, _)| w == width) {
        Some(PageSize::Width(width))
    } else if height > 0 && outputs.iter().all(|&(_, h)| h == height) {
        Some(PageSize::Height(height))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Size = PageSize<fn((u32, u32)) -> f64>;

    fn side(made: impl Fn((u32, u32)) -> Option<(u32, u32)>) -> Option<(char, u32)> {
        match fixed_side::<fn((u32, u32)) -> f64>(made) {
            Some(Size::Width(w)) => Some(('w', w)),
            Some(Size::Height(h)) => Some(('h', h)),
            _ => None,
        }
    }

    #[test]
    fn a_side_every_output_shares_is_drawn_at_without_reading_the_page_first() {
        let wide = |(w, h): (u32, u32)| Some((256, 256 * h / w));
        assert_eq!(side(wide), Some(('w', 256)));
        let high = |(w, h): (u32, u32)| Some((300 * w / h, 300));
        assert_eq!(side(high), Some(('h', 300)));
        // A box: the side that fills it depends on the page's shape.
        let boxed = |(w, h): (u32, u32)| {
            let k = (256.0 / w as f64).min(256.0 / h as f64);
            Some(((w as f64 * k) as u32, (h as f64 * k) as u32))
        };
        assert_eq!(side(boxed), None);
        // Not enlarged: a tiny page keeps its size.
        let kept = |(w, h): (u32, u32)| Some(if w < 256 { (w, h) } else { (256, 256 * h / w) });
        assert_eq!(side(kept), None);
        assert_eq!(side(Some), None, "the page's own size");
    }
}
