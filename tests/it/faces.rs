//! Faces through the real service (docs/API.md, "Faces"): `gravity: face` keeps a face
//! that `smart` gives up for a brighter object, in `resize-image`, `crop-image` and a
//! render URL; `faces: true` reports the boxes; `blur-faces` hides the face of a
//! picture and of a video and changes nothing else.
//!
//! The face is NASA's portrait of Eileen Collins (public domain; the detector's own
//! test photo, 256 × 256, her face about at (86–140, 38–106)).

use image::{DynamicImage, GenericImageView, ImageFormat, Rgb, RgbImage};
use serde_json::json;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

on_both_backends!(gravity_face_keeps_the_face_where_smart_keeps_a_brighter_object,);

fn astronaut() -> DynamicImage {
    let bytes = include_bytes!("../../src/media/image/faces/testdata/astronaut.jpg");
    image::load_from_memory(bytes).unwrap()
}

/// A 768 × 256 picture: the portrait at the left, a grey middle, and at the right a
/// large red-and-white checkerboard, more saturated and with more edges than anything
/// in the portrait (what `smart` keeps).
fn scene() -> RgbImage {
    let face = astronaut().to_rgb8();
    RgbImage::from_fn(768, 256, |x, y| {
        if x < 256 {
            *face.get_pixel(x, y)
        } else if (528..748).contains(&x) && (18..238).contains(&y) {
            Rgb(if (x / 10 + y / 10) % 2 == 0 {
                [240, 10, 10]
            } else {
                [255, 255, 255]
            })
        } else {
            Rgb([110, 110, 110])
        }
    })
}

/// Mean absolute difference per channel.
fn distance(a: &RgbImage, b: &RgbImage) -> f64 {
    let total: u64 = a
        .pixels()
        .zip(b.pixels())
        .map(|(p, q)| (0..3).map(|c| u64::from(p[c].abs_diff(q[c]))).sum::<u64>())
        .sum();
    total as f64 / (3 * a.width() * a.height()) as f64
}

/// Mean absolute difference between horizontal neighbours (green channel): what a
/// blur takes away.
fn detail(image: &RgbImage) -> f64 {
    let mut total = 0u64;
    for y in 0..image.height() {
        for x in 1..image.width() {
            total += u64::from(image.get_pixel(x, y)[1].abs_diff(image.get_pixel(x - 1, y)[1]));
        }
    }
    total as f64 / f64::from((image.width() - 1) * image.height())
}

async fn gravity_face_keeps_the_face_where_smart_keeps_a_brighter_object(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let png = fixtures::encode(DynamicImage::ImageRgb8(scene()), ImageFormat::Png);
    let src = app.fixtures.add("scene.png", png);
    let cover =
        |gravity: &str| json!({"width": 200, "height": 200, "fit": "cover", "gravity": gravity});
    let resized = |gravity: &'static str| {
        let body = edit(&src, &["resize-image"], Some(cover(gravity)));
        let app = &app;
        async move {
            let doc = app.run_done(body).await;
            fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8()
        }
    };
    let portrait = astronaut()
        .resize_exact(200, 200, image::imageops::FilterType::Triangle)
        .to_rgb8();
    let smart = resized("smart").await;
    let d = distance(&smart, &portrait);
    assert!(
        d > 25.0,
        "smart keeps the object, not the portrait: distance {d}"
    );
    let face = resized("face").await;
    assert_eq!(face.dimensions(), (200, 200));
    let d = distance(&face, &portrait);
    assert!(d < 8.0, "face keeps the portrait: distance {d}");

    // crop-image: the 256 × 256 box around the face is the portrait, to the pixel
    // (the PNG is lossless; the box starts at x 0).
    let crop = json!({"width": 256, "height": 256, "gravity": "face"});
    let doc = app.run_done(edit(&src, &["crop-image"], Some(crop))).await;
    let cropped = fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8();
    assert_eq!(cropped.dimensions(), (256, 256));
    let d = distance(&cropped, &astronaut().to_rgb8());
    assert!(d < 1.0, "the crop is the portrait: distance {d}");

    // A render URL with g:face.
    let key = render_key(&app).await;
    let url = render_url(&app, &key, "w:200,h:200,fit:cover,g:face,f:png", &b64(&src));
    let response = get(&app, &url, None).await;
    assert_eq!(response.status(), 200);
    let rendered = image::load_from_memory(&response.bytes().await.unwrap())
        .unwrap()
        .to_rgb8();
    let d = distance(&rendered, &portrait);
    assert!(d < 8.0, "the render keeps the face too: distance {d}");
}

