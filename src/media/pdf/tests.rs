use std::path::Path;

use super::drawer::{parse_answer, Answer};
use super::{PageInfo, PageSize};
use crate::format::MediaFormat;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;
use crate::media::testutil::{media, media_with_limit};

/// A one-page PDF of `width` × `height` points turned by `rotate`: text in the base-14
/// Helvetica, a filled box and a diagonal stroke.
fn page_pdf(width: u32, height: u32, rotate: u32) -> Vec<u8> {
    page_pdf_with(width, height, rotate, "")
}

/// [`page_pdf`] with `more` in its page's dictionary (a `/CropBox`).
fn page_pdf_with(width: u32, height: u32, rotate: u32, more: &str) -> Vec<u8> {
    let content = "BT /F1 24 Tf 40 60 Td (A page) Tj ET 0.2 0.4 0.8 rg 20 20 60 30 re f \
                   0 0 0 RG 3 w 10 10 m 150 90 l S\n";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Rotate {rotate} \
             {more} /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>"
        ),
        format!(
            "<< /Length {} >>\nstream\n{content}endstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn pdf_file(dir: &Path, bytes: &[u8]) -> MediaFile {
    let path = dir.join("in.pdf");
    std::fs::write(&path, bytes).unwrap();
    MediaFile {
        path,
        format: MediaFormat::Pdf,
    }
}

/// `pdftoppm`'s own drawing of `input` with `args` (`-scale-to-x` and the like), as
/// RGB pixels.
fn pdftoppm(input: &Path, args: &[&str], dir: &Path) -> image::RgbImage {
    let stem = dir.join("reference");
    let status = std::process::Command::new("pdftoppm")
        .args(["-png", "-singlefile"])
        .args(args)
        .arg(input)
        .arg(&stem)
        .status()
        .unwrap();
    assert!(status.success());
    image::open(stem.with_extension("png")).unwrap().to_rgb8()
}

/// The drawer's page of `input` drawn `width` wide.
async fn drawn(input: &MediaFile, width: u32, dir: &Path) -> image::RgbImage {
    let size = PageSize::<fn((u32, u32)) -> f64>::Width(width);
    let page = media().pdf_page(input, 1, size, dir).await.unwrap();
    image::open(&page.path).unwrap().to_rgb8()
}

#[test]
fn every_answer_of_the_drawer_is_read_and_anything_else_is_not() {
    assert_eq!(
        parse_answer("size 3 792.0000 612.0000"),
        Some(Answer::Size {
            pages: 3,
            width: 792.0,
            height: 612.0
        })
    );
    assert_eq!(
        parse_answer("drawn 256 332"),
        Some(Answer::Drawn {
            width: 256,
            height: 332
        })
    );
    assert_eq!(
        parse_answer("large 100000 129412"),
        Some(Answer::Large {
            width: 100_000,
            height: 129_412
        })
    );
    assert_eq!(parse_answer("encrypted"), Some(Answer::Encrypted));
    assert_eq!(parse_answer("memory"), Some(Answer::Memory));
    assert_eq!(parse_answer("crashed"), Some(Answer::Damaged));
    assert_eq!(parse_answer("no-page"), Some(Answer::NoPage));
    assert_eq!(parse_answer("drawn 256"), None);
    assert_eq!(parse_answer("ready"), None);
    assert_eq!(
        PageInfo {
            pages: 1,
            width: 612.4,
            height: 791.6
        }
        .pixels(),
        (612, 792)
    );
}

#[tokio::test]
async fn a_page_drawn_to_a_width_is_pdftoppm_s_drawing_pixel_for_pixel() {
    let dir = tempfile::tempdir().unwrap();
    let media = media();
    let input = pdf_file(dir.path(), &page_pdf(200, 120, 0));
    let width = PageSize::<fn((u32, u32)) -> f64>::Width(256);
    let page = media.pdf_page(&input, 1, width, dir.path()).await.unwrap();
    assert_eq!(page.format, MediaFormat::Bmp);
    let ours = image::open(&page.path).unwrap().to_rgb8();
    let theirs = pdftoppm(
        &input.path,
        &["-scale-to-x", "256", "-scale-to-y", "-1"],
        dir.path(),
    );
    assert_eq!(ours.dimensions(), (256, 154));
    assert_eq!(ours.dimensions(), theirs.dimensions());
    assert!(ours == theirs, "the drawing differs from pdftoppm's");
    // The same drawer again, from its idle pool: the same picture.
    let again = tempfile::tempdir().unwrap();
    let width = PageSize::<fn((u32, u32)) -> f64>::Width(256);
    let page = media
        .pdf_page(&input, 1, width, again.path())
        .await
        .unwrap();
    assert!(image::open(&page.path).unwrap().to_rgb8() == ours);
}

