//! Pipelines: commands chained on one asset, and several assets in one edit. Their
//! intermediates never leave memory: `extract-frames` followed by `resize-image`
//! decodes the video once and resizes each decoded frame, so the outputs carry no
//! generation loss from a lossy WebP in between.

use image::{GenericImageView, ImageFormat};
use serde_json::json;

use crate::clips::*;
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn extract_frames_then_resize_image_resizes_the_decoded_frames_not_a_lossy_copy() {
    let app = spawn_app().await;
    let source = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=10:duration=0.5",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-qp",
            "0",
            "-pix_fmt",
            "yuv420p",
            "-f",
            "mp4",
        ],
        "detailed.mp4",
    );
    // The first frame as ffmpeg itself decodes it, and what one lossy WebP
    // generation (quality 80, as extract-frames writes) makes of it.
    let first_frame = |codec: &[&str], name: &str| {
        with_file(&source, |path| {
            let mut args = vec!["-i", path.to_str().unwrap(), "-frames:v", "1"];
            args.extend(codec);
            args.extend(["-f", "image2"]);
            image::load_from_memory(&ffmpeg(&args, name))
                .unwrap()
                .to_rgb8()
        })
    };
    let reference = first_frame(&["-pix_fmt", "rgb24", "-c:v", "png"], "first.png");
    let lossy = first_frame(&["-c:v", "libwebp", "-quality", "80"], "first.webp");
    let src = app.fixtures.add("detailed.mp4", source.clone());

    let doc = app
        .run_done(edit(
            &src,
            &["extract-frames", "resize-image"],
            Some(json!({ "scale": 1, "format": "png" })),
        ))
        .await;
    let outs = app.download_all(&doc).await;
    assert_eq!(outs.len(), 5, "one output per frame");
    let first = fixtures::decode(&outs[0]).to_rgb8();
    assert_eq!(first.dimensions(), (96, 64));
    let ours = mean_difference(&first, &reference);
    let one_generation = mean_difference(&lossy, &reference);
    assert!(
        ours * 4.0 < one_generation,
        "off by {ours:.2} levels on average; a WebP generation costs {one_generation:.2}"
    );
}

/// The mean absolute difference of two pictures' samples.
fn mean_difference(a: &image::RgbImage, b: &image::RgbImage) -> f64 {
    let sum: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / a.as_raw().len() as f64
}

#[tokio::test]
async fn a_fused_step_reports_the_resize_s_own_errors_at_the_resize_command() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.mp4", mp4("96x64", 10, 0.3, false));
    let error = app
        .run_failed(edit(
            &src,
            &["extract-frames", "resize-image"],
            Some(json!({ "scale": 0.001 })),
        ))
        .await;
    assert_eq!(error["code"], "output_too_small", "{error}");
    let detail = error["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("Asset 0, command 1 (resize-image)"),
        "{detail}"
    );

    // The video's own faults stay with extract-frames.
    let text = app.fixtures.add("a.txt", b"not a video".to_vec());
    let error = app
        .run_failed(edit(&text, &["extract-frames", "resize-image"], None))
        .await;
    assert_eq!(error["code"], "unsupported_input_format", "{error}");
}

#[tokio::test]
async fn a_pipeline_goes_on_after_the_fused_pair() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.mp4", mp4("96x64", 10, 0.3, false));
    let doc = app
        .run_done(edit(
            &src,
            &["extract-frames", "resize-image", "image-to-webp"],
            Some(json!({ "scale": 0.5, "format": "jpeg" })),
        ))
        .await;
    let outs = app.download_all(&doc).await;
    assert_eq!(outs.len(), 3);
    for out in &outs {
        assert_eq!(fixtures::format_of(out), image::ImageFormat::WebP);
        assert_eq!(fixtures::decode(out).dimensions(), (48, 32));
    }
}

