//! The commands that make a video ready to publish (docs/API.md, "Video for the page"):
//! `trim-video`, `video-poster` and `video-preview` through the real service, judged by
//! their frames. The source clips number their frames: frame n is a flat grey of level
//! 6n, so a decoded frame says which source frame it is.

use std::io::Cursor;
use std::path::Path;

use image::AnimationDecoder;
use serde_json::{json, Value};

use crate::clips::*;
use crate::helpers::*;

/// Grey levels between numbered frames.
const STEP: f64 = 6.0;

/// 64×48, 10 fps, 4 s (frames 0–39), lossless H.264 with a keyframe every second
/// (frames 0, 10, 20, 30), and a 440 Hz tone: every frame decodes to its own level.
fn numbered_clip() -> Vec<u8> {
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "color=black:s=64x48:r=10:d=4,format=gray,geq=lum='N*6'",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:duration=4",
            "-c:v",
            "libx264",
            "-qp",
            "0",
            "-g",
            "10",
            "-keyint_min",
            "10",
            "-sc_threshold",
            "0",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-shortest",
            "-f",
            "mp4",
        ],
        "numbered.mp4",
    )
}

/// The mean grey of the first video frame of `path` (at `at` seconds, when given).
fn first_frame_grey(path: &Path, at: Option<f64>) -> f64 {
    let mut command = std::process::Command::new("ffmpeg");
    command.args(["-v", "error"]);
    if let Some(at) = at {
        command.args(["-ss", &at.to_string()]);
    }
    let out = command
        .arg("-i")
        .arg(path)
        .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        .output()
        .unwrap();
    assert!(out.status.success() && !out.stdout.is_empty(), "{path:?}");
    out.stdout.iter().map(|&v| f64::from(v)).sum::<f64>() / out.stdout.len() as f64
}

/// Which numbered frame a grey level is.
fn frame_number(grey: f64) -> i64 {
    (grey / STEP).round() as i64
}

fn grey_of(image: &image::DynamicImage) -> f64 {
    let grey = image.to_luma8();
    grey.pixels().map(|p| f64::from(p[0])).sum::<f64>() / grey.len() as f64
}

fn seconds_of(probe: &Value, kind: &str) -> f64 {
    let stream = streams_of(probe, kind)[0];
    stream["duration"].as_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn trim_video_starts_on_the_frame_shown_at_start_with_its_audio_in_step() {
    let app = spawn_app().await;
    let source = numbered_clip();
    let src = app.fixtures.add("numbered.mp4", source);

    // On a keyframe (frame 10 at 1 s): the packets are copied, lossless profile kept.
    let copied = run_and_probe(
        &app,
        &src,
        &["trim-video"],
        Some(json!({"start": 1, "duration": 1.5})),
    )
    .await;
    let (path, probe) = &copied[0];
    assert_eq!(frame_number(first_frame_grey(path, None)), 10);
    assert_eq!(frames(video_stream(probe)), 15, "frames 10–24");
    assert!((seconds_of(probe, "video") - 1.5).abs() < 0.05, "{probe}");
    assert!((seconds_of(probe, "audio") - 1.5).abs() < 0.1, "{probe}");
    assert_eq!(
        video_stream(probe)["profile"],
        "High 4:4:4 Predictive",
        "copied"
    );

    // Between frames (1.25 s shows frame 12, from 1.2 s): encoded from that frame.
    let encoded = run_and_probe(
        &app,
        &src,
        &["trim-video"],
        Some(json!({"start": 1.25, "end": 2.5})),
    )
    .await;
    let (path, probe) = &encoded[0];
    assert_eq!(frame_number(first_frame_grey(path, None)), 12);
    assert_eq!(
        frame_number(first_frame_grey(path, Some(1.0))),
        22,
        "in step"
    );
    assert_eq!(frames(video_stream(probe)), 13, "frames 12–24");
    assert!((seconds_of(probe, "audio") - 1.3).abs() < 0.1, "{probe}");
    assert_ne!(video_stream(probe)["profile"], "High 4:4:4 Predictive");

    // To the end by default.
    let rest = run_and_probe(&app, &src, &["trim-video"], Some(json!({"start": 3}))).await;
    assert_eq!(frame_number(first_frame_grey(&rest[0].0, None)), 30);
    assert_eq!(frames(video_stream(&rest[0].1)), 10);

    // `end` with `duration`, or `end` before `start`: refused at creation.
    for (options, pointer) in [
        (json!({"end": 2, "duration": 1}), "/options/duration"),
        (json!({"start": 2, "end": 1}), "/options/end"),
    ] {
        let response = app
            .post_edit(edit(&src, &["trim-video"], Some(options)))
            .await;
        assert_eq!(response.status(), 422);
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body["errors"][0]["code"], "invalid_option_combination",
            "{body}"
        );
        assert_eq!(body["errors"][0]["source"]["pointer"], pointer, "{body}");
    }
}

