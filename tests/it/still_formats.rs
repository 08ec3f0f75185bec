//! TIFF and BMP sources (decisions.md §11) through the real service: decoded in-process
//! (TIFF by libtiff, BMP by the `image` crate), upright, sized, with their transparency;
//! `resize-image` without a `format` writes JPEG, or PNG for a picture with alpha.

use image::{GenericImageView, ImageFormat, Rgba, RgbaImage};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

fn gradient_rgb(x: u32, y: u32) -> Vec<u8> {
    vec![(x * 4) as u8, (y * 4) as u8, 128]
}

#[tokio::test]
async fn a_tiff_is_resized_to_jpeg_and_turned_upright_by_its_orientation_tag() {
    let app = spawn_app().await;
    let plain = app
        .fixtures
        .add("a.tif", fixtures::tiff(64, 48, 2, 1, gradient_rgb));
    let doc = app
        .run_done(edit(&plain, &["resize-image"], Some(json!({"scale": 0.5}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg);
    let image = fixtures::decode(out);
    assert_eq!(image.dimensions(), (32, 24));
    // The gradient survives: red grows to the right, green downwards.
    let (left, right) = (image.get_pixel(2, 12), image.get_pixel(29, 12));
    assert!(right[0] > left[0] + 100, "{left:?} {right:?}");

    // Orientation 6: stored 64×48, shown 48×64.
    let turned = app
        .fixtures
        .add("t.tif", fixtures::tiff(64, 48, 2, 6, gradient_rgb));
    let doc = app.run_done(edit(&turned, &["image-to-webp"], None)).await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(image.dimensions(), (48, 64));
}

#[tokio::test]
async fn a_cmyk_tiff_comes_out_in_rgb_and_an_rgba_tiff_keeps_its_alpha_in_png() {
    let app = spawn_app().await;
    // Pure cyan ink: C=255, M=Y=K=0.
    let cmyk = app.fixtures.add(
        "c.tif",
        fixtures::tiff(16, 16, 5, 1, |_, _| vec![255, 0, 0, 0]),
    );
    let doc = app
        .run_done(edit(
            &cmyk,
            &["resize-image"],
            Some(json!({"format": "png"})),
        ))
        .await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    let Rgba([r, g, b, _]) = image.get_pixel(8, 8);
    assert!(r < 10 && g > 245 && b > 245, "cyan came out as {r},{g},{b}");

    let rgba = app.fixtures.add(
        "a.tif",
        fixtures::tiff(32, 32, 2, 1, |x, _| {
            vec![200, 30, 30, if x < 16 { 0 } else { 255 }]
        }),
    );
    let doc = app.run_done(edit(&rgba, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Png);
    let image = fixtures::decode(out);
    assert_eq!(
        image.get_pixel(4, 4)[3],
        0,
        "the left half stays transparent"
    );
    assert_eq!(image.get_pixel(28, 4), Rgba([200, 30, 30, 255]));
}

#[tokio::test]
async fn bmp_sources_become_jpeg_png_webp_and_video() {
    let app = spawn_app().await;
    let rgb = fixtures::bmp(image::DynamicImage::ImageRgb8(fixtures::gradient(40, 30)));
    let rgb = app.fixtures.add("a.bmp", rgb);
    let doc = app
        .run_done(edit(&rgb, &["resize-image"], Some(json!({"scale": 2}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg);
    assert_eq!(fixtures::decode(out).dimensions(), (80, 60));

    let alpha = image::DynamicImage::ImageRgba8(RgbaImage::from_fn(20, 20, |x, _| {
        Rgba([0, 0, 255, if x < 10 { 0 } else { 255 }])
    }));
    let alpha = app.fixtures.add("b.bmp", fixtures::bmp(alpha));
    let doc = app.run_done(edit(&alpha, &["image-to-webp"], None)).await;
    let image = fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!(image.get_pixel(2, 2)[3], 0);

    let doc = app
        .run_done(edit(
            &rgb,
            &["image-to-video"],
            Some(json!({"duration": 1, "fps": 5})),
        ))
        .await;
    let video = probe(&app.download_all(&doc).await[0]);
    let stream = video_stream(&video);
    assert_eq!(
        (&stream["width"], &stream["height"]),
        (&40.into(), &30.into())
    );
}

#[tokio::test]
async fn a_tiff_past_the_pixel_limit_is_refused_from_its_header() {
    let app = spawn_app_with(|c| c.max_image_pixels = 1000).await;
    let big = app
        .fixtures
        .add("big.tif", fixtures::tiff(64, 48, 2, 1, gradient_rgb));
    let error = app.run_failed(edit(&big, &["resize-image"], None)).await;
    assert_eq!(error["code"], "image_too_large", "{error}");
}
