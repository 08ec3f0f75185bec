//! The result cache: an edit an organization already ran on the same content reuses
//! the earlier outputs (copies of them), and says so with `cached: true`.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::backends::Backend;
use crate::clips::*;
use crate::helpers::*;

on_both_backends!(a_repeated_edit_reuses_the_outputs_as_copies_and_says_so);

/// The storage key behind a download URL.
fn key_of(url: &str) -> &str {
    url.split('?')
        .next()
        .unwrap()
        .split("/files/")
        .nth(1)
        .unwrap()
}

/// The stored object behind a download URL, on the local disk backend.
fn stored_file(app: &TestApp, url: &str) -> PathBuf {
    app.data_dir.path().join("files").join(key_of(url))
}

/// Removes the object behind a download URL from whichever store the app uses.
async fn remove_stored(app: &TestApp, url: &str) {
    let store_url = match &app.cluster {
        Some(cluster) => cluster.storage_url.clone(),
        None => format!("file://{}", app.data_dir.path().join("files").display()),
    };
    let store = mediaedit::storage::from_url(&store_url).unwrap();
    let path = object_store::path::Path::parse(key_of(url)).unwrap();
    store.delete(&path).await.unwrap();
}

fn urls(doc: &Value) -> Vec<String> {
    doc["attributes"]["downloadUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect()
}

async fn run_as(app: &TestApp, token: &str, body: Value) -> Value {
    let response = app.post_edit_as(token, body).await;
    assert_eq!(response.status(), 201);
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let doc: Value = app.get_edit_as(token, &id).await.json().await.unwrap();
        match doc["attributes"]["status"].as_str().unwrap() {
            "done" => return doc,
            "failed" => panic!("edit failed: {doc}"),
            _ => {}
        }
        assert!(std::time::Instant::now() < deadline, "{doc}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn a_repeated_edit_reuses_the_outputs_as_copies_and_says_so(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("a.mp4", mp4("96x64", 10, 0.5, false));
    let body = json!({
        "assets": [{ "type": "video", "src": src }],
        "commands": ["extract-frames"],
    });
    let first = app.run_done(body.clone()).await;
    assert_eq!(first["attributes"]["cached"], false);
    let again = app.run_done(body).await;
    assert_eq!(again["attributes"]["cached"], true, "{again}");

    let (a, b) = (urls(&first), urls(&again));
    assert_eq!(a.len(), 5);
    assert_eq!(b.len(), 5);
    for (old, new) in a.iter().zip(&b) {
        assert_ne!(old, new, "each edit has keys of its own");
        if app.cluster.is_none() {
            let (old, new) = (stored_file(&app, old), stored_file(&app, new));
            // Not made again: the very same bytes, stored once on this disk.
            assert_eq!(
                std::fs::metadata(&old).unwrap().ino(),
                std::fs::metadata(&new).unwrap().ino()
            );
        }
    }
    let (first_outs, again_outs) = (
        app.download_all(&first).await,
        app.download_all(&again).await,
    );
    for (old, new) in first_outs.iter().zip(&again_outs) {
        assert_eq!(std::fs::read(old).unwrap(), std::fs::read(new).unwrap());
    }

    // Removing the first edit's objects leaves the second's whole, and the next
    // repeat, finding the cached objects gone, runs the edit again.
    for url in &a {
        remove_stored(&app, url).await;
    }
    let outs = app.download_all(&again).await;
    assert_eq!(outs.len(), 5);
    let src_again = json!({
        "assets": [{ "type": "video", "src": app.fixtures.url("a.mp4") }],
        "commands": ["extract-frames"],
    });
    let third = app.run_done(src_again).await;
    assert_eq!(third["attributes"]["cached"], false, "{third}");
    assert_eq!(urls(&third).len(), 5);
}

#[tokio::test]
async fn only_the_same_organization_content_commands_and_options_share_results() {
    let app = spawn_app().await;
    let clip = mp4("96x64", 10, 0.3, false);
    let src = app.fixtures.add("a.mp4", clip.clone());
    let body = |options: Value| {
        json!({
            "assets": [{ "type": "video", "src": src }],
            "commands": ["modify-video-speed"],
            "options": options,
        })
    };
    assert_eq!(
        app.run_done(body(json!({"speed": 2}))).await["attributes"]["cached"],
        false
    );
    // The same content under another URL is the same source.
    let copy = app.fixtures.add("copy.mp4", clip);
    let same = json!({
        "assets": [{ "type": "video", "src": copy }],
        "commands": ["modify-video-speed"],
        "options": {"speed": 2.0},
    });
    assert_eq!(app.run_done(same).await["attributes"]["cached"], true);
    assert_eq!(
        app.run_done(body(json!({"speed": 3}))).await["attributes"]["cached"],
        false
    );

    let other = create_token(app.data_dir.path(), "another-org").await;
    let theirs = run_as(&app, &other, body(json!({"speed": 2}))).await;
    assert_eq!(
        theirs["attributes"]["cached"], false,
        "never across organizations"
    );

    // New content at the same URL is a new source.
    app.fixtures.add("a.mp4", mp4("64x48", 10, 0.3, false));
    assert_eq!(
        app.run_done(body(json!({"speed": 2}))).await["attributes"]["cached"],
        false
    );
}

#[tokio::test]
async fn a_source_with_validators_is_asked_whether_it_changed_instead_of_downloaded() {
    let app = spawn_app().await;
    app.fixtures.add("a.mp4", mp4("96x64", 10, 0.3, false));
    let body = json!({
        "assets": [{ "type": "video", "src": app.fixtures.etag_url("a.mp4") }],
        "commands": ["video-to-gif"],
    });
    assert_eq!(
        app.run_done(body.clone()).await["attributes"]["cached"],
        false
    );
    assert_eq!(app.fixtures.not_modified(), 0);
    let again = app.run_done(body.clone()).await;
    assert_eq!(again["attributes"]["cached"], true);
    assert_eq!(
        app.fixtures.not_modified(),
        1,
        "answered 304, nothing downloaded"
    );
    let gif = app.download_all(&again).await;
    assert_eq!(crate::fixtures::format_of(&gif[0]), image::ImageFormat::Gif);

    // Changed content gets a new ETag: downloaded and run again.
    app.fixtures.add("a.mp4", mp4("64x48", 10, 0.3, false));
    let changed = app.run_done(body).await;
    assert_eq!(changed["attributes"]["cached"], false);
    assert_eq!(app.fixtures.not_modified(), 1);
}

#[tokio::test]
async fn the_cache_can_be_turned_off() {
    let app = spawn_app_with(|c| c.result_cache = false).await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(16, 16));
    let body = edit(&src, &["image-to-webp"], None);
    assert_eq!(
        app.run_done(body.clone()).await["attributes"]["cached"],
        false
    );
    assert_eq!(app.run_done(body).await["attributes"]["cached"], false);
}
