//! Dry runs (docs/API.md): `POST /v1/edits?dryRun=true` predicts what the edit
//! would make, or the error it would end with, and creates nothing; the predictions
//! are held against what the edit then really produces. On both backends.

use serde_json::{json, Value};

use crate::backends::Backend;
use crate::helpers::*;
use crate::{clips, fixtures};

on_both_backends!(
    a_dry_run_predicts_what_the_edit_then_makes_and_creates_nothing,
    a_dry_run_answers_the_error_the_edit_would_end_with,
    a_dry_run_naming_one_upload_in_ten_assets_probes_it_without_a_copy_per_asset,
);

pub async fn dry_run(app: &TestApp, query: &str, body: &Value) -> (u16, Value) {
    let response = app
        .client
        .post(format!("{}/v1/edits?{query}", app.base))
        .bearer_auth(&app.token)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn listed(app: &TestApp) -> usize {
    let (_, page) = app.send(reqwest::Method::GET, "/v1/edits").await;
    page["data"].as_array().unwrap().len()
}

async fn a_dry_run_predicts_what_the_edit_then_makes_and_creates_nothing(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let photo = app.fixtures.add("a.png", fixtures::png(64, 48));
    let video = app
        .fixtures
        .add("clip.mp4", clips::mp4("96x64", 10, 2.0, false));
    let cases = [
        edit(
            &photo,
            &["resize-image", "image-to-video"],
            Some(json!({"scale": 0.5, "duration": 2, "fps": 10})),
        ),
        edit(&video, &["extract-frames"], None),
        edit(&video, &["modify-video-speed"], Some(json!({"speed": 2}))),
        // Two kinds of file: the sheet, then the VTT.
        edit(&video, &["video-storyboard"], Some(json!({"count": 4}))),
    ];
    for (n, body) in cases.into_iter().enumerate() {
        let (status, plan) = dry_run(&app, "dryRun=true", &body).await;
        assert_eq!(status, 200, "{plan}");
        assert_eq!(plan["type"], "edit-plan");
        assert_eq!(listed(&app).await, n, "a dry run creates nothing");
        let asset = &plan["attributes"]["assets"][0];
        assert_eq!(asset["src"], body["assets"][0]["src"]);
        let kinds = asset["outputs"].as_array().unwrap();

        let done = app.run_done(body.clone()).await;
        let outputs = done["attributes"]["outputs"].as_array().unwrap();
        let files: u64 = kinds.iter().map(|k| k["count"].as_u64().unwrap()).sum();
        assert_eq!(files, outputs.len() as u64, "{plan} vs {done}");
        // Each kind predicted, against the first of its files (in the edit's order).
        let mut first = 0;
        for predicted in kinds {
            let real = &outputs[first];
            assert_eq!(predicted["format"], real["format"], "{plan} vs {done}");
            for field in ["width", "height"] {
                if !predicted[field].is_null() {
                    assert_eq!(predicted[field], real[field], "{field}: {plan} vs {done}");
                }
            }
            if let Some(seconds) = predicted["duration"].as_f64() {
                let real = real["duration"].as_f64().unwrap();
                assert!((seconds - real).abs() < 0.15, "{plan} vs {done}");
            }
            first += predicted["count"].as_u64().unwrap() as usize;
        }
    }
    let (_, plan) = dry_run(
        &app,
        "dryRun=true",
        &edit(&video, &["extract-frames"], None),
    )
    .await;
    let asset = &plan["attributes"]["assets"][0];
    assert_eq!(
        (
            asset["format"].as_str(),
            asset["width"].as_u64(),
            asset["height"].as_u64()
        ),
        (Some("mp4"), Some(96), Some(64))
    );
    assert_eq!(asset["frames"], 20, "{plan}");
    let (status, error) = dry_run(
        &app,
        "dryRun=maybe",
        &edit(&video, &["extract-frames"], None),
    )
    .await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("invalid_query"))
    );
}

async fn a_dry_run_answers_the_error_the_edit_would_end_with(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let photo = app.fixtures.add("a.png", fixtures::png(64, 48));
    for body in [
        edit(&app.fixtures.status_url(404), &["image-to-webp"], None),
        edit(&photo, &["video-to-webm"], None),
        edit(&photo, &["resize-image"], Some(json!({"scale": 0.001}))),
        // A file an option names is fetched as the edit would fetch it.
        edit(
            &photo,
            &["watermark"],
            Some(json!({"overlay": app.fixtures.status_url(404)})),
        ),
    ] {
        let (status, error) = dry_run(&app, "dryRun=true", &body).await;
        assert_eq!(status, 422, "{error}");
        let code = error["errors"][0]["code"].as_str().unwrap().to_string();
        let failed = app.run_failed(body).await;
        assert_eq!(
            failed["code"],
            code.as_str(),
            "the dry run said {error}, the edit {failed}"
        );
    }
    // A request that does not validate is refused as a POST would be.
    let (status, error) = dry_run(&app, "dryRun=true", &json!({"assets": []})).await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("empty_array"))
    );
}

/// Bytes of every file under `dir`.
fn disk_use(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => disk_use(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

async fn a_dry_run_naming_one_upload_in_ten_assets_probes_it_without_a_copy_per_asset(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    // Uncompressed: 5.8 MB, so that ten copies (the old way) would be 58 MB.
    let bmp = fixtures::bmp(image::DynamicImage::ImageRgb8(fixtures::gradient(
        1600, 1200,
    )));
    let upload = app.upload(bmp.clone()).await;
    let src = upload["attributes"]["src"].as_str().unwrap();
    let mut body = edit(src, &["resize-image"], Some(json!({"scale": 0.5})));
    body["assets"] = json!(vec![body["assets"][0].clone(); 10]);

    let data = app.data_dir.path().to_path_buf();
    let before = disk_use(&data);
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let sampler = tokio::task::spawn_blocking(move || {
        let mut peak = 0;
        while stopped.try_recv().is_err() {
            peak = peak.max(disk_use(&data));
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        peak
    });
    let (status, plan) = dry_run(&app, "dryRun=true", &body).await;
    stop.send(()).unwrap();
    let peak = sampler.await.unwrap().max(disk_use(app.data_dir.path()));
    assert_eq!(status, 200, "{plan}");
    let assets = plan["attributes"]["assets"].as_array().unwrap();
    assert_eq!(assets.len(), 10);
    for asset in assets {
        assert_eq!(
            (asset["width"].as_u64(), asset["height"].as_u64()),
            (Some(1600), Some(1200))
        );
        let output = &asset["outputs"][0];
        assert_eq!(
            (output["width"].as_u64(), output["height"].as_u64()),
            (Some(800), Some(600))
        );
    }
    let grew = peak.saturating_sub(before);
    let margin = 1 << 20;
    match backend {
        // A one-part upload on local files is probed in its stored file.
        Backend::Embedded => assert!(grew < margin, "the data dir grew by {grew} bytes"),
        // On S3: one copy, shared by the ten assets.
        Backend::Cluster => assert!(
            grew < bmp.len() as u64 + margin,
            "the data dir grew by {grew} bytes for a {}-byte upload",
            bmp.len()
        ),
    }
    assert_eq!(listed(&app).await, 0, "a dry run creates nothing");
}
