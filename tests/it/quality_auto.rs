//! Quality by eye (docs/API.md, "Quality by eye"): `quality: auto` writes the lowest
//! quality that scores the target on SSIMULACRA2 and says so in the output's
//! attributes, checked here by scoring the output again against the full-quality
//! encode (the `ssimulacra2` crate, through its own sRGB conversion); `format: best`
//! and `f:best` keep the smallest format; bad values are refused with their codes.

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{json, Value};
use ssimulacra2::{compute_frame_ssimulacra2, ColorPrimaries, TransferCharacteristic};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

on_both_backends!(
    quality_auto_writes_less_than_full_quality_and_the_output_scores_the_target,
    best_renders_the_smallest_of_the_formats_accept_allows,
);

/// A picture with what photographs have: a smooth sky, fine texture and edges.
fn photo_like(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        let texture = ((x * 7919 + y * 104_729) % 23) as f32;
        if y < height / 3 {
            Rgb([(90.0 + y as f32) as u8, (140.0 + y as f32 * 0.5) as u8, 220])
        } else {
            let leaf = ((x as f32 / 5.0).sin() * (y as f32 / 3.0).cos() * 40.0) + texture * 2.0;
            Rgb([
                (60.0 + leaf) as u8,
                (110.0 + leaf * 1.2) as u8,
                (40.0 + texture) as u8,
            ])
        }
    });
    fixtures::encode(DynamicImage::ImageRgb8(image), ImageFormat::Png)
}

/// SSIMULACRA2 of `distorted` against `reference`, as the crate computes it from sRGB.
fn ssimulacra2(reference: &DynamicImage, distorted: &DynamicImage) -> f64 {
    let srgb = |image: &DynamicImage| {
        let rgb = image.to_rgb8();
        let data = rgb
            .pixels()
            .map(|p| p.0.map(|c| f32::from(c) / 255.0))
            .collect();
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        ssimulacra2::Rgb::new(
            data,
            w,
            h,
            TransferCharacteristic::SRGB,
            ColorPrimaries::BT709,
        )
        .unwrap()
    };
    compute_frame_ssimulacra2(srgb(reference), srgb(distorted)).unwrap()
}

async fn quality_auto_writes_less_than_full_quality_and_the_output_scores_the_target(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("photo.png", photo_like(240, 160));
    for format in ["jpeg", "webp"] {
        let run = |quality: Value| {
            let options = json!({"width": 200, "format": format, "quality": quality});
            app.run_done(edit(&src, &["resize-image"], Some(options)))
        };
        let auto = run("auto".into()).await;
        let output = &auto["attributes"]["outputs"][0];
        let chosen = output["quality"].as_u64().unwrap();
        let said = output["score"].as_f64().unwrap();
        assert!(chosen < 100, "{format}: {output}");
        assert!(said >= 70.0, "{format}: {output}");
        let full = run(100.into()).await;
        assert!(full["attributes"]["outputs"][0].get("quality").is_none());
        let (auto_file, full_file) = (
            &app.download_all(&auto).await[0],
            &app.download_all(&full).await[0],
        );
        let smaller = std::fs::metadata(auto_file).unwrap().len();
        assert!(smaller < std::fs::metadata(full_file).unwrap().len());
        let measured = ssimulacra2(&fixtures::decode(full_file), &fixtures::decode(auto_file));
        assert!(
            measured >= 68.0,
            "{format} at {chosen} scores {measured} (said {said})"
        );
        assert!((measured - said).abs() < 1.0, "{measured} vs {said}");
    }
    // A lower target picks a lower quality.
    let options = json!({"width": 200, "format": "webp", "quality": "auto", "targetScore": 50});
    let low = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let low = &low["attributes"]["outputs"][0];
    assert!(low["score"].as_f64().unwrap() >= 50.0, "{low}");
    // `format: best` is one of the three, at quality auto.
    let best = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({"width": 200, "format": "best"})),
        ))
        .await;
    let output = &best["attributes"]["outputs"][0];
    assert!(["jpeg", "webp", "avif"].contains(&output["format"].as_str().unwrap()));
    assert!(output["quality"].as_u64().unwrap() < 100, "{output}");
}

