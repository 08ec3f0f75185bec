//! AVIF output (docs/API.md): `resize-image` with `format: "avif"` writes an AVIF
//! that libheif's own `heif-convert` reads back at the right size, in the source's
//! colours, with its transparency.

use image::{GenericImageView, ImageFormat};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn resize_image_writes_avif_with_its_size_colours_and_alpha() {
    let app = spawn_app().await;
    let source = image::DynamicImage::ImageRgb8(fixtures::gradient(320, 240));
    let src = app
        .fixtures
        .add("a.png", fixtures::encode(source.clone(), ImageFormat::Png));
    let options = json!({"scale": 0.5, "format": "avif"});
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(options)))
        .await;
    let output = &doc["attributes"]["outputs"][0];
    assert_eq!(output["format"], "avif");
    assert_eq!(
        (&output["width"], &output["height"]),
        (&160.into(), &120.into())
    );
    let path = &app.download_all(&doc).await[0];
    assert_eq!(path.extension().unwrap(), "avif");
    let got = fixtures::decode_avif(path);
    assert_eq!(got.dimensions(), (160, 120));
    let expected = source.resize_exact(160, 120, image::imageops::FilterType::Triangle);
    let apart = fixtures::distance(&got, &expected);
    assert!(apart < 4.0, "the AVIF is {apart} away from its source");

    let alpha = app.fixtures.add("b.png", fixtures::png_with_alpha(40, 30));
    let doc = app
        .run_done(edit(
            &alpha,
            &["resize-image"],
            Some(json!({"format": "avif"})),
        ))
        .await;
    fixtures::assert_left_half_transparent(&fixtures::decode_avif(
        &app.download_all(&doc).await[0],
    ));
}

#[tokio::test]
async fn an_avif_source_resized_without_a_format_stays_avif() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.jpg", fixtures::jpeg(64, 48));
    let avif = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({"format": "avif"})),
        ))
        .await;
    let again = app.fixtures.add(
        "a.avif",
        std::fs::read(&app.download_all(&avif).await[0]).unwrap(),
    );
    let doc = app
        .run_done(edit(&again, &["resize-image"], Some(json!({"scale": 0.5}))))
        .await;
    assert_eq!(doc["attributes"]["outputs"][0]["format"], "avif");
    assert_eq!(
        fixtures::decode_avif(&app.download_all(&doc).await[0]).dimensions(),
        (32, 24)
    );
}

#[tokio::test]
async fn an_avif_output_feeds_the_next_command() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.jpg", fixtures::jpeg(64, 48));
    let doc = app
        .run_done(edit(
            &src,
            &["resize-image", "image-to-webp"],
            Some(json!({"format": "avif"})),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::WebP);
    assert_eq!(fixtures::decode(out).dimensions(), (64, 48));
}