#[tokio::test]
async fn video_poster_is_the_frame_at_time_or_the_best_after_a_black_fade_in() {
    let app = spawn_app().await;
    let src = app.fixtures.add("numbered.mp4", numbered_clip());
    // 2.05 s shows frame 20 (from 2.0 s); the default format is WebP.
    let doc = app
        .run_done(edit(&src, &["video-poster"], Some(json!({"time": 2.05}))))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(crate::fixtures::format_of(out), image::ImageFormat::WebP);
    let poster = crate::fixtures::decode(out);
    assert_eq!(poster.width(), 64);
    assert_eq!(frame_number(grey_of(&poster)), 20);
    let output = &doc["attributes"]["outputs"][0];
    assert!(
        output["blurhash"].is_string() && output["dominantColor"].is_string(),
        "{doc}"
    );
    for (format, expected) in [
        ("png", image::ImageFormat::Png),
        ("jpeg", image::ImageFormat::Jpeg),
    ] {
        let options = json!({"time": 3.3, "format": format});
        let doc = app
            .run_done(edit(&src, &["video-poster"], Some(options)))
            .await;
        let out = &app.download_all(&doc).await[0];
        assert_eq!(crate::fixtures::format_of(out), expected);
        assert_eq!(
            frame_number(grey_of(&crate::fixtures::decode(out))),
            33,
            "{format}"
        );
    }

    // Black for a second, then a fade-in over 1.5 s: the poster is a full frame after it.
    let faded = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=10:duration=6,fade=t=in:st=1:d=1.5",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-f",
            "mp4",
        ],
        "faded.mp4",
    );
    let full = crate::clips::with_file(&faded, |path| first_frame_grey(path, Some(4.0)));
    let src = app.fixtures.add("faded.mp4", faded);
    let doc = app.run_done(edit(&src, &["video-poster"], None)).await;
    let poster = crate::fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!((poster.width(), poster.height()), (96, 64));
    let grey = grey_of(&poster);
    assert!(
        grey > full * 0.9,
        "not dark nor fading: {grey} against {full}"
    );
}

/// Frames, total milliseconds and size of an animated WebP or GIF.
fn animation(path: &Path) -> (usize, u64, (u32, u32)) {
    let bytes = std::fs::read(path).unwrap();
    let frames = match crate::fixtures::format_of(path) {
        image::ImageFormat::Gif => image::codecs::gif::GifDecoder::new(Cursor::new(bytes))
            .unwrap()
            .into_frames(),
        _ => image::codecs::webp::WebPDecoder::new(Cursor::new(bytes))
            .unwrap()
            .into_frames(),
    };
    let frames: Vec<image::Frame> = frames.collect_frames().unwrap();
    let millis = frames
        .iter()
        .map(|f| {
            let (num, den) = f.delay().numer_denom_ms();
            u64::from(num / den)
        })
        .sum();
    (frames.len(), millis, frames[0].buffer().dimensions())
}

#[tokio::test]
async fn video_preview_is_an_animation_of_its_range_at_its_width() {
    let app = spawn_app().await;
    let src = app.fixtures.add("clip.mp4", mp4("320x240", 25, 5.0, true));
    let doc = app.run_done(edit(&src, &["video-preview"], None)).await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(crate::fixtures::format_of(out), image::ImageFormat::WebP);
    let (frames, millis, size) = animation(out);
    assert_eq!(size, (480, 360), "480 wide by default, aspect kept");
    assert_eq!(frames, 45, "the first 3 s at 15 fps");
    assert!(millis.abs_diff(3000) <= 20, "{millis} ms");

    let options = json!({"start": 1, "duration": 2, "width": 160, "format": "gif"});
    let doc = app
        .run_done(edit(&src, &["video-preview"], Some(options)))
        .await;
    let out = &app.download_all(&doc).await[0];
    assert_eq!(crate::fixtures::format_of(out), image::ImageFormat::Gif);
    let (frames, millis, size) = animation(out);
    assert_eq!(size, (160, 120));
    assert_eq!(frames, 30);
    assert!(millis.abs_diff(2000) <= 40, "{millis} ms");

    // Longer than 10 s is refused at creation.
    let too_long = app
        .post_edit(edit(
            &src,
            &["video-preview"],
            Some(json!({"duration": 12})),
        ))
        .await;
    assert_eq!(too_long.status(), 422);
}

#[tokio::test]
async fn new_commands_feed_the_commands_after_them() {
    let app = spawn_app().await;
    let src = app.fixtures.add("numbered.mp4", numbered_clip());
    // A trim made into a GIF: the GIF holds the trimmed part only.
    let doc = app
        .run_done(edit(
            &src,
            &["trim-video", "video-to-gif"],
            Some(json!({"start": 2, "end": 3})),
        ))
        .await;
    let gif = &app.download_all(&doc).await[0];
    let (frames, millis, _) = animation(gif);
    assert_eq!(frames, 10);
    assert!(millis.abs_diff(1000) <= 20, "{millis} ms");
    let first = crate::fixtures::decode(gif);
    assert_eq!(frame_number(grey_of(&first)), 20);
    // A poster resized.
    let options = json!({"time": 1, "width": 32, "format": "png"});
    let doc = app
        .run_done(edit(&src, &["video-poster", "resize-image"], Some(options)))
        .await;
    let poster = crate::fixtures::decode(&app.download_all(&doc).await[0]);
    assert_eq!((poster.width(), poster.height()), (32, 24));
    assert_eq!(frame_number(grey_of(&poster)), 10);
}
