//! Placeholders: every image output carries a blurhash, a thumbhash and its dominant
//! colour, which decode (with the same crates a client would use) to the colours of
//! the output itself.

use std::time::Duration;

use base64::Engine;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::json;

use crate::backends::Backend;
use crate::clips::filtered_clip;
use crate::fixtures;
use crate::helpers::*;
use crate::webhooks::{with_webhook, Receiver};

on_both_backends!(
    image_outputs_carry_placeholders_that_decode_to_the_outputs_colours,
    extracted_frames_carry_placeholders_that_decode_to_the_frames_colours,
);

/// 240x160: the left three quarters red, the rest blue.
fn two_colours() -> RgbImage {
    RgbImage::from_fn(240, 160, |x, _| {
        Rgb(if x < 180 {
            [210, 40, 30]
        } else {
            [20, 60, 200]
        })
    })
}

/// The mean of each channel, in sRGB values and in linear light (back in sRGB values:
/// what BlurHash's first component holds).
fn means(pixels: &[[u8; 3]]) -> ([f64; 3], [f64; 3]) {
    let linear = |c: u8| {
        let v = f64::from(c) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let srgb = |v: f64| {
        255.0
            * if v <= 0.0031308 {
                v * 12.92
            } else {
                1.055 * v.powf(1.0 / 2.4) - 0.055
            }
    };
    let n = pixels.len() as f64;
    let (mut plain, mut light) = ([0.0; 3], [0.0; 3]);
    for px in pixels {
        for c in 0..3 {
            plain[c] += f64::from(px[c]) / n;
            light[c] += linear(px[c]) / n;
        }
    }
    (plain, light.map(srgb))
}

fn rgb_pixels(rgba: &[u8]) -> Vec<[u8; 3]> {
    rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect()
}

fn assert_near(a: [f64; 3], b: [f64; 3], tolerance: f64, what: &str) {
    for c in 0..3 {
        assert!((a[c] - b[c]).abs() <= tolerance, "{what}: {a:?} vs {b:?}");
    }
}

/// The placeholders of `output` (an entry of `attributes.outputs`) decode to the
/// colours of `decoded`, the downloaded file, whose pixel at `(40, 40)` has the
/// dominant colour.
fn assert_placeholders_of(output: &serde_json::Value, decoded: &RgbImage, what: &str) {
    let pixels: Vec<[u8; 3]> = decoded.pixels().map(|p| p.0).collect();
    let (mean, mean_light) = means(&pixels);

    let blurhash = output["blurhash"].as_str().expect("a blurhash");
    assert_eq!(blurhash.len(), 28, "{what}: 4x3 components");
    let from_blurhash = blurhash::decode(blurhash, 24, 16, 1.0).unwrap();
    let (_, blur_light) = means(&rgb_pixels(&from_blurhash));
    assert_near(blur_light, mean_light, 8.0, &format!("{what} blurhash"));

    let thumbhash = output["thumbhash"].as_str().expect("a thumbhash");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(thumbhash)
        .unwrap();
    let (r, g, b, a) = thumbhash::thumb_hash_to_average_rgba(&bytes).unwrap();
    assert!(a > 0.99, "{what}: {a}");
    let average = [r, g, b].map(|c| f64::from(c) * 255.0);
    assert_near(average, mean, 12.0, &format!("{what} thumbhash"));

    let dominant = output["dominantColor"].as_str().expect("a dominantColor");
    let hex =
        |i: usize| f64::from(u8::from_str_radix(&dominant[1 + 2 * i..3 + 2 * i], 16).unwrap());
    assert_eq!(dominant.len(), 7, "{dominant}");
    let in_output = decoded.get_pixel(40, 40).0.map(f64::from);
    assert_near(
        [hex(0), hex(1), hex(2)],
        in_output,
        6.0,
        &format!("{what} dominant"),
    );
}

async fn image_outputs_carry_placeholders_that_decode_to_the_outputs_colours(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let png = fixtures::encode(DynamicImage::ImageRgb8(two_colours()), ImageFormat::Png);
    let src = app.fixtures.add("two.png", png);
    let receiver = Receiver::start(0).await;
    for format in ["png", "jpeg", "webp"] {
        let options = json!({ "scale": 0.5, "format": format });
        let body = edit(&src, &["resize-image"], Some(options));
        let doc = app.run_done(with_webhook(body, &receiver.url)).await;
        let output = &doc["attributes"]["outputs"][0];
        let path = &app.download_all(&doc).await[0];
        let decoded = fixtures::decode(path).to_rgb8();
        assert_eq!(decoded.dimensions(), (120, 80), "{format}");
        // The dominant colour is the red of three quarters of the picture.
        assert_placeholders_of(output, &decoded, format);
        if format == "png" {
            assert_eq!(output["dominantColor"], "#d2281e");
        }
    }
    // The webhook payloads hold the same document, placeholders included.
    let got = receiver.wait_for(3, Duration::from_secs(20)).await;
    for request in got {
        let event: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        let output = &event["data"]["attributes"]["outputs"][0];
        for name in ["blurhash", "thumbhash", "dominantColor"] {
            assert!(output[name].is_string(), "{name}: {event}");
        }
    }
}

/// Frames are hashed from the decoded pictures before they are encoded (and a
/// resized frame from the resized picture), not read back: the placeholders still
/// describe the stored files.
async fn extracted_frames_carry_placeholders_that_decode_to_the_frames_colours(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    // Three quarters red, the rest blue, as the picture above.
    let filter = "drawbox=x=0:y=0:w=180:h=160:color=0xd2281e:t=fill,\
                  drawbox=x=180:y=0:w=60:h=160:color=0x143cc8:t=fill";
    let src = app
        .fixtures
        .add("two.mp4", filtered_clip("240x160", 10, 0.3, filter, "mp4"));
    let resized = json!({ "scale": 0.5, "format": "jpeg" });
    for (commands, options) in [
        (&["extract-frames"][..], None),
        (&["extract-frames", "resize-image"][..], Some(resized)),
    ] {
        let doc = app.run_done(edit(&src, commands, options)).await;
        let outputs = doc["attributes"]["outputs"].as_array().unwrap().clone();
        let paths = app.download_all(&doc).await;
        assert_eq!(outputs.len(), 3, "{doc}");
        for (output, path) in outputs.iter().zip(&paths) {
            let decoded = fixtures::decode(path).to_rgb8();
            assert_placeholders_of(output, &decoded, &format!("{commands:?}"));
        }
    }
}
