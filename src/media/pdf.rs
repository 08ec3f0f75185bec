//! A PDF page as a picture, drawn by poppler in the PDF drawer ([`drawer`]: a process
//! of ours that loads poppler once and forks a child per page, started like ffmpeg's
//! (`ffmpeg::child`: no shell, an empty environment plus the allow-list, the memory
//! limit, the timeout, bounded in number).
//!
//! Why poppler: it is a Debian package (security updates with the system, no binary
//! blob to vendor, as PDFium would be), and its Splash rasterizer is what `pdftoppm`
//! draws with: our pages are `pdftoppm`'s, pixel for pixel. Why out of this process:
//! a crash or a runaway allocation in the parser ends only the drawer's child.
//!
//! A page is a picture of its size at 72 dpi (one pixel per point of its crop box,
//! turned by its `/Rotate`), drawn at the size the command makes when it makes one of
//! its own (see [`Media::pdf_page`]): more pixels drawn, not enlarged, or fewer drawn
//! rather than drawn and shrunk. When the command fixes one side of its output whatever
//! the page ([`PageSize::Width`]: `resize-image` to a `width`), the page is drawn at
//! that side in one request; otherwise its size is read first. An encrypted, damaged
//! or empty PDF fails `unsupported_input_format` naming PDF; a `page` past the last
//! one fails `invalid_parameter`; a page that would be drawn past the pixel limit,
//! `image_too_large`, before it is drawn.

use std::path::Path;

use crate::format::{MediaFormat, IMAGE_INPUTS};
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::file::{output_path, MediaFile};
use drawer::{Answer, Ask};

pub(crate) mod drawer;

/// What the drawer says of a PDF and one of its pages.
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
    /// Page `page` of the PDF `input` as a BMP in `out_dir`, drawn at `size`.
    /// `ImageTooLarge` past the pixel limit.
    pub(crate) async fn pdf_page<F: FnOnce((u32, u32)) -> f64>(
        &self,
        input: &MediaFile,
        page: u32,
        size: PageSize<F>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let size = match size {
            PageSize::Width(w) => (i64::from(w), -1),
            PageSize::Height(h) => (-1, i64::from(h)),
            PageSize::Scaled(scale) => {
                let (width, height) = self.page_info(input, page).await?.pixels();
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
                (i64::from(width), i64::from(height))
            }
        };
        let output = output_path(out_dir, MediaFormat::Bmp);
        match self.ask_drawer(input, page, size, &output).await? {
            Answer::Drawn { .. } => Ok(MediaFile {
                path: output,
                format: MediaFormat::Bmp,
            }),
            other => Err(self.refusal(other)),
        }
    }

    /// `ImageTooLarge` for a page drawn at more pixels than the limit.
    fn check_drawn(&self, width: u32, height: u32) -> Result<(), MediaError> {
        crate::media::image::decode::check_pixels(width, height, self.config().max_image_pixels)
    }

    /// What the drawer says of page `page`, or the error that names why not.
    async fn page_info(&self, input: &MediaFile, page: u32) -> Result<PageInfo, MediaError> {
        match self.ask_drawer(input, page, (0, 0), Path::new("")).await? {
            Answer::Size {
                pages,
                width,
                height,
            } => Ok(PageInfo {
                pages,
                width,
                height,
            }),
            other => Err(self.refusal(other)),
        }
    }

    async fn ask_drawer(
        &self,
        input: &MediaFile,
        page: u32,
        size: (i64, i64),
        output: &Path,
    ) -> Result<Answer, MediaError> {
        let ask = Ask {
            input: &input.path,
            output,
            page,
            size,
            max_pixels: self.config().max_image_pixels,
        };
        self.pdf_drawers().ask(ask).await
    }

    /// The error of an answer that is not the one asked for.
    fn refusal(&self, answer: Answer) -> MediaError {
        match answer {
            Answer::Encrypted => refused("an encrypted PDF document"),
            Answer::NoPage => out_of_range(),
            Answer::Large { width, height } => MediaError::ImageTooLarge {
                width,
                height,
                limit: self.config().max_image_pixels,
            },
            Answer::Memory => MediaError::MemoryLimitExceeded {
                program: "the PDF drawer".into(),
                limit_mib: self.pdf_drawers().memory_limit() >> 20,
            },
            Answer::Damaged | Answer::Size { .. } | Answer::Drawn { .. } => damaged(),
        }
    }
}

#[cfg(test)]
mod tests;
