//! A PDF page as a picture, drawn by poppler (Debian's `poppler-utils`: `pdfinfo`
//! reads the page count, size and encryption, `pdftoppm` draws one page to an
//! uncompressed TIFF) in child processes made like ffmpeg's (`ffmpeg::process`: no
//! shell, an empty environment plus the allow-list, the memory limit, the timeout,
//! bounded in number, started warm).
//!
//! Why `pdftoppm` and TIFF: on a thumbnail most of a run is poppler starting, and
//! `pdftoppm` (Splash) starts and draws in about two thirds of `pdftocairo`'s time; a
//! PNG's compression then cost more than the drawing (a 2048 px page: 122 ms as PNG,
//! 52 ms as TIFF), and the page is read once, here, so it need not be small.
//!
//! Why two runs may overlap: when the command fixes one side of its output whatever
//! the page ([`PageSize::Width`]: `resize-image` to a `width`), the page is drawn at
//! that side while `pdfinfo` reads it, and `pdfinfo`'s verdict (encrypted, no such
//! page, too many pixels) stops the drawing when it refuses; the drawing runs under
//! the memory limit meanwhile. Otherwise the size is read first.
//!
//! poppler rather than PDFium: it is a Debian package (security updates with the
//! system, no binary blob to vendor), and its command-line tools keep the parser out
//! of this process, where a crash or a runaway allocation ends only the child.
//!
//! A page is a picture of its size at 72 dpi (one pixel per point, turned by its
//! `/Rotate`), drawn at the size the command makes when it makes one of its own (see
//! [`Media::pdf_page`]). An encrypted, damaged or empty PDF fails
//! `unsupported_input_format` naming PDF; a `page` past the last one fails
//! `invalid_parameter`.

use std::path::Path;

use crate::format::{MediaFormat, IMAGE_INPUTS};
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::{output_path, MediaFile};

/// What `pdfinfo` says of a PDF and one of its pages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PageInfo {
    pub pages: u32,
    /// The page's size in points, turned by its rotation.
    pub width: f64,
    pub height: f64,
}

impl PageInfo {
    /// The page's size in whole pixels at 72 dpi.
    pub fn pixels(&self) -> (u32, u32) {
        let side = |v: f64| v.round().clamp(1.0, f64::from(u32::MAX)) as u32;
        (side(self.width), side(self.height))
    }
}

/// Reads `pdfinfo -f N -l N` output. `None` when it names no page count or no size
/// for page `page` (a damaged file that poppler still opened).
pub(crate) fn parse_info(text: &str, page: u32) -> Result<Option<PageInfo>, MediaError> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.trim_start().strip_prefix(':'))
            .map(str::trim)
    };
    if field("Encrypted").is_some_and(|v| v.starts_with("yes")) {
        return Err(refused("an encrypted PDF document"));
    }
    let Some(pages) = field("Pages").and_then(|v| v.parse::<u32>().ok()) else {
        return Ok(None);
    };
    if page > pages {
        return Err(out_of_range());
    }
    let prefix = format!("Page {page:>4} size");
    let Some(size) = field(&prefix) else {
        return Ok(None);
    };
    let mut numbers = size
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok());
    let (Some(width), Some(height)) = (numbers.next(), numbers.next()) else {
        return Ok(None);
    };
    let rotation = field(&format!("Page {page:>4} rot"))
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(0);
    let (width, height) = if rotation.rem_euclid(180) == 90 {
        (height, width)
    } else {
        (width, height)
    };
    if !(width.is_finite() && height.is_finite() && width > 0.0 && height > 0.0) {
        return Ok(None);
    }
    Ok(Some(PageInfo {
        pages,
        width,
        height,
    }))
}

/// `unsupported_input_format` naming what the PDF is.
fn refused(found: &'static str) -> MediaError {
    MediaError::UnreadFormat {
        found,
        takes: IMAGE_INPUTS.to_vec(),
    }
}

fn damaged() -> MediaError {
    refused("a damaged PDF document")
}

fn out_of_range() -> MediaError {
    MediaError::InvalidParameter {
        name: "page",
        expected: "the number of a page the PDF has",
    }
}

/// How big a page is drawn.
pub(crate) enum PageSize<F> {
    /// This many pixels wide, its height following the page's shape.
    Width(u32),
    /// This many pixels high, its width following the page's shape.
    Height(u32),
    /// Its 72-dpi size scaled by the factor this gives for that size.
    Scaled(F),
}

