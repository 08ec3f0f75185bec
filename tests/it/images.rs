//! The image commands through the real service, outputs checked by decoding and probing.

use image::{GenericImageView, ImageFormat};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn resize_image_keeps_aspect_and_honours_format() {
    let app = spawn_app().await;
    let src = app.fixtures.add("photo.jpg", fixtures::jpeg(640, 480));

    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Jpeg);
    assert_eq!(fixtures::decode(out).dimensions(), (320, 240));

    for (format, expected) in [
        ("png", ImageFormat::Png),
        ("webp", ImageFormat::WebP),
        ("jpg", ImageFormat::Jpeg),
    ] {
        let doc = app
            .run_done(edit(
                &src,
                &["resize-image"],
                Some(json!({ "scale": 1.5, "format": format })),
            ))
            .await;
        let out = &app.download_all(&doc).await[0];
        assert_eq!(fixtures::format_of(out), expected, "format {format}");
        assert_eq!(
            fixtures::decode(out).dimensions(),
            (960, 720),
            "format {format}"
        );
    }
}

#[tokio::test]
async fn resize_image_defaults_to_scale_one_and_the_inputs_format() {
    let app = spawn_app().await;
    let src = app.fixtures.add("odd.png", fixtures::png(33, 21));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::Png);
    assert_eq!(fixtures::decode(out).dimensions(), (33, 21));
}

#[tokio::test]
async fn resize_image_applies_exif_orientation() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("rotated.jpg", fixtures::jpeg_with_orientation(80, 40, 6));
    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({ "scale": 0.5, "format": "png" })),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    // Orientation 6 means the stored 80×40 picture is shown as 40×80.
    assert_eq!(fixtures::decode(out).dimensions(), (20, 40));
}

#[tokio::test]
async fn transparency_is_kept_in_png_and_webp_and_flattened_in_jpeg() {
    let app = spawn_app().await;
    let src = app
        .fixtures
        .add("alpha.png", fixtures::png_with_alpha(40, 20));

    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({ "format": "png" })),
        ))
        .await;
    let png = fixtures::decode(&app.download_all(&doc).await[0]).to_rgba8();
    assert_eq!(
        png.get_pixel(2, 10)[3],
        0,
        "transparent side stays transparent"
    );
    assert_eq!(png.get_pixel(37, 10)[3], 255);

    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(fixtures::format_of(out), ImageFormat::WebP);
    let webp = fixtures::decode(out).to_rgba8();
    assert!(webp.get_pixel(2, 10)[3] < 16, "webp keeps alpha");
    assert!(webp.get_pixel(37, 10)[3] > 240);

    let doc = app
        .run_done(edit(
            &src,
            &["resize-image"],
            Some(json!({ "format": "jpeg" })),
        ))
        .await;
    let jpeg = fixtures::decode(&app.download_all(&doc).await[0]).to_rgb8();
    let p = jpeg.get_pixel(2, 10);
    assert!(
        p[0] > 230 && p[1] > 230 && p[2] > 230,
        "flattened onto white, got {p:?}"
    );
}

#[tokio::test]
async fn image_to_webp_converts_jpeg_png_and_webp() {
    let app = spawn_app().await;
    for (name, bytes) in [
        ("a.jpg", fixtures::jpeg(50, 30)),
        ("a.png", fixtures::png(50, 30)),
        ("a.webp", fixtures::webp_with_alpha(50, 30)),
    ] {
        let src = app.fixtures.add(name, bytes);
        let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
        let out = &app.download_all(&doc).await[0];
        assert_eq!(fixtures::format_of(out), ImageFormat::WebP, "{name}");
        assert_eq!(fixtures::decode(out).dimensions(), (50, 30), "{name}");
    }
}

