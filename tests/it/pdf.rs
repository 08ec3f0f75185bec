//! PDF sources (docs/API.md, "Inputs"): a page (`page`, 1 by default; `page:N` in a
//! render) drawn by poppler in a child process, at the size the command makes, and
//! compared with `pdftoppm`'s drawing at that size; encrypted, truncated and
//! page-out-of-range files fail with codes that name PDF, and a page too large to
//! draw with `image_too_large`.

use image::{DynamicImage, GenericImageView};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

/// A PDF of 200 × 100 pt pages, each drawn by its content stream, written by hand
/// (objects, cross-reference table with their byte offsets, trailer).
fn pdf(pages: &[&str]) -> Vec<u8> {
    let kids: Vec<String> = (0..pages.len())
        .map(|i| format!("{} 0 R", 3 + 2 * i))
        .collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            pages.len()
        ),
    ];
    for (i, content) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents {} 0 R >>",
            4 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{object}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for offset in offsets {
        out.push_str(&format!("{offset:010} 00000 n \n"));
    }
    out.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.into_bytes()
}

/// Page 1: red left half, white right; page 2: a blue right half.
pub fn two_pages() -> Vec<u8> {
    pdf(&["1 0 0 rg 0 0 100 100 re f", "0 0 1 rg 100 0 100 100 re f"])
}

/// `pdftoppm`'s drawing of `page` at `width` × `height`.
fn reference(bytes: &[u8], page: u32, width: u32, height: u32) -> DynamicImage {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pdf");
    std::fs::write(&input, bytes).unwrap();
    let page = page.to_string();
    let status = std::process::Command::new("pdftoppm")
        .args(["-png", "-singlefile", "-f", &page, "-l", &page])
        .args([
            "-scale-to-x",
            &width.to_string(),
            "-scale-to-y",
            &height.to_string(),
        ])
        .arg(&input)
        .arg(dir.path().join("ref"))
        .status()
        .unwrap();
    assert!(status.success());
    fixtures::decode(&dir.path().join("ref.png"))
}

fn mean_difference(a: &DynamicImage, b: &DynamicImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let (a, b) = (a.to_rgb8(), b.to_rgb8());
    let sum: f64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(p, q)| (f64::from(*p) - f64::from(*q)).abs())
        .sum();
    sum / a.as_raw().len() as f64
}

#[tokio::test]
async fn a_pdf_page_is_drawn_at_the_size_asked_for_as_pdftoppm_draws_it() {
    let app = spawn_app().await;
    let bytes = two_pages();
    let source = app.fixtures.add("doc.pdf", bytes.clone());
    // The first page by default, drawn at 1000 px (5× its 72-dpi size).
    let doc = app
        .run_done(edit(
            &source,
            &["resize-image"],
            Some(json!({"width": 1000, "format": "png"})),
        ))
        .await;
    let ours = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(ours.dimensions(), (1000, 500));
    assert_eq!(ours.get_pixel(100, 250).0, [255, 0, 0, 255]);
    let diff = mean_difference(&ours, &reference(&bytes, 1, 1000, 500));
    assert!(diff < 1.0, "mean difference {diff} from pdftoppm");
    // `page: 2`, through an image command of another kind.
    let doc = app
        .run_done(edit(&source, &["image-to-webp"], Some(json!({"page": 2}))))
        .await;
    let page_two = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(page_two.dimensions(), (200, 100));
    let [r, g, b, _] = page_two.get_pixel(150, 50).0;
    assert!(
        b > 200 && r < 40 && g < 40,
        "page 2 is blue on the right: {r},{g},{b}"
    );
}

#[tokio::test]
async fn a_render_url_reads_the_page_its_transform_names() {
    let app = spawn_app().await;
    let key = render_key(&app).await;
    let bytes = two_pages();
    let source = b64(&app.fixtures.add("doc.pdf", bytes.clone()));
    let url = render_url(&app, &key, "w:400,page:2,f:png", &source);
    let response = get(&app, &url, None).await;
    assert_eq!(response.status(), 200);
    let image = image::load_from_memory(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(image.dimensions(), (400, 200));
    let diff = mean_difference(&image, &reference(&bytes, 2, 400, 200));
    assert!(diff < 1.0, "mean difference {diff} from pdftoppm");
}

#[tokio::test]
async fn encrypted_truncated_and_out_of_range_pdfs_fail_with_codes_naming_pdf() {
    let app = spawn_app().await;
    let bytes = two_pages();
    let dir = tempfile::tempdir().unwrap();
    let (plain, locked) = (dir.path().join("a.pdf"), dir.path().join("locked.pdf"));
    std::fs::write(&plain, &bytes).unwrap();
    let status = std::process::Command::new("qpdf")
        .args(["--encrypt", "user", "owner", "256", "--"])
        .args([&plain, &locked])
        .status()
        .unwrap();
    assert!(status.success());
    let cases = [
        (
            "locked.pdf",
            std::fs::read(&locked).unwrap(),
            "encrypted PDF",
        ),
        ("cut.pdf", bytes[..300].to_vec(), "damaged PDF"),
    ];
    // Without a size the page's size is read first; with a `width` the page is drawn
    // while it is read, and what `pdfinfo` refuses still decides the error.
    for options in [None, Some(json!({"width": 300}))] {
        for (name, file, said) in &cases {
            let source = app.fixtures.add(name, file.clone());
            let error = app
                .run_failed(edit(&source, &["resize-image"], options.clone()))
                .await;
            assert_eq!(error["code"], "unsupported_input_format", "{name}: {error}");
            assert!(
                error["detail"].as_str().unwrap().contains(said),
                "{name}: {error}"
            );
        }
        let source = app.fixtures.add("doc.pdf", bytes.clone());
        let mut page_three = options.clone().unwrap_or(json!({}));
        page_three["page"] = json!(3);
        let error = app
            .run_failed(edit(&source, &["resize-image"], Some(page_three)))
            .await;
        assert_eq!(error["code"], "invalid_parameter", "{error}");
        assert!(
            error["detail"].as_str().unwrap().contains("page"),
            "{error}"
        );
    }
    // A sliver of a page 2 pt wide and 14400 high, asked 4000 px wide, would be
    // 115 200 000 000 pixels: refused from its size, the drawing stopped.
    let sliver = String::from_utf8(bytes)
        .unwrap()
        .replacen("[0 0 200 100]", "[0 0 2 14400]", 1);
    let source = app.fixtures.add("sliver.pdf", sliver.into_bytes());
    let error = app
        .run_failed(edit(
            &source,
            &["resize-image"],
            Some(json!({"width": 4000})),
        ))
        .await;
    assert_eq!(error["code"], "image_too_large", "{error}");
}