#[tokio::test]
async fn faces_true_reports_the_boxes_in_the_outputs_pixels() {
    let app = spawn_app().await;
    let png = fixtures::encode(DynamicImage::ImageRgb8(scene()), ImageFormat::Png);
    let src = app.fixtures.add("scene.png", png);
    // Half size: the face at about (43–70, 19–53).
    let options = json!({"width": 384, "faces": true});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let output = &doc["attributes"]["outputs"][0];
    let faces = output["faces"].as_array().expect("faces listed");
    assert_eq!(faces.len(), 1, "{faces:?}");
    let face = &faces[0];
    let at = |name: &str| face[name].as_f64().unwrap();
    let (cx, cy) = (at("x") + at("width") / 2.0, at("y") + at("height") / 2.0);
    assert!(
        (50.0..64.0).contains(&cx) && (28.0..44.0).contains(&cy),
        "{face}"
    );
    assert!((20.0..45.0).contains(&at("width")), "{face}");
    assert!(at("score") > 0.5 && at("score") <= 1.0, "{face}");
    // Without the flag, no faces are looked for.
    let plain = app
        .run_done(edit(&src, &["resize-image"], Some(json!({"width": 384}))))
        .await;
    let output = &plain["attributes"]["outputs"][0];
    assert!(
        output["width"].is_number() && output.get("faces").is_none(),
        "{output}"
    );
}

#[tokio::test]
async fn blur_faces_changes_the_face_and_nothing_else() {
    let app = spawn_app().await;
    let original = scene();
    let png = fixtures::encode(DynamicImage::ImageRgb8(original.clone()), ImageFormat::Png);
    let src = app.fixtures.add("scene.png", png);
    for style in ["blur", "pixelate"] {
        let options = json!({"style": style, "padding": 0.2});
        let doc = app
            .run_done(edit(&src, &["blur-faces"], Some(options)))
            .await;
        let out = fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8();
        assert_eq!(out.dimensions(), original.dimensions());
        let (mut inside, mut inside_n) = (0u64, 0u64);
        for (x, y, p) in out.enumerate_pixels() {
            let o = original.get_pixel(x, y);
            let d: u64 = (0..3).map(|c| u64::from(p[c].abs_diff(o[c]))).sum();
            // The face's core, well inside any padded box.
            if (95..130).contains(&x) && (50..95).contains(&y) {
                inside += d;
                inside_n += 1;
            }
            // Far from the face: untouched.
            if x >= 200 || y >= 150 {
                assert_eq!(d, 0, "{style}: ({x}, {y}) changed");
            }
        }
        let mean = inside as f64 / inside_n as f64;
        assert!(mean > 8.0, "{style}: the face changed by {mean} on average");
        let core = |image: &RgbImage| image.view(95, 50, 35, 45).to_image();
        let (before, after) = (detail(&core(&original)), detail(&core(&out)));
        assert!(
            after < 0.5 * before,
            "{style}: face detail {after} of {before}"
        );
    }
}

#[tokio::test]
async fn blur_faces_hides_the_face_in_every_frame_of_a_video() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let still = dir.path().join("astronaut.png");
    astronaut().save(&still).unwrap();
    let video = dir.path().join("face.mp4");
    let made = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-loop", "1", "-framerate", "10", "-i"])
        .arg(&still)
        .args([
            "-t",
            "1.5",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-qp",
            "0",
        ])
        .args(["-pix_fmt", "yuv444p"])
        .arg(&video)
        .status()
        .unwrap();
    assert!(made.success());
    let src = app.fixtures.add("face.mp4", std::fs::read(&video).unwrap());
    let doc = app.run_done(edit(&src, &["blur-faces"], None)).await;
    let out = &app.download_all(&doc).await[0];
    // Every frame of the output, as PNGs.
    let frames = dir.path().join("frame-%03d.png");
    let split = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(out)
        .arg(&frames)
        .status()
        .unwrap();
    assert!(split.success());
    let portrait = astronaut().to_rgb8();
    let mut count = 0;
    for n in 1.. {
        let path = dir.path().join(format!("frame-{n:03}.png"));
        if !path.exists() {
            break;
        }
        count += 1;
        let frame = image::open(&path).unwrap().to_rgb8();
        assert_eq!(frame.dimensions(), (256, 256));
        let face = |image: &RgbImage| image.view(95, 50, 35, 45).to_image();
        let outside = |image: &RgbImage| image.view(0, 160, 256, 96).to_image();
        // The face's detail is gone; the rest keeps its own.
        let (before, after) = (detail(&face(&portrait)), detail(&face(&frame)));
        assert!(
            after < 0.35 * before,
            "frame {n}: face detail {after} of {before}"
        );
        let (before, after) = (detail(&outside(&portrait)), detail(&outside(&frame)));
        assert!(
            after > 0.6 * before,
            "frame {n}: the rest's detail {after} of {before}"
        );
        let kept = distance(&outside(&frame), &outside(&portrait));
        assert!(kept < 8.0, "frame {n}: the rest differs by {kept}");
    }
    assert_eq!(count, 15, "every frame");
}
