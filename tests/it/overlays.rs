//! `watermark` and `text` through the real service: the overlay fetched by an asset's
//! rules (a URL, or an upload on both backends), placed at its gravity on images,
//! animations and videos, judged by pixels; the options refused as the docs say.

use std::path::Path;
use std::process::Command as Process;

use image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use serde_json::{json, Value};

use crate::backends::Backend;
use crate::clips::ffmpeg;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(an_uploaded_overlay_lands_in_its_corner_with_its_opacity);

fn solid_png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let picture = RgbImage::from_pixel(w, h, Rgb(rgb));
    fixtures::encode(DynamicImage::ImageRgb8(picture), ImageFormat::Png)
}

/// A red 40×20 overlay whose right half is transparent.
fn half_red_overlay() -> Vec<u8> {
    let overlay = RgbaImage::from_fn(40, 20, |x, _| match x < 20 {
        true => Rgba([255, 0, 0, 255]),
        false => Rgba([0, 0, 0, 0]),
    });
    fixtures::encode(DynamicImage::ImageRgba8(overlay), ImageFormat::Png)
}

fn close(a: [u8; 3], b: [u8; 3], by: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= by)
}

async fn output_of(app: &TestApp, body: Value) -> (Value, std::path::PathBuf) {
    let doc = app.run_done(body).await;
    let out = app.download_all(&doc).await.remove(0);
    (doc, out)
}

async fn an_uploaded_overlay_lands_in_its_corner_with_its_opacity(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let overlay = app.upload(half_red_overlay()).await;
    let overlay_src = overlay["attributes"]["src"].as_str().unwrap().to_string();
    let base = app
        .fixtures
        .add("blue.png", solid_png(200, 100, [0, 0, 255]));
    let options =
        json!({"overlay": overlay_src, "gravity": "northwest", "margin": 10, "overlayWidth": 0.2});
    let (doc, out) = output_of(&app, edit(&base, &["watermark"], Some(options))).await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "png", "{doc}");
    let rgb = fixtures::decode(&out).to_rgb8();
    assert_eq!(rgb.dimensions(), (200, 100));
    // 0.2 of 200 px: 40 px wide, 20 high, 10 px in from the top left.
    assert!(
        close(rgb.get_pixel(15, 15).0, [255, 0, 0], 2),
        "the overlay's red"
    );
    assert!(
        close(rgb.get_pixel(40, 15).0, [0, 0, 255], 2),
        "its transparent half shows the picture"
    );
    assert!(close(rgb.get_pixel(5, 5).0, [0, 0, 255], 2), "the margin");
    assert!(close(rgb.get_pixel(150, 80).0, [0, 0, 255], 2), "the rest");

    // Half opaque, in the opposite corner.
    let options =
        json!({"overlay": overlay_src, "gravity": "southeast", "opacity": 0.5, "margin": 0});
    let (_, out) = output_of(&app, edit(&base, &["watermark"], Some(options))).await;
    let rgb = fixtures::decode(&out).to_rgb8();
    assert!(
        close(rgb.get_pixel(165, 90).0, [128, 0, 127], 3),
        "{:?}",
        rgb.get_pixel(165, 90)
    );
    assert!(close(rgb.get_pixel(195, 90).0, [0, 0, 255], 2));
}

#[tokio::test]
async fn a_watermark_and_a_text_on_a_video_are_one_mp4_with_the_overlay_on_every_frame() {
    let app = spawn_app().await;
    let overlay = app.fixtures.add("logo.png", half_red_overlay());
    let clip = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=blue:size=320x240:rate=25:duration=1",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=1",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-f",
            "mp4",
        ],
        "blue.mp4",
    );
    let video = app.fixtures.add("blue.mp4", clip);
    let options =
        json!({"overlay": overlay, "gravity": "northeast", "margin": 0, "overlayWidth": 0.25});
    let (doc, out) = output_of(&app, edit(&video, &["watermark"], Some(options))).await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "mp4", "{doc}");
    let probed = probe(&out);
    let stream = video_stream(&probed);
    assert_eq!(
        (stream["width"].as_u64(), stream["height"].as_u64()),
        (Some(320), Some(240))
    );
    assert_eq!(stream["codec_name"], "h264");
    assert!(probed["streams"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["codec_type"] == "audio"));
    // 80 px wide at the top right: its red (left) half from x = 240 to 280.
    for frame in [0, 24] {
        assert!(
            close(pixel(&out, frame, 250, 10), [255, 0, 0], 40),
            "frame {frame}"
        );
        assert!(
            close(pixel(&out, frame, 100, 120), [0, 0, 255], 40),
            "frame {frame}"
        );
    }

    // A text: light letters in the southeast band, dark outline around them.
    let options = json!({"text": "Привет Ωμέγα", "fontSize": 40, "color": "#FFFFFF"});
    let (_, out) = output_of(&app, edit(&video, &["text"], Some(options))).await;
    let band = frame_rgb(&out, 12);
    let (light, dark) = count_light_and_dark(&band, 160..320, 180..240);
    assert!(
        light > 100 && dark > 50,
        "{light} light, {dark} dark pixels"
    );
    let (light, _) = count_light_and_dark(&band, 0..160, 0..120);
    assert_eq!(light, 0, "nothing written in the northwest");
}