#[tokio::test]
async fn frames_are_resized_from_the_size_they_are_shown_at() {
    let app = spawn_app().await;
    // 96x64 stored with pixels twice as wide as tall: shown at 192x64.
    let wide = filtered_clip("96x64", 10, 0.3, "setsar=2", "mp4");
    // 96x64 stored with a quarter turn: shown at 64x96.
    let turned = with_file(&clip("96x64", 10, 0.3, false, "mov"), |plain| {
        let plain = plain.to_str().unwrap();
        let args = ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90"];
        ffmpeg(&[&args[..], &["-f", "mov"]].concat(), "turned.mov")
    });
    for (name, bytes, halved) in [
        ("wide.mp4", wide, (96, 32)),
        ("turned.mov", turned, (32, 48)),
    ] {
        let src = app.fixtures.add(name, bytes);
        let doc = app
            .run_done(edit(
                &src,
                &["extract-frames", "resize-image"],
                Some(json!({ "scale": 0.5 })),
            ))
            .await;
        let outs = app.download_all(&doc).await;
        assert_eq!(outs.len(), 3, "{name}: one output per frame");
        for out in &outs {
            assert_eq!(fixtures::format_of(out), image::ImageFormat::WebP);
            assert_eq!(fixtures::decode(out).dimensions(), halved, "{name}");
        }
    }
}

#[tokio::test]
async fn frames_can_be_enlarged_too() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.mp4", mp4("96x64", 10, 0.2, false));
    let doc = app
        .run_done(edit(
            &src,
            &["extract-frames", "resize-image"],
            Some(json!({ "scale": 2, "format": "png" })),
        ))
        .await;
    let outs = app.download_all(&doc).await;
    assert_eq!(outs.len(), 2);
    for out in &outs {
        assert_eq!(fixtures::format_of(out), image::ImageFormat::Png);
        assert_eq!(fixtures::decode(out).dimensions(), (192, 128));
    }
}

#[tokio::test]
async fn pipelines_chain_image_and_video_commands() {
    let app = spawn_app().await;
    let png = app.fixtures.add("a.png", fixtures::png(200, 100));
    let video = app.fixtures.add("v.mp4", mp4("160x120", 25, 0.4, true));

    // image-to-video then modify-video-speed: 2 s at 10 fps, twice as fast.
    let out = run_and_probe(
        &app,
        &png,
        &["image-to-video", "modify-video-speed"],
        Some(json!({ "fps": 10, "duration": 2, "speed": 2 })),
    )
    .await;
    assert!((duration(&out[0].1) - 1.0).abs() <= 0.05);
    assert_eq!(dims(video_stream(&out[0].1)), (200, 100));

    // video-to-gif then gif-to-video.
    let out = run_and_probe(&app, &video, &["video-to-gif", "gif-to-video"], None).await;
    let stream = video_stream(&out[0].1);
    assert_eq!(
        (stream["codec_name"].as_str(), dims(stream)),
        (Some("h264"), (160, 120))
    );
    assert_eq!(frames(stream), 6, "0.4 s at 15 fps");

    // extract-frames fans out: every frame resized.
    let doc = app
        .run_done(edit(
            &video,
            &["extract-frames", "resize-image"],
            Some(json!({ "scale": 0.5, "format": "png" })),
        ))
        .await;
    let outs = app.download_all(&doc).await;
    assert_eq!(outs.len(), 10);
    for out in &outs {
        assert_eq!(fixtures::format_of(out), ImageFormat::Png);
        assert_eq!(fixtures::decode(out).dimensions(), (80, 60));
    }
}

#[tokio::test]
async fn several_video_assets_give_outputs_by_asset_then_frame() {
    let app = spawn_app().await;
    let a = app.fixtures.add("a.mp4", mp4("96x64", 10, 0.3, false));
    let b = app
        .fixtures
        .add("b.mov", clip("64x48", 10, 0.2, false, "mov"));
    let body = json!({
        "assets": [{ "type": "video", "src": a }, { "type": "video", "src": b }],
        "commands": ["extract-frames"],
    });
    let doc = app.run_done(body).await;
    let urls: Vec<&str> = doc["attributes"]["downloadUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    let names: Vec<&str> = urls
        .iter()
        .map(|u| u.split('?').next().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["0-0.webp", "0-1.webp", "0-2.webp", "1-0.webp", "1-1.webp"]
    );
    let outs = app.download_all(&doc).await;
    assert_eq!(fixtures::decode(&outs[0]).dimensions(), (96, 64));
    assert_eq!(fixtures::decode(&outs[4]).dimensions(), (64, 48));
}