#[tokio::test]
async fn image_to_video_lasts_exactly_duration_at_fps() {
    let app = spawn_app().await;
    let src = app.fixtures.add("odd.png", fixtures::png(33, 21));
    let doc = app
        .run_done(edit(
            &src,
            &["image-to-video"],
            Some(json!({ "fps": 10, "duration": 2 })),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert!(out.to_str().unwrap().ends_with(".mp4"));
    let probe = probe(out);
    let video = video_stream(&probe);
    assert_eq!(video["codec_name"], "h264");
    assert_eq!(video["pix_fmt"], "yuv420p");
    let (w, h) = (
        video["width"].as_u64().unwrap(),
        video["height"].as_u64().unwrap(),
    );
    assert!(
        w % 2 == 0 && h % 2 == 0 && w.abs_diff(33) <= 1 && h.abs_diff(21) <= 1,
        "{w}x{h}"
    );
    assert_eq!(video["r_frame_rate"], "10/1");
    assert_eq!(video["nb_read_frames"], "20");
    let duration: f64 = probe["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((duration - 2.0).abs() < 0.01, "duration {duration}");
    assert!(probe["format"]["format_name"]
        .as_str()
        .unwrap()
        .contains("mp4"));
}

#[tokio::test]
async fn image_to_video_shows_the_pictures_colours() {
    let app = spawn_app().await;
    // Four 32x32 squares: white, red, green, blue.
    let colours = [[255, 255, 255], [255, 0, 0], [0, 160, 0], [0, 0, 255]];
    let picture = image::RgbImage::from_fn(64, 64, |x, y| {
        image::Rgb(colours[(y / 32 * 2 + x / 32) as usize])
    });
    let png = fixtures::encode(picture.into(), ImageFormat::Png);
    let src = app.fixtures.add("squares.png", png);
    let doc = app
        .run_done(edit(
            &src,
            &["image-to-video"],
            Some(json!({ "fps": 5, "duration": 1 })),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    let frame = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(out)
        .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(frame.len(), 64 * 64 * 3);
    for (i, colour) in colours.iter().enumerate() {
        // The middle of each square, away from the edges chroma is shared across.
        let (x, y) = (16 + 32 * (i % 2), 16 + 32 * (i / 2));
        let at = (y * 64 + x) * 3;
        let got = &frame[at..at + 3];
        for c in 0..3 {
            assert!(
                got[c].abs_diff(colour[c]) <= 6,
                "square {i}: {got:?} for {colour:?}"
            );
        }
    }
}

#[tokio::test]
async fn image_to_video_of_a_picture_broken_past_its_header_fails_with_the_decoders_error() {
    // ffmpeg starts once the header gives the size, while the picture decodes: the
    // decoder's error must end the edit (and ffmpeg), not ffmpeg waiting for a frame.
    let app = spawn_app().await;
    let whole = fixtures::jpeg(640, 480);
    let src = app
        .fixtures
        .add("cut.jpg", whole[..whole.len() * 2 / 3].to_vec());
    let started = std::time::Instant::now();
    let error = app.run_failed(edit(&src, &["image-to-video"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[tokio::test]
async fn image_to_video_uses_defaults_of_25_fps_and_5_seconds() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.jpg", fixtures::jpeg(64, 48));
    let doc = app.run_done(edit(&src, &["image-to-video"], None)).await;
    let probe = probe(&app.download_all(&doc).await[0]);
    let video = video_stream(&probe);
    assert_eq!(video["r_frame_rate"], "25/1");
    assert_eq!(video["nb_read_frames"], "125");
    assert_eq!(
        (video["width"].as_u64(), video["height"].as_u64()),
        (Some(64), Some(48))
    );
}

#[tokio::test]
async fn a_pipeline_feeds_each_output_to_the_next_command() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", fixtures::png(200, 100));
    let doc = app
        .run_done(edit(
            &src,
            &["resize-image", "image-to-video"],
            Some(json!({ "scale": 0.5, "format": "jpeg", "fps": 5, "duration": 1 })),
        ))
        .await;
    let probe = probe(&app.download_all(&doc).await[0]);
    let video = video_stream(&probe);
    assert_eq!(
        (video["width"].as_u64(), video["height"].as_u64()),
        (Some(100), Some(50))
    );
    assert_eq!(video["nb_read_frames"], "5");
}

#[tokio::test]
async fn several_assets_give_download_urls_in_request_order() {
    let app = spawn_app().await;
    let a = app.fixtures.add("a.png", fixtures::png(40, 20));
    let b = app.fixtures.add("b.jpg", fixtures::jpeg(30, 60));
    let c = app
        .fixtures
        .add("c.webp", fixtures::webp_with_alpha(10, 10));
    let body = json!({
        "assets": [{ "type": "image", "src": a }, { "type": "image", "src": b }, { "type": "image", "src": c }],
        "commands": ["resize-image"],
        "options": { "scale": 2 }
    });
    let doc = app.run_done(body).await;
    let outs = app.download_all(&doc).await;
    let dims: Vec<_> = outs
        .iter()
        .map(|p| fixtures::decode(p).dimensions())
        .collect();
    assert_eq!(dims, [(80, 40), (60, 120), (20, 20)]);
    assert_eq!(fixtures::format_of(&outs[1]), ImageFormat::Jpeg);
}

#[tokio::test]
async fn the_format_is_detected_from_content_not_the_url() {
    let app = spawn_app().await;
    // A PNG served under a .jpg name resizes as a PNG.
    let src = app.fixtures.add("liar.jpg", fixtures::png(20, 20));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    assert_eq!(
        fixtures::format_of(&app.download_all(&doc).await[0]),
        ImageFormat::Png
    );
    assert!(doc["attributes"]["downloadUrls"][0]
        .as_str()
        .unwrap()
        .contains(".png?"));

    // A GIF under a .png name resizes as a GIF.
    let src = app.fixtures.add("gif.png", fixtures::gif(20, 20));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    assert_eq!(
        fixtures::format_of(&app.download_all(&doc).await[0]),
        ImageFormat::Gif
    );

    // A video is not an input of resize-image, whatever its name says.
    let src = app
        .fixtures
        .add("clip.png", crate::clips::mp4("64x48", 10, 0.5, false));
    let error = app.run_failed(edit(&src, &["resize-image"], None)).await;
    assert_eq!(error["code"], "unsupported_input_format");
    let detail = error["detail"].as_str().unwrap();
    assert!(
        detail.contains("Asset 0") && detail.contains("resize-image"),
        "{detail}"
    );
}

#[tokio::test]
async fn bad_media_and_bad_sources_fail_with_a_code() {
    let app = spawn_app().await;
    let truncated = fixtures::jpeg(64, 64)[..200].to_vec();
    let src = app.fixtures.add("broken.jpg", truncated);
    let error = app.run_failed(edit(&src, &["resize-image"], None)).await;
    assert_eq!(error["code"], "invalid_media", "{error}");

    let src = app
        .fixtures
        .add("text.png", b"hello, this is not an image at all".to_vec());
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");

    let error = app
        .run_failed(edit(
            &app.fixtures.url("missing.png"),
            &["image-to-webp"],
            None,
        ))
        .await;
    assert_eq!(error["code"], "source_http_error", "{error}");
    assert!(error["detail"].as_str().unwrap().contains("404"));

    let error = app
        .run_failed(edit(
            "http://127.0.0.1:1/none.png",
            &["image-to-webp"],
            None,
        ))
        .await;
    assert_eq!(error["code"], "source_unreachable", "{error}");
}

#[tokio::test]
async fn a_source_that_keeps_failing_is_retried_then_fails() {
    let app = spawn_app().await;
    let url = app.fixtures.status_url(503);
    let error = app.run_failed(edit(&url, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "source_http_error", "{error}");
    // max_attempts (5) tries, each one request.
    assert_eq!(app.fixtures.hits(), 5);
}

#[tokio::test]
async fn images_over_the_pixel_limit_fail_before_decoding() {
    let app = spawn_app_with(|c| c.max_image_pixels = 10_000).await;
    let src = app.fixtures.add("big.png", fixtures::png(200, 100));
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "image_too_large", "{error}");
    let src = app.fixtures.add("small.png", fixtures::png(50, 50));
    let error = app
        .run_failed(edit(&src, &["resize-image"], Some(json!({ "scale": 4 }))))
        .await;
    assert_eq!(error["code"], "output_too_large", "{error}");
}