async fn best_renders_the_smallest_of_the_formats_accept_allows(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.png", photo_like(200, 150)));
    let body = |transform: &str, accept: Option<&'static str>| {
        let url = render_url(&app, &key, transform, &photo);
        let (app, transform) = (&app, transform.to_string());
        async move {
            let response = get(app, &url, accept).await;
            assert_eq!(response.status(), 200, "{transform}");
            let mime = response.headers()["content-type"]
                .to_str()
                .unwrap()
                .to_string();
            (mime, response.bytes().await.unwrap().len())
        }
    };
    let mut each = Vec::new();
    for format in ["avif", "webp", "jpeg"] {
        each.push(body(&format!("w:160,f:{format},q:auto"), None).await);
    }
    let smallest = each.iter().min_by_key(|(_, len)| *len).unwrap().clone();
    let all = "image/avif,image/webp,*/*";
    assert_eq!(body("w:160,f:best", Some(all)).await, smallest);
    // A client that reads no AVIF gets the smaller of WebP and JPEG; a legacy one JPEG.
    let no_avif = each[1..]
        .iter()
        .min_by_key(|(_, len)| *len)
        .unwrap()
        .clone();
    assert_eq!(body("w:160,f:best", Some("image/webp,*/*")).await, no_avif);
    assert_eq!(body("w:160,f:best", None).await, each[2]);
}

#[tokio::test]
async fn bad_quality_and_target_scores_are_refused_with_stable_codes() {
    let app = spawn_app().await;
    let src = app.fixtures.add("photo.jpg", fixtures::jpeg(64, 48));
    let cases = [
        (
            json!({"quality": "auto", "targetScore": 150}),
            "option_out_of_range",
            "targetScore",
        ),
        (
            json!({"quality": "auto", "targetScore": 0}),
            "option_out_of_range",
            "targetScore",
        ),
        (
            json!({"quality": "auto", "targetScore": "high"}),
            "invalid_type",
            "targetScore",
        ),
        (
            json!({"quality": 80, "targetScore": 80}),
            "invalid_option_combination",
            "targetScore",
        ),
        (
            json!({"targetScore": 80}),
            "invalid_option_combination",
            "targetScore",
        ),
        (
            json!({"quality": "best"}),
            "invalid_option_value",
            "quality",
        ),
        (json!({"quality": 50.5}), "invalid_type", "quality"),
        (json!({"quality": 101}), "option_out_of_range", "quality"),
        (
            json!({"format": "better"}),
            "invalid_option_value",
            "format",
        ),
    ];
    for (options, code, option) in cases {
        let response = app
            .post_edit(edit(&src, &["resize-image"], Some(options.clone())))
            .await;
        assert_eq!(response.status(), 422, "{options}");
        let body: Value = response.json().await.unwrap();
        let error = &body["errors"][0];
        assert_eq!(error["code"], code, "{options}: {error}");
        assert_eq!(error["source"]["pointer"], format!("/options/{option}"));
    }
    // `best` is resize-image's: another command writing an image refuses it.
    let response = app
        .post_edit(edit(
            &src,
            &["resize-image", "text"],
            Some(json!({"format": "best", "scale": 0.5, "text": "hi"})),
        ))
        .await;
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "invalid_option_value");
    // In a render: the same codes, and `f:best` with another format is two formats.
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("p.jpg", fixtures::jpeg(64, 48)));
    for (transform, code) in [
        ("w:32,q:auto,ts:101", "option_out_of_range"),
        ("w:32,q:70,ts:60", "invalid_option_combination"),
        ("w:32,f:best,f:webp", "invalid_transform"),
        ("w:32,q:good", "invalid_option_value"),
    ] {
        let response = get(&app, &render_url(&app, &key, transform, &photo), None).await;
        assert_eq!(response.status(), 422, "{transform}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["errors"][0]["code"], code, "{transform}");
    }
}
