//! `kill -9` of the real binary mid-edit loses nothing: after a restart the edit is
//! finished exactly once.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binary::{token_create, Server};
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn an_edit_interrupted_by_kill_9_is_finished_once_after_restart() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "crash-org");
    let env = [("MEDIAEDIT_LEASE_SECS", "2")];
    let mut server = Server::start(data.path(), &env, Stdio::null()).await;

    let fixtures_server = FixtureServer::start().await;
    fixtures_server.add("a.png", fixtures::png(64, 32));
    // The source takes 1.5 s to answer, so the edit is surely mid-work when killed.
    let src = fixtures_server.slow_url("a.png", 1500);
    let body = edit(
        &src,
        &["resize-image"],
        Some(serde_json::json!({ "scale": 2 })),
    );
    let created: Value = server.post_edit(&token, &body).await.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.read_edit(&token, &id).await["attributes"]["status"] != "processing" {
        assert!(Instant::now() < deadline, "never started processing");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.signal_and_wait("-KILL");

    let server = Server::start(data.path(), &env, Stdio::null()).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let doc = loop {
        let doc = server.read_edit(&token, &id).await;
        match doc["attributes"]["status"].as_str().unwrap() {
            "done" => break doc,
            "failed" => panic!("failed after restart: {doc}"),
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "not finished after restart: {doc}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(urls.len(), 1, "exactly one output: {doc}");
    let bytes = reqwest::get(urls[0].as_str().unwrap())
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (128, 64));

    // Only the finishing attempt stored anything; the killed one left no output behind.
    let edit_dir = data.path().join("files/edits").join(&id);
    let stored: Vec<_> = walk(&edit_dir);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].ends_with("2/0-0.png"), "{stored:?}");
    // No temp files survive the crash either.
    assert!(walk(&data.path().join("tmp")).is_empty());
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path.display().to_string());
            }
        }
    }
    out
}
