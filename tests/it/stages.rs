//! Staged execution: an edit waiting on the network holds no CPU slot, the assets of
//! an edit run at once, light work never waits behind heavy work, and a stopping node
//! hands back what has not reached a CPU yet.

use std::time::{Duration, Instant};

use mediaedit::db::EditStatus;
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

/// Waits until edit `id` is `processing`.
async fn wait_processing(app: &TestApp, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.edit_row(id).await.status != EditStatus::Processing {
        assert!(Instant::now() < deadline, "edit {id} never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn edits_waiting_on_slow_sources_hold_no_cpu_slot() {
    let app = spawn_app_with(|c| c.workers = 1).await;
    app.fixtures.add("a.png", fixtures::png(20, 20));
    let slow = app.fixtures.slow_url("a.png", 3000);
    let mut waiting = Vec::new();
    for _ in 0..3 {
        waiting.push(app.create_edit(edit(&slow, &["image-to-webp"], None)).await);
    }
    for id in &waiting {
        wait_processing(&app, id).await;
    }

    let quick = app.fixtures.add("b.png", fixtures::png(20, 20));
    let started = Instant::now();
    app.run_done(edit(&quick, &["resize-image"], None)).await;
    assert!(
        started.elapsed() < Duration::from_millis(2000),
        "the one CPU slot was free: took {:?}",
        started.elapsed()
    );
    for id in &waiting {
        let row = app.edit_row(id).await;
        assert_eq!(
            row.status,
            EditStatus::Processing,
            "all three fetch at once"
        );
    }
    for id in waiting {
        assert_eq!(app.wait_finished(&id).await["attributes"]["status"], "done");
    }
}

#[tokio::test]
async fn the_assets_of_one_edit_are_fetched_and_processed_at_once() {
    let app = spawn_app().await;
    app.fixtures.add("a.png", fixtures::png(30, 20));
    let slow = app.fixtures.slow_url("a.png", 1500);
    let asset = json!({ "type": "image", "src": slow });
    let started = Instant::now();
    let doc = app
        .run_done(json!({ "assets": [asset, asset, asset], "commands": ["image-to-webp"] }))
        .await;
    assert!(
        started.elapsed() < Duration::from_millis(4000),
        "three 1.5 s sources one after another would take 4.5 s: took {:?}",
        started.elapsed()
    );
    let outputs = app.download_all(&doc).await;
    assert_eq!(outputs.len(), 3);
    for out in outputs {
        let (w, h) = image::GenericImageView::dimensions(&fixtures::decode(&out));
        assert_eq!((w, h), (30, 20));
    }
}

#[tokio::test]
async fn a_light_edit_of_an_organization_does_not_wait_behind_its_own_heavy_ones() {
    // Three slots: heavy work holds at most two, the third is kept for light work (with
    // two slots, each may go to heavy work; see `queue::slots`).
    let app = spawn_app_with(|c| c.workers = 3).await;
    // 512×512 pixels × 2,400 frames each: heavy, and many seconds of x264 even on a
    // fast machine; the app's drop kills them when the test ends.
    let big = app.fixtures.add("big.png", fixtures::png(512, 512));
    let heavy_options = Some(json!({ "fps": 60, "duration": 40 }));
    let mut heavy = Vec::new();
    for _ in 0..3 {
        let body = edit(&big, &["image-to-video"], heavy_options.clone());
        heavy.push(app.create_edit(body).await);
    }
    for id in &heavy {
        wait_processing(&app, id).await;
    }

    // A short clip from a small picture: light work, a video all the same.
    let small = app.fixtures.add("small.png", fixtures::png(16, 16));
    let started = Instant::now();
    let doc = app
        .run_done(edit(
            &small,
            &["image-to-video"],
            Some(json!({ "fps": 5, "duration": 1 })),
        ))
        .await;
    let took = started.elapsed();
    let mut unfinished = 0;
    for id in &heavy {
        let row = app.edit_row(id).await;
        unfinished += usize::from(row.status != EditStatus::Done);
    }
    // Waiting behind even one heavy edit would leave at most two unfinished. The bound
    // on time is loose on purpose: a loaded CI machine takes seconds for light work too.
    assert_eq!(
        unfinished, 3,
        "the light edit waited behind a heavy one of its own organization ({took:?})"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let out = &app.download_all(&doc).await[0];
    assert_eq!(video_stream(&probe(out))["nb_frames"], "5");
}

#[tokio::test]
async fn a_stopping_node_hands_back_an_edit_waiting_on_a_slow_source_at_once() {
    let mut app = spawn_app_with(|c| c.shutdown_grace_secs = 30).await;
    app.fixtures.add("a.png", fixtures::png(20, 20));
    let src = app.fixtures.slow_url("a.png", 5000);
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    wait_processing(&app, &id).await;

    let stopping = Instant::now();
    app.stop().await;
    assert!(
        stopping.elapsed() < Duration::from_millis(1500),
        "waited {:?} for a download it can redo",
        stopping.elapsed()
    );
    let row = app.edit_row(&id).await;
    assert_eq!(row.status, EditStatus::Queued, "handed back");

    app.restart_with(|_| {}).await;
    let doc = app.wait_finished(&id).await;
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
}
