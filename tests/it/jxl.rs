//! JPEG XL in and out (docs/API.md): sources made by libjxl's own `cjxl`, outputs read
//! back by its `djxl` (Debian `libjxl-tools`), through the real router.

use std::path::Path;
use std::process::{Command, Stdio};

use image::{DynamicImage, GenericImageView, ImageFormat};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

/// `input` (a file cjxl reads: PNG, JPEG, GIF) as a JPEG XL made by `cjxl` with `args`.
fn cjxl(input: Vec<u8>, extension: &str, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (
        dir.path().join(format!("in.{extension}")),
        dir.path().join("out.jxl"),
    );
    std::fs::write(&from, input).unwrap();
    let status = Command::new("cjxl")
        .arg(&from)
        .arg(&to)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("cjxl runs (Debian libjxl-tools)");
    assert!(status.success(), "cjxl encodes {extension}");
    std::fs::read(to).unwrap()
}

/// A JPEG XL decoded by `djxl` into `name` (a PNG, or an APNG for every frame).
fn djxl(jxl: &Path, dir: &Path, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let status = Command::new("djxl")
        .arg(jxl)
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("djxl runs (Debian libjxl-tools)");
    assert!(status.success(), "djxl reads {}", jxl.display());
    out
}

/// The frames ffprobe counts in an (A)PNG.
fn frame_count(path: &Path) -> u64 {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-show_entries"])
        .args(["stream=nb_read_frames", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// An animated GIF of `frames` frames of `w` × `h` (ffmpeg's test pattern, 10 fps).
fn animated_gif(w: u32, h: u32, frames: u32) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.gif");
    let status = Command::new("ffmpeg")
        .args(["-loglevel", "error", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=s={w}x{h}:r=10"))
        .args(["-frames:v", &frames.to_string()])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(out).unwrap()
}

#[tokio::test]
async fn a_jpeg_xl_source_is_resized_to_png_in_its_colours() {
    let app = spawn_app().await;
    let source = DynamicImage::ImageRgb8(fixtures::gradient(160, 120));
    let jxl = cjxl(
        fixtures::encode(source.clone(), ImageFormat::Png),
        "png",
        &[],
    );
    let src = app.fixtures.add("a.jxl", jxl);
    let options = json!({"width": 80, "format": "png"});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let path = &app.download_all(&doc).await[0];
    let got = fixtures::decode(path);
    assert_eq!(got.dimensions(), (80, 60));
    let expected = source.resize_exact(80, 60, image::imageops::FilterType::Triangle);
    let apart = fixtures::distance(&got, &expected);
    assert!(
        apart < 4.0,
        "the resized JPEG XL is {apart} away from its source"
    );
}

#[tokio::test]
async fn an_animated_jpeg_xl_stays_animated_with_its_frames() {
    let app = spawn_app().await;
    // 40 frames of 400×300: jxl-oxide keeps every frame it rendered (58 MB of them
    // here), past the fixed part of its allocation meter, so the meter must grow with
    // the frames for the animation to be read at all.
    let gif = animated_gif(400, 300, 40);
    let src = app.fixtures.add("anim.jxl", cjxl(gif, "gif", &["-e", "1"]));
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({"width": 24}))))
        .await;
    let output = &doc["attributes"]["outputs"][0];
    assert_eq!(output["format"], "jxl");
    let path = &app.download_all(&doc).await[0];
    let dir = tempfile::tempdir().unwrap();
    let apng = djxl(path, dir.path(), "frames.apng");
    assert_eq!(frame_count(&apng), 40);
    assert_eq!(fixtures::decode(&apng).dimensions(), (24, 18));
    // As animated WebP: the same frames.
    let options = json!({"width": 24, "format": "webp"});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let webp = std::fs::read(&app.download_all(&doc).await[0]).unwrap();
    let decoder = image::codecs::webp::WebPDecoder::new(std::io::Cursor::new(webp)).unwrap();
    assert_eq!(image::AnimationDecoder::into_frames(decoder).count(), 40);
}

#[tokio::test]
async fn a_jpeg_xl_made_from_a_turned_jpeg_comes_out_upright() {
    let app = spawn_app().await;
    // cjxl carries the JPEG's EXIF orientation (6: a quarter turn) into the codestream.
    let jxl = cjxl(fixtures::jpeg_with_orientation(64, 32, 6), "jpg", &[]);
    let src = app.fixtures.add("turned.jxl", jxl);
    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({"format": "png", "scale": 1})),
        ))
        .await;
    let got = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(got.dimensions(), (32, 64));
}

