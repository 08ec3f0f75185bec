//! SVG sources (docs/API.md, "Inputs"): drawn by resvg at the size the edit asks for
//! (compared with librsvg, through ffmpeg, at the same size), through an edit and a
//! render URL; nothing an SVG points at is fetched (a loopback listener counts the
//! connections); entity bombs and absurd canvases fail with their codes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use image::{DynamicImage, GenericImageView, ImageFormat};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

/// A 20×10 logo: a red left half, a blue disc on the right, transparent around it.
const LOGO: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 10" width="20" height="10">
  <rect width="10" height="10" fill="#e01010"/>
  <circle cx="15" cy="5" r="4" fill="#1020e0"/>
</svg>"##;

/// librsvg's drawing of `svg` at `width` × `height` (ffmpeg's `librsvg` decoder), RGBA.
fn reference(svg: &str, width: u32, height: u32) -> DynamicImage {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.svg"), dir.path().join("ref.png"));
    std::fs::write(&input, svg).unwrap();
    let status = std::process::Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-f",
            "svg_pipe",
            "-width",
            &width.to_string(),
        ])
        .args(["-height", &height.to_string(), "-i"])
        .arg(&input)
        .args(["-frames:v", "1", "-pix_fmt", "rgba"])
        .arg(&output)
        .status()
        .unwrap();
    assert!(status.success());
    fixtures::decode(&output)
}

/// Mean absolute difference per channel of two RGBA pictures of the same size, with
/// the colour of transparent pixels (which means nothing) left out.
fn mean_difference(a: &DynamicImage, b: &DynamicImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let (a, b) = (a.to_rgba8(), b.to_rgba8());
    let mut sum = 0.0;
    for (p, q) in a.pixels().zip(b.pixels()) {
        let alpha = |v: u8, p: &image::Rgba<u8>| f64::from(v) * f64::from(p[3]) / 255.0;
        for c in 0..3 {
            sum += (alpha(p[c], p) - alpha(q[c], q)).abs();
        }
        sum += (f64::from(p[3]) - f64::from(q[3])).abs();
    }
    sum / (4.0 * f64::from(a.width() * a.height()))
}

#[tokio::test]
async fn an_svg_is_drawn_at_the_size_asked_for_as_librsvg_draws_it() {
    let app = spawn_app().await;
    let logo = app.fixtures.add("logo.svg", LOGO.as_bytes().to_vec());
    let doc = app
        .run_done(edit(&logo, &["resize-image"], Some(json!({"width": 800}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    // Transparent around the disc: PNG, alpha kept.
    assert_eq!(fixtures::format_of(out), ImageFormat::Png);
    let ours = fixtures::decode(out);
    assert_eq!(ours.dimensions(), (800, 400));
    let diff = mean_difference(&ours, &reference(LOGO, 800, 400));
    assert!(diff < 1.0, "mean difference {diff} from librsvg");
    // Sharp: the disc's edge is antialiased over a pixel, not smeared over forty.
    let soft = ours
        .pixels()
        .filter(|(_, _, p)| p[3] > 10 && p[3] < 245)
        .count();
    assert!(soft < 2000, "{soft} half-covered pixels");

    // The other image commands take it too.
    for (command, options) in [
        ("crop-image", json!({"width": 10, "height": 10})),
        ("rotate-image", json!({"angle": 90})),
        ("image-to-webp", json!({})),
    ] {
        let doc = app
            .run_done(edit(&logo, &[command], Some(options.clone())))
            .await;
        let image = fixtures::decode(&app.download_all(&doc).await[0]);
        assert!(image.width() > 0, "{command}");
    }
}

#[tokio::test]
async fn a_render_url_draws_an_svg_at_the_box_it_names() {
    let app = spawn_app().await;
    let key = render_key(&app).await;
    let logo = b64(&app.fixtures.add("logo.svg", LOGO.as_bytes().to_vec()));
    let url = render_url(&app, &key, "w:1000,f:png", &logo);
    let response = get(&app, &url, None).await;
    assert_eq!(response.status(), 200);
    let bytes = response.bytes().await.unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!(image.dimensions(), (1000, 500));
    let diff = mean_difference(&image, &reference(LOGO, 1000, 500));
    assert!(diff < 1.0, "mean difference {diff} from librsvg");
}

#[tokio::test]
async fn nothing_an_svg_points_at_is_fetched() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    let at = format!("http://127.0.0.1:{port}");
    let hostile = format!(
        r##"<?xml version="1.0"?>
<?xml-stylesheet href="{at}/style.css" type="text/css"?>
<!DOCTYPE svg [<!ENTITY ext SYSTEM "{at}/entity.txt">]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">
  <style>@import url({at}/import.css); @font-face {{ font-family: F; src: url({at}/font.ttf); }}
    rect {{ fill: url({at}/paint.svg#p); }}</style>
  <image width="10" height="10" xlink:href="{at}/image.png"/>
  <image width="10" height="10" href="file:///etc/hostname"/>
  <use href="{at}/sprite.svg#icon"/>
  <filter id="f"><feImage href="{at}/fe.png"/></filter>
  <rect width="40" height="40" filter="url(#f)" fill="#808080"/>
  <text y="30" font-family="F">hi</text>
</svg>"##
    );
    let app = spawn_app().await;
    let source = app.fixtures.add("hostile.svg", hostile.into_bytes());
    let doc = app
        .run_done(edit(&source, &["resize-image"], Some(json!({"width": 80}))))
        .await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(image.dimensions(), (80, 80));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "the SVG made a request"
    );
}

#[tokio::test]
async fn an_entity_bomb_and_an_absurd_canvas_fail_with_their_codes() {
    let app = spawn_app().await;
    let mut bomb = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY l0 \"lol\">\n");
    for level in 1..=9 {
        let refs = format!("&l{};", level - 1).repeat(10);
        bomb.push_str(&format!("<!ENTITY l{level} \"{refs}\">\n"));
    }
    bomb.push_str("]>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">");
    bomb.push_str("<text y=\"5\">&l9;</text></svg>");
    let source = app.fixtures.add("bomb.svg", bomb.into_bytes());
    let error = app.run_failed(edit(&source, &["resize-image"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");

    let huge = r#"<svg xmlns="http://www.w3.org/2000/svg" width="900000" height="900000"/>"#;
    let source = app.fixtures.add("huge.svg", huge.as_bytes().to_vec());
    let error = app
        .run_failed(edit(
            &source,
            &["resize-image"],
            Some(json!({"width": 100})),
        ))
        .await;
    assert_eq!(error["code"], "image_too_large", "{error}");
}