#[tokio::test]
async fn text_is_written_on_images_and_animations_and_refused_without_its_options() {
    let app = spawn_app().await;
    let base = app
        .fixtures
        .add("grey.png", solid_png(300, 120, [128, 128, 128]));
    let options = json!({"text": "Hello", "gravity": "north", "fontSize": 30, "color": "#FF0000", "format": "webp"});
    let (doc, out) = output_of(&app, edit(&base, &["text"], Some(options))).await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "webp");
    let rgb = fixtures::decode(&out).to_rgb8();
    let red = (0..300)
        .flat_map(|x| (0..60).map(move |y| (x, y)))
        .filter(|&(x, y)| close(rgb.get_pixel(x, y).0, [255, 0, 0], 60))
        .count();
    let red_below = (0..300)
        .flat_map(|x| (70..120).map(move |y| (x, y)))
        .filter(|&(x, y)| close(rgb.get_pixel(x, y).0, [255, 0, 0], 60))
        .count();
    assert!(
        red > 80 && red_below == 0,
        "{red} red at the top, {red_below} below"
    );

    // An animation stays one, every frame written on.
    let gif = app.fixtures.add(
        "a.gif",
        crate::clips::lavfi_gif("testsrc2=size=96x64:rate=5:duration=1", "a.gif"),
    );
    let options = json!({"text": "Ω", "gravity": "center", "fontSize": 30});
    let (doc, _) = output_of(&app, edit(&gif, &["text"], Some(options))).await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "gif");
    assert_eq!(doc["attributes"]["outputs"][0]["frames"], 5, "{doc}");

    for (body, code, pointer) in [
        (
            edit(&base, &["text"], None),
            "missing_field",
            "/options/text",
        ),
        (
            edit(&base, &["watermark"], None),
            "missing_field",
            "/options/overlay",
        ),
        (
            edit(&base, &["text"], Some(json!({"text": ""}))),
            "option_out_of_range",
            "/options/text",
        ),
        (
            edit(&base, &["text"], Some(json!({"text": "a", "color": "red"}))),
            "invalid_option_value",
            "/options/color",
        ),
        (
            edit(
                &base,
                &["watermark"],
                Some(json!({"overlay": "ftp://x/y.png"})),
            ),
            "invalid_url",
            "/options/overlay",
        ),
        (
            edit(
                &base,
                &["watermark"],
                Some(json!({"overlay": base, "opacity": 2})),
            ),
            "option_out_of_range",
            "/options/opacity",
        ),
    ] {
        let response = app.post_edit(body).await;
        assert_eq!(response.status(), 422);
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["errors"][0]["code"], code, "{error}");
        assert_eq!(error["errors"][0]["source"]["pointer"], pointer, "{error}");
    }

    // An overlay that cannot be fetched fails the edit as an asset's source would.
    let gone = app.fixtures.status_url(404);
    let failed = app
        .run_failed(edit(&base, &["watermark"], Some(json!({"overlay": gone}))))
        .await;
    assert_eq!(failed["code"], "source_http_error", "{failed}");
    let detail = failed["detail"].as_str().unwrap();
    assert!(detail.contains("overlay"), "{detail}");
}

/// One frame of a video as RGB.
fn frame_rgb(path: &Path, frame: u32) -> RgbImage {
    let out = Process::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args([
            "-vf",
            &format!("select=eq(n\\,{frame})"),
            "-frames:v",
            "1",
            "-f",
            "image2pipe",
            "-c:v",
            "png",
            "-",
        ])
        .output()
        .unwrap();
    image::load_from_memory(&out.stdout).unwrap().to_rgb8()
}

fn pixel(path: &Path, frame: u32, x: u32, y: u32) -> [u8; 3] {
    frame_rgb(path, frame).get_pixel(x, y).0
}

/// Pixels brighter than light grey, and darker than dark grey, in the area.
fn count_light_and_dark(
    rgb: &RgbImage,
    xs: std::ops::Range<u32>,
    ys: std::ops::Range<u32>,
) -> (usize, usize) {
    let (mut light, mut dark) = (0, 0);
    for x in xs {
        for y in ys.clone() {
            let p = rgb.get_pixel(x, y).0;
            let luma = (u32::from(p[0]) * 3 + u32::from(p[1]) * 6 + u32::from(p[2])) / 10;
            if luma > 200 {
                light += 1;
            } else if luma < 20 {
                dark += 1;
            }
        }
    }
    (light, dark)
}
