//! The output budget: no edit produces more files than `--max-outputs-per-edit`,
//! whether the options prove it at creation or a fan-out of fan-outs shows it later.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::*;
use crate::hostile::ffmpeg_fixture;

#[tokio::test]
async fn an_edit_whose_options_prove_too_many_outputs_is_refused_at_creation() {
    let app = spawn_app().await;
    let src = app.fixtures.url("clip.mp4");
    let asset = json!({ "type": "video", "src": src });
    // Each clip gives at least one frame, each frame a 1,000-frame video, each of
    // those 1,000 files: 3 assets make at least 3,000, past the default 2,000.
    let body = json!({
        "assets": [asset, asset, asset],
        "commands": ["extract-frames", "image-to-video", "extract-frames"],
        "options": { "fps": 100, "duration": 10 }
    });
    let response = app.post_edit(body).await;
    assert_eq!(response.status(), 422);
    let error = &response.json::<serde_json::Value>().await.unwrap()["errors"][0];
    assert_eq!(error["code"], "too_many_outputs", "{error}");
    assert_eq!(error["source"]["pointer"], "/commands/2", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("3000"),
        "{error}"
    );

    // Two assets stay within the limit: accepted.
    let body = json!({
        "assets": [asset, asset],
        "commands": ["extract-frames", "image-to-video", "extract-frames"],
        "options": { "fps": 100, "duration": 10 }
    });
    assert_eq!(app.post_edit(body).await.status(), 201);
}

#[tokio::test]
async fn a_fan_out_of_fan_outs_stops_before_the_step_that_would_pass_the_limit() {
    let app = spawn_app_with(|c| c.max_outputs_per_edit = 20).await;
    // 6 frames; each becomes a 10-frame video: 60 files, past 20.
    let clip = ffmpeg_fixture(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=32x32:rate=6:duration=1",
            "-f",
            "mp4",
        ],
        "six.mp4",
    );
    let src = app.fixtures.add("six.mp4", clip);
    let started = Instant::now();
    let error = app
        .run_failed(edit(
            &src,
            &["extract-frames", "image-to-video", "extract-frames"],
            Some(json!({ "fps": 10, "duration": 1 })),
        ))
        .await;
    assert_eq!(error["code"], "too_many_outputs", "{error}");
    let detail = error["detail"].as_str().unwrap();
    assert!(
        detail.contains("60") && detail.contains("command 1"),
        "{error}"
    );
    // Stopped before six image-to-video runs, not after.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn a_file_that_needs_more_memory_than_the_limit_fails_only_its_own_edit() {
    let app = spawn_app_with(|c| c.processes.process_memory_limit = 48 << 20).await;
    let clip = ffmpeg_fixture(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=1920x1080:rate=25:duration=2",
            "-f",
            "mp4",
        ],
        "big.mp4",
    );
    let src = app.fixtures.add("big.mp4", clip);
    let error = app.run_failed(edit(&src, &["video-to-gif"], None)).await;
    assert_eq!(error["code"], "memory_limit_exceeded", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("48 MiB"),
        "{error}"
    );
    // The service, and its small edits, carry on.
    let png = app.fixtures.add("ok.png", crate::fixtures::png(10, 10));
    app.run_done(edit(&png, &["image-to-webp"], None)).await;
}

#[tokio::test]
async fn a_fetch_does_not_start_on_a_disk_short_of_space() {
    let app = spawn_app_with(|c| {
        c.min_free_disk_bytes = u64::MAX;
        c.max_attempts = 2;
    })
    .await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(10, 10));
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "storage_error", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("disk space"),
        "{error}"
    );
    assert_eq!(app.fixtures.hits(), 0, "the source was never fetched");
}

#[tokio::test]
async fn an_edit_past_its_work_budget_stops_with_too_much_work_before_the_step() {
    // 100×100 pixels × 200 frames = 2 M pixel-frames, past a 1 M budget.
    let app = spawn_app_with(|c| c.max_work_per_edit = 1_000_000).await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(100, 100));
    let error = app
        .run_failed(edit(
            &src,
            &["image-to-video"],
            Some(json!({ "fps": 20, "duration": 10 })),
        ))
        .await;
    assert_eq!(error["code"], "too_much_work", "{error}");
    let detail = error["detail"].as_str().unwrap();
    assert!(
        detail.contains("command 0 (image-to-video)")
            && detail.contains("limit of 1 million per edit"),
        "{error}"
    );
    // Half of it fits.
    let doc = app
        .run_done(edit(
            &src,
            &["image-to-video"],
            Some(json!({ "fps": 10, "duration": 10 })),
        ))
        .await;
    assert_eq!(doc["attributes"]["status"], "done");
}
