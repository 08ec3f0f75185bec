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
use crate::media::{Media, MediaError, MediaFile};

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
    let scale = |(width, height): (u32, u32)| {
        let made = |times: u32| {
            let size = Some((width.saturating_mul(times), height.saturating_mul(times)));
            let input = Shape {
                size,
                frames: Some(1),
                seconds: None,
            };
            predict(input)
        };
        match (made(1), made(2)) {
            (Some((w, h)), Some(same)) if (w, h) == same => {
                (f64::from(w) / f64::from(width)).max(f64::from(h) / f64::from(height))
            }
            _ => 1.0,
        }
    };
    media.pdf_page(input, page, scale, dir).await
}