#[tokio::test]
async fn format_jxl_writes_a_jpeg_xl_djxl_reads_at_its_size() {
    let app = spawn_app().await;
    let source = DynamicImage::ImageRgb8(fixtures::gradient(320, 240));
    let src = app
        .fixtures
        .add("a.png", fixtures::encode(source.clone(), ImageFormat::Png));
    let options = json!({"scale": 0.5, "format": "jxl"});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let output = &doc["attributes"]["outputs"][0];
    assert_eq!(output["format"], "jxl");
    let path = &app.download_all(&doc).await[0];
    assert_eq!(path.extension().unwrap(), "jxl");
    let dir = tempfile::tempdir().unwrap();
    let got = fixtures::decode(&djxl(path, dir.path(), "out.png"));
    assert_eq!(got.dimensions(), (160, 120));
    let expected = source.resize_exact(160, 120, image::imageops::FilterType::Triangle);
    let apart = fixtures::distance(&got, &expected);
    assert!(apart < 4.0, "the JPEG XL is {apart} away from its source");
}

#[tokio::test]
async fn a_render_names_jpeg_xl_only_for_a_client_that_accepts_it() {
    let app = spawn_app().await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(400, 300)));
    let url = render_url(&app, &key, "w:120,h:120,fit:cover,f:auto", &photo);
    let safari = "image/webp,image/avif,image/jxl,image/*;q=0.8,*/*;q=0.5";
    let answer = get(&app, &url, Some(safari)).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "image/jxl");
    let dir = tempfile::tempdir().unwrap();
    let jxl = dir.path().join("r.jxl");
    std::fs::write(&jxl, answer.bytes().await.unwrap()).unwrap();
    let got = fixtures::decode(&djxl(&jxl, dir.path(), "r.png"));
    assert_eq!(got.dimensions(), (120, 120));
    let chrome = "image/avif,image/webp,*/*";
    let answer = get(&app, &url, Some(chrome)).await;
    assert_eq!(answer.headers()["content-type"], "image/avif");
}

#[tokio::test]
async fn a_truncated_jpeg_xl_fails_the_edit_with_invalid_media() {
    let app = spawn_app().await;
    let source = DynamicImage::ImageRgb8(fixtures::gradient(200, 150));
    let whole = cjxl(fixtures::encode(source, ImageFormat::Png), "png", &[]);
    let src = app
        .fixtures
        .add("cut.jxl", whole[..whole.len() / 2].to_vec());
    let error = &app
        .run_failed(edit(&src, &["resize-image"], Some(json!({"width": 50}))))
        .await;
    assert_eq!(error["code"], "invalid_media", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("JPEG XL"),
        "{error}"
    );
}

#[tokio::test]
async fn a_display_p3_jpeg_xl_comes_out_in_srgb() {
    use crate::colour::{display_p3, halved_patch, reference, tagged};
    let app = spawn_app().await;
    let patch = [200, 120, 80];
    let expected = reference(&display_p3(), patch);
    let png = tagged(ImageFormat::Png, patch, display_p3().icc().unwrap());
    // Lossless keeps the profile and the P3 pixels; lossy (XYB) keeps the profile as
    // the colour the pixels mean.
    for distance in ["0", "1"] {
        let jxl = cjxl(png.clone(), "png", &["-d", distance]);
        let src = app.fixtures.add(&format!("p3-{distance}.jxl"), jxl);
        let (got, delta) = halved_patch(&app, &src, expected).await;
        assert!(
            delta < 2.0,
            "distance {distance}: {got:?} is ΔE {delta:.2} from {expected:?}"
        );
    }
}

#[tokio::test]
async fn a_24_mp_jpeg_xl_photo_is_decoded_within_one_steps_default_memory() {
    // ffmpeg's test pattern at a camera's 6000x4000, by cjxl at its fastest effort.
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("24mp.png");
    let status = Command::new("ffmpeg")
        .args([
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=6000x4000",
        ])
        .args(["-frames:v", "1"])
        .arg(&png)
        .status()
        .unwrap();
    assert!(status.success());
    let source = std::fs::read(&png).unwrap();
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("24mp.jxl", cjxl(source.clone(), "png", &["-e", "1"]));
    // Past 14 MP the still is rendered in strips of rows: the whole picture comes out,
    // in its colours.
    let options = json!({"width": 60, "format": "png"});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let got = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(got.dimensions(), (60, 40));
    let expected = image::load_from_memory(&source).unwrap().resize_exact(
        60,
        40,
        image::imageops::FilterType::Triangle,
    );
    let apart = fixtures::distance(&got, &expected);
    assert!(
        apart < 6.0,
        "the 24 MP JPEG XL is {apart} away from its source"
    );
}