impl Media {
    /// Page `page` of the PDF `input` as a TIFF in `out_dir`, drawn at `size` (a
    /// command that makes a size of its own gets the page drawn at that size: more
    /// pixels drawn, not enlarged, or fewer drawn rather than drawn and shrunk).
    /// `ImageTooLarge` past the pixel limit.
    pub(crate) async fn pdf_page<F: FnOnce((u32, u32)) -> f64>(
        &self,
        input: &MediaFile,
        page: u32,
        size: PageSize<F>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let output = output_path(out_dir, MediaFormat::Tiff);
        let scale = match size {
            PageSize::Width(w) => {
                return self.draw_while_read(input, page, (w, true), &output).await
            }
            PageSize::Height(h) => {
                return self.draw_while_read(input, page, (h, false), &output).await
            }
            PageSize::Scaled(scale) => scale,
        };
        let info = self.page_info(input, page).await?;
        let (width, height) = info.pixels();
        let factor = Some(scale((width, height)))
            .filter(|f| f.is_finite() && *f > 0.0)
            .unwrap_or(1.0);
        let drawn = |v: u32| {
            (f64::from(v) * factor)
                .round()
                .clamp(1.0, f64::from(u32::MAX)) as u32
        };
        let (width, height) = (drawn(width), drawn(height));
        self.check_drawn(width, height)?;
        self.draw_page(input, page, (i64::from(width), i64::from(height)), &output)
            .await
    }

    /// Page `page` drawn `side` pixels wide (`wide`) or high, its other side following
    /// its shape, into `output` while `pdfinfo` reads it: the drawing's result waits
    /// for `pdfinfo`'s verdict, whose refusal drops (and so kills) the drawing.
    async fn draw_while_read(
        &self,
        input: &MediaFile,
        page: u32,
        (side, wide): (u32, bool),
        output: &Path,
    ) -> Result<MediaFile, MediaError> {
        let fixed = i64::from(side);
        let scale_to = if wide { (fixed, -1) } else { (-1, fixed) };
        let drawn = async { Ok(self.draw_page(input, page, scale_to, output).await) };
        let checked = async {
            let (width, height) = self.page_info(input, page).await?.pixels();
            let other =
                |at: u32, of: u32| (f64::from(side) * f64::from(at) / f64::from(of)).ceil() as u32;
            let (width, height) = if wide {
                (side, other(height, width))
            } else {
                (other(width, height), side)
            };
            self.check_drawn(width, height)
        };
        // The drawing first: `try_join!` starts its futures in order, and the drawing is
        // the longer run (each start hands a warm process its command line).
        let (drawn, ()) = tokio::try_join!(drawn, checked)?;
        drawn
    }

    /// `ImageTooLarge` for a page drawn at more pixels than the limit.
    fn check_drawn(&self, width: u32, height: u32) -> Result<(), MediaError> {
        crate::media::image::decode::check_pixels(width, height, self.config().max_image_pixels)
    }

    /// What `pdfinfo` says of page `page`, or the error that names why not.
    async fn page_info(&self, input: &MediaFile, page: u32) -> Result<PageInfo, MediaError> {
        let page_arg = page.to_string();
        let args = [
            "-f".as_ref(),
            page_arg.as_ref(),
            "-l".as_ref(),
            page_arg.as_ref(),
            input.path.as_os_str(),
        ];
        let info = match self.runner().run(Path::new("pdfinfo"), args).await {
            Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
            Err(MediaError::ProcessFailed {
                stderr_tail: stderr,
                ..
            }) => {
                tracing::debug!(%stderr, "pdfinfo refused a PDF");
                let locked = stderr.contains("password") || stderr.contains("Encrypted");
                return Err(if stderr.contains("Wrong page range") {
                    out_of_range()
                } else if locked {
                    refused("an encrypted PDF document")
                } else {
                    damaged()
                });
            }
            Err(e) => return Err(e),
        };
        parse_info(&info, page)?.ok_or_else(damaged)
    }

    /// Draws page `page` by `pdftoppm` next to `output`, as `pdftoppm` names it (its
    /// stem with `.tif`), `scale_x` and `scale_y` its `-scale-to-x` and `-scale-to-y`
    /// (-1: following the page's shape).
    async fn draw_page(
        &self,
        input: &MediaFile,
        page: u32,
        (scale_x, scale_y): (i64, i64),
        output: &Path,
    ) -> Result<MediaFile, MediaError> {
        let stem = output.with_extension("");
        let (page, x, y) = (page.to_string(), scale_x.to_string(), scale_y.to_string());
        let args = [
            "-tiff".as_ref(),
            "-singlefile".as_ref(),
            "-f".as_ref(),
            page.as_ref(),
            "-l".as_ref(),
            page.as_ref(),
            "-scale-to-x".as_ref(),
            x.as_ref(),
            "-scale-to-y".as_ref(),
            y.as_ref(),
            input.path.as_os_str(),
            stem.as_os_str(),
        ];
        match self.runner().run(Path::new("pdftoppm"), args).await {
            Ok(_) => Ok(MediaFile {
                path: stem.with_extension("tif"),
                format: MediaFormat::Tiff,
            }),
            Err(MediaError::ProcessFailed {
                stderr_tail: stderr,
                ..
            }) => {
                tracing::debug!(%stderr, "pdftoppm refused a PDF");
                Err(damaged())
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
