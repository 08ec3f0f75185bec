//! The image commands of docs/API.md's image section through the real service:
//! `resize-image` to a box, `crop-image` and `rotate-image`, outputs judged by their
//! pixels.

use image::{DynamicImage, GenericImageView, ImageFormat, Rgb, RgbImage};
use serde_json::{json, Value};

use crate::fixtures;
use crate::helpers::*;

const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const BLUE: [u8; 3] = [0, 0, 255];
const YELLOW: [u8; 3] = [255, 255, 0];

/// A PNG in four quadrants: red, green (top), blue, yellow (bottom).
fn quadrants(w: u32, h: u32) -> Vec<u8> {
    let picture = RgbImage::from_fn(w, h, |x, y| {
        Rgb(match (x < w / 2, y < h / 2) {
            (true, true) => RED,
            (false, true) => GREEN,
            (true, false) => BLUE,
            (false, false) => YELLOW,
        })
    });
    fixtures::encode(DynamicImage::ImageRgb8(picture), ImageFormat::Png)
}

/// The colours a few pixels in from each corner, clockwise from the top left.
fn corners(image: &DynamicImage) -> [[u8; 3]; 4] {
    let rgb = image.to_rgb8();
    let (w, h) = (rgb.width() - 3, rgb.height() - 3);
    [(2, 2), (w, 2), (w, h), (2, h)].map(|(x, y)| rgb.get_pixel(x, y).0)
}

fn assert_corners(image: &DynamicImage, expected: [[u8; 3]; 4], what: &str) {
    let found = corners(image);
    let close = found
        .iter()
        .zip(expected)
        .all(|(a, b)| a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 8));
    assert!(close, "{what}: corners {found:?}, expected {expected:?}");
}

async fn one_output(app: &TestApp, src: &str, command: &str, options: Value) -> DynamicImage {
    let doc = app.run_done(edit(src, &[command], Some(options))).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(
        fixtures::format_of(out),
        ImageFormat::Png,
        "the input's format"
    );
    fixtures::decode(out)
}

#[tokio::test]
async fn resize_image_to_a_box_fits_covers_pads_and_keeps_its_gravity() {
    let app = spawn_app().await;
    let src = app.fixtures.add("quadrants.png", quadrants(400, 200));
    let resize = |options| one_output(&app, &src, "resize-image", options);

    let contain = resize(json!({"width": 100, "height": 100})).await;
    assert_eq!(contain.dimensions(), (100, 50));
    let fill = resize(json!({"width": 100, "height": 100, "fit": "fill"})).await;
    assert_eq!(fill.dimensions(), (100, 100));
    assert_corners(&fill, [RED, GREEN, YELLOW, BLUE], "fill");
    // Cover keeps a 200×200 half at west or east.
    let west =
        resize(json!({"width": 100, "height": 100, "fit": "cover", "gravity": "west"})).await;
    assert_eq!(west.dimensions(), (100, 100));
    assert_corners(&west, [RED, RED, BLUE, BLUE], "cover west");
    let east =
        resize(json!({"width": 100, "height": 100, "fit": "cover", "gravity": "southeast"})).await;
    assert_corners(&east, [GREEN, GREEN, YELLOW, YELLOW], "cover southeast");
    // A focus point near the right edge: the window held inside, as east.
    let focus = resize(json!({
        "width": 100, "height": 100, "fit": "cover",
        "gravity": "focus", "focusX": 0.95, "focusY": 0.5
    }))
    .await;
    assert_corners(&focus, [GREEN, GREEN, YELLOW, YELLOW], "focus");
    // Pad: contained 100×50 at the top of a 100×100 box of the background.
    let pad = resize(json!({
        "width": 100, "height": 100, "fit": "pad", "gravity": "north", "background": "#0000FF"
    }))
    .await;
    assert_eq!(pad.dimensions(), (100, 100));
    let rgb = pad.to_rgb8();
    assert_eq!(rgb.get_pixel(50, 90).0, BLUE, "the padding");
    assert!(rgb.get_pixel(10, 10).0[0] > 240, "the picture on top");
    // Transparent by default where the format has alpha.
    let clear = resize(json!({"width": 100, "height": 100, "fit": "pad"})).await;
    assert_eq!(clear.to_rgba8().get_pixel(50, 5).0[3], 0);
    // One side keeps the aspect; withoutEnlargement keeps the size.
    assert_eq!(resize(json!({"height": 50})).await.dimensions(), (100, 50));
    let kept = resize(json!({"width": 800, "withoutEnlargement": true})).await;
    assert_eq!(kept.dimensions(), (400, 200));
}

