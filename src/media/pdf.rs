//! A PDF page as a picture, drawn by poppler (Debian's `poppler-utils`: `pdfinfo`
//! reads the page count, size and encryption, `pdftocairo` draws one page to PNG) in
//! child processes made like ffmpeg's (`ffmpeg::process`: no shell, an empty
//! environment plus the allow-list, the memory limit, the timeout, bounded in number).
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

fn out_of_range() -> MediaError {
    MediaError::InvalidParameter {
        name: "page",
        expected: "the number of a page the PDF has",
    }
}

impl Media {
    /// Page `page` of the PDF `input` as a PNG in `out_dir`, drawn at its 72-dpi size
    /// scaled by `scale(size)` (a command that makes a size of its own gets the page
    /// drawn at that size: more pixels drawn, not enlarged, or fewer drawn rather than
    /// drawn and shrunk). `ImageTooLarge` past the pixel limit, before anything is
    /// drawn.
    pub(crate) async fn pdf_page(
        &self,
        input: &MediaFile,
        page: u32,
        scale: impl FnOnce((u32, u32)) -> f64,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let damaged = || refused("a damaged PDF document");
        let page_arg = page.to_string();
        let info = self
            .runner()
            .run(
                Path::new("pdfinfo"),
                [
                    "-f".as_ref(),
                    page_arg.as_ref(),
                    "-l".as_ref(),
                    page_arg.as_ref(),
                    input.path.as_os_str(),
                ],
            )
            .await;
        let info = match info {
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
        let info = parse_info(&info, page)?.ok_or_else(damaged)?;
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
        crate::media::image::decode::check_pixels(width, height, self.config().max_image_pixels)?;
        let output = output_path(out_dir, MediaFormat::Png);
        let stem = output.with_extension("");
        let (w, h) = (width.to_string(), height.to_string());
        let args = [
            "-png".as_ref(),
            "-singlefile".as_ref(),
            "-f".as_ref(),
            page_arg.as_ref(),
            "-l".as_ref(),
            page_arg.as_ref(),
            "-scale-to-x".as_ref(),
            w.as_ref(),
            "-scale-to-y".as_ref(),
            h.as_ref(),
            input.path.as_os_str(),
            stem.as_os_str(),
        ];
        match self.runner().run(Path::new("pdftocairo"), args).await {
            Ok(_) => {}
            Err(MediaError::ProcessFailed {
                stderr_tail: stderr,
                ..
            }) => {
                tracing::debug!(%stderr, "pdftocairo refused a PDF");
                return Err(damaged());
            }
            Err(e) => return Err(e),
        }
        Ok(MediaFile {
            path: output,
            format: MediaFormat::Png,
        })
    }
}

#[cfg(test)]
mod tests;