#[tokio::test]
async fn turned_and_cropped_pages_are_pdftoppm_s_drawings_of_what_a_viewer_shows() {
    let dir = tempfile::tempdir().unwrap();
    // Turned a quarter: 100 × 200 as shown. `pdftoppm` takes its sizes unturned.
    for rotate in [90, 270] {
        let input = pdf_file(dir.path(), &page_pdf(200, 100, rotate));
        let ours = drawn(&input, 300, dir.path()).await;
        let unturned = ["-scale-to-x", "600", "-scale-to-y", "300"];
        let theirs = pdftoppm(&input.path, &unturned, dir.path());
        assert_eq!(ours.dimensions(), (300, 600));
        assert!(
            ours == theirs,
            "the page turned {rotate} differs from pdftoppm's"
        );
    }
    // A crop box: what viewers show, as `pdftoppm -cropbox` draws it.
    let cropped = page_pdf_with(200, 100, 0, "/CropBox [20 10 180 90]");
    let input = pdf_file(dir.path(), &cropped);
    let ours = drawn(&input, 320, dir.path()).await;
    let args = ["-cropbox", "-scale-to-x", "320", "-scale-to-y", "-1"];
    let theirs = pdftoppm(&input.path, &args, dir.path());
    assert_eq!(ours.dimensions(), (320, 160));
    assert!(
        ours == theirs,
        "the cropped page differs from pdftoppm -cropbox's"
    );
}

#[tokio::test]
async fn a_turned_page_is_read_turned_and_scaled_to_the_size_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let media = media();
    let input = pdf_file(dir.path(), &page_pdf(200, 100, 90));
    let info = media.page_info(&input, 1).await.unwrap();
    assert_eq!((info.pages, info.pixels()), (1, (100, 200)));
    let scaled = PageSize::Scaled(|(w, h): (u32, u32)| {
        assert_eq!((w, h), (100, 200));
        0.5
    });
    let page = media.pdf_page(&input, 1, scaled, dir.path()).await.unwrap();
    let drawn = image::open(&page.path).unwrap();
    assert_eq!((drawn.width(), drawn.height()), (50, 100));
}

#[tokio::test]
async fn damaged_locked_absent_and_huge_pages_fail_with_their_codes_and_the_drawer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let media = media_with_limit(1_000_000);
    let draw = |bytes: Vec<u8>, page: u32, width: u32| {
        let media = media.clone();
        let dir = dir.path().to_path_buf();
        async move {
            let input = pdf_file(&dir, &bytes);
            let size = PageSize::<fn((u32, u32)) -> f64>::Width(width);
            media.pdf_page(&input, page, size, &dir).await
        }
    };
    let damaged = draw(b"%PDF-1.4\nnot a document".to_vec(), 1, 64).await;
    let damaged = damaged.err().unwrap();
    assert_eq!(damaged.code().as_str(), "unsupported_input_format");
    assert!(damaged.to_string().contains("damaged PDF"), "{damaged}");

    let absent = draw(page_pdf(200, 100, 0), 2, 64).await.err().unwrap();
    assert!(
        matches!(absent, MediaError::InvalidParameter { name: "page", .. }),
        "{absent}"
    );

    // 1 × 5000 points drawn 400 wide: 2 million pixels, past the limit, never drawn.
    let huge = draw(page_pdf(1, 5000, 0), 1, 400).await.err().unwrap();
    assert!(
        matches!(
            huge,
            MediaError::ImageTooLarge {
                width: 400,
                height: 2_000_000,
                ..
            }
        ),
        "{huge}"
    );

    // A page 10^40 points wide, its size read first (a scaled drawing): too large.
    let wide = String::from_utf8(page_pdf(200, 100, 0))
        .unwrap()
        .replace("[0 0 200 100]", &format!("[0 0 1{} 100]", "0".repeat(40)));
    let input = pdf_file(dir.path(), wide.as_bytes());
    let scaled = PageSize::Scaled(|_: (u32, u32)| 1.0);
    let wide = media.pdf_page(&input, 1, scaled, dir.path()).await;
    let wide = wide.err().unwrap();
    assert_eq!(wide.code().as_str(), "image_too_large", "{wide}");

    let fine = draw(page_pdf(200, 100, 0), 1, 64).await.unwrap();
    assert_eq!(image::open(&fine.path).unwrap().width(), 64);
}

/// A 12 000 px wide page (72 million pixels: under the pixel limit; 288 MB of
/// bitmap, long to draw and write) on an engine `configured` so, which fails with
/// `code`; then a small page on the same engine, drawn.
async fn a_huge_page_fails_then_a_small_one_is_drawn(
    configure: impl FnOnce(&mut crate::media::config::MediaConfig),
    code: &str,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = media().config().clone();
    configure(&mut config);
    let media = crate::media::engine::Media::new(config);
    let input = pdf_file(dir.path(), &page_pdf(200, 100, 0));
    let size = PageSize::<fn((u32, u32)) -> f64>::Width(12_000);
    let err = media.pdf_page(&input, 1, size, dir.path()).await;
    let err = err.err().unwrap();
    assert_eq!(err.code().as_str(), code, "{err}");
    let size = PageSize::<fn((u32, u32)) -> f64>::Width(64);
    let page = media.pdf_page(&input, 1, size, dir.path()).await.unwrap();
    assert_eq!(image::open(&page.path).unwrap().width(), 64);
}

#[tokio::test]
async fn a_page_whose_bitmap_is_past_the_memory_limit_fails_memory_limit_exceeded() {
    let limit = |c: &mut crate::media::config::MediaConfig| c.process_memory_limit = 256 << 20;
    a_huge_page_fails_then_a_small_one_is_drawn(limit, "memory_limit_exceeded").await;
}

#[tokio::test]
async fn a_page_past_the_timeout_fails_processing_timeout_and_the_next_page_is_drawn() {
    let timeout = |c: &mut crate::media::config::MediaConfig| {
        c.process_timeout = std::time::Duration::from_millis(300)
    };
    a_huge_page_fails_then_a_small_one_is_drawn(timeout, "processing_timeout").await;
}