#[tokio::test]
async fn smart_gravity_keeps_the_salient_object_of_a_flat_picture() {
    let app = spawn_app().await;
    // A red-and-white checkerboard at the right of a flat grey picture.
    let picture = RgbImage::from_fn(300, 200, |x, y| {
        if (250..280).contains(&x) && (80..110).contains(&y) {
            Rgb(if (x / 4 + y / 4) % 2 == 0 {
                [230, 20, 20]
            } else {
                [250; 3]
            })
        } else {
            Rgb([128; 3])
        }
    });
    let png = fixtures::encode(DynamicImage::ImageRgb8(picture), ImageFormat::Png);
    let src = app.fixtures.add("object.png", png);
    let options = json!({"width": 100, "height": 200, "fit": "cover", "gravity": "smart"});
    let out = one_output(&app, &src, "resize-image", options).await;
    assert_eq!(out.dimensions(), (100, 200));
    let red = out
        .to_rgb8()
        .pixels()
        .filter(|p| p[0] > 180 && p[1] < 90)
        .count();
    assert!(red >= 400, "the object is kept: {red} red pixels");
}

#[tokio::test]
async fn crop_image_keeps_exactly_its_box_and_refuses_one_outside() {
    let app = spawn_app().await;
    let src = app.fixtures.add("quadrants.png", quadrants(200, 100));
    let out = one_output(
        &app,
        &src,
        "crop-image",
        json!({"x": 90, "y": 40, "width": 20, "height": 20}),
    )
    .await;
    assert_eq!(out.dimensions(), (20, 20));
    let rgb = out.to_rgb8();
    // The box straddles the centre: each quadrant's colour in its own 10×10.
    assert_eq!(rgb.get_pixel(0, 0).0, RED);
    assert_eq!(rgb.get_pixel(19, 0).0, GREEN);
    assert_eq!(rgb.get_pixel(0, 19).0, BLUE);
    assert_eq!(rgb.get_pixel(19, 19).0, YELLOW);
    assert_eq!(rgb.get_pixel(9, 9).0, RED);
    assert_eq!(rgb.get_pixel(10, 10).0, YELLOW);

    let outside = edit(
        &src,
        &["crop-image"],
        Some(json!({"x": 190, "y": 0, "width": 20, "height": 20})),
    );
    // The dry run tells from the header; the edit ends failed with the same code.
    let response = app
        .client
        .post(format!("{}/v1/edits?dryRun=true", app.base))
        .bearer_auth(&app.token)
        .json(&outside)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "crop_outside_image", "{body}");
    let error = app.run_failed(outside).await;
    assert_eq!(error["code"], "crop_outside_image", "{error}");
}

#[tokio::test]
async fn rotate_image_turns_and_flips_by_the_corners() {
    let app = spawn_app().await;
    let src = app.fixtures.add("quadrants.png", quadrants(200, 100));
    let rotate = |options| one_output(&app, &src, "rotate-image", options);
    let quarter = rotate(json!({"angle": 90})).await;
    assert_eq!(quarter.dimensions(), (100, 200));
    assert_corners(&quarter, [BLUE, RED, GREEN, YELLOW], "90");
    assert_corners(
        &rotate(json!({"angle": 180})).await,
        [YELLOW, BLUE, RED, GREEN],
        "180",
    );
    assert_corners(
        &rotate(json!({"angle": 270})).await,
        [GREEN, YELLOW, BLUE, RED],
        "270",
    );
    assert_corners(
        &rotate(json!({"flip": "horizontal"})).await,
        [GREEN, RED, BLUE, YELLOW],
        "flip horizontal",
    );
    assert_corners(
        &rotate(json!({"flip": "vertical"})).await,
        [BLUE, YELLOW, GREEN, RED],
        "flip vertical",
    );
}

#[tokio::test]
async fn options_that_do_not_go_together_are_a_422() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", fixtures::png(64, 48));
    for (command, options, code, pointer) in [
        (
            "resize-image",
            json!({"scale": 0.5, "width": 10}),
            "invalid_option_combination",
            "/options/width",
        ),
        (
            "rotate-image",
            json!({"angle": 100}),
            "invalid_option_value",
            "/options/angle",
        ),
        (
            "resize-image",
            json!({"width": 10, "fit": "squash"}),
            "invalid_option_value",
            "/options/fit",
        ),
    ] {
        let response = app.post_edit(edit(&src, &[command], Some(options))).await;
        assert_eq!(response.status(), 422);
        let body: Value = response.json().await.unwrap();
        let error = &body["errors"][0];
        assert_eq!(error["code"], code, "{body}");
        assert_eq!(error["source"]["pointer"], pointer, "{body}");
    }
}

#[tokio::test]
async fn extract_frames_then_a_box_resizes_every_frame() {
    let app = spawn_app().await;
    let clip = crate::clips::mp4("96x64", 10, 0.5, false);
    let src = app.fixtures.add("clip.mp4", clip);
    let body = json!({
        "assets": [{"type": "video", "src": src}],
        "commands": ["extract-frames", "resize-image"],
        "options": {"width": 32, "height": 32, "fit": "cover"}
    });
    let doc = app.run_done(body).await;
    let outputs = app.download_all(&doc).await;
    assert_eq!(outputs.len(), 5, "one per frame");
    for out in &outputs {
        assert_eq!(fixtures::format_of(out), ImageFormat::WebP);
        assert_eq!(fixtures::decode(out).dimensions(), (32, 32));
    }
}
