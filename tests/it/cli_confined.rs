//! `mediaedit edit create --wait --output DIR` against a server that lies (docs/API.md):
//! a fake service on loopback answers crafted edit ids, output formats and
//! download names; the CLI writes nothing outside DIR, and refuses what it cannot
//! name a file by with exit status 3.

use std::path::{Path, PathBuf};

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{json, Value};
use tokio::process::Command;

use crate::binary::BIN;

const ID: &str = "0b5d2c1e-6f3a-4e8b-9c7d-1a2b3c4d5e6f";

/// What the fake service answers: the edit's `id`, its one output's `format`, and the
/// file name its download's `Content-Disposition` proposes.
#[derive(Clone)]
struct Lies {
    id: Value,
    format: Value,
    download_name: String,
    base: String,
}

/// Starts the fake service; its base URL.
async fn fake_service(id: Value, format: Value, download_name: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let lies = Lies {
        id,
        format,
        download_name: download_name.to_string(),
        base: base.clone(),
    };
    let app = axum::Router::new()
        .route(
            "/v1/edits",
            post(|axum::extract::State(lies): axum::extract::State<Lies>| async move {
                let doc = json!({"id": lies.id, "attributes": {"status": "queued"}});
                (axum::http::StatusCode::CREATED, axum::Json(doc))
            }),
        )
        .route(
            "/download",
            get(|axum::extract::State(lies): axum::extract::State<Lies>| async move {
                let disposition = format!("attachment; filename=\"{}\"", lies.download_name);
                ([(header::CONTENT_DISPOSITION, disposition)], "RIFF....WEBP").into_response()
            }),
        )
        // Every poll of the edit, whatever path the client built from the id.
        .fallback(|axum::extract::State(lies): axum::extract::State<Lies>| async move {
            axum::Json(json!({"id": lies.id, "attributes": {
                "status": "done",
                "progress": 1.0,
                "outputs": [{"asset": 0, "format": lies.format, "url": format!("{}/download", lies.base)}],
            }}))
        })
        .with_state(lies);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// `edit create --wait --output DIR` against `base`: exit status and stderr.
async fn create_and_wait(base: &str, dir: &Path) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["edit", "create", "--url", base, "--token", "me_fake"])
        .args([
            "--src",
            "https://x.example/a.png",
            "--command",
            "image-to-webp",
        ])
        .arg("--wait")
        .arg("--output")
        .arg(dir)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

/// Every file under `root`, however deep.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => dirs.push(path),
                false => found.push(path),
            }
        }
    }
    found
}

#[tokio::test]
async fn crafted_edit_ids_are_refused_with_status_3_and_nothing_is_written() {
    let work = tempfile::TempDir::new().unwrap();
    // DIR two levels down, so that `../../x` would still land inside `work`.
    let dir = work.path().join("out/a/b");
    let absolute = work.path().join("elsewhere/x");
    for id in [
        json!("../../x"),
        json!(absolute.to_str().unwrap()),
        json!("/tmp/x"),
        json!("not-a-uuid"),
        json!(format!("{ID}/../../x")),
        json!(7),
    ] {
        let base = fake_service(id.clone(), json!("webp"), "a.webp").await;
        let (code, stderr) = create_and_wait(&base, &dir).await;
        assert_eq!(code, 3, "{id}: {stderr}");
        assert!(stderr.contains("not a UUID"), "{id}: {stderr}");
        assert_eq!(files_under(work.path()), Vec::<PathBuf>::new(), "{id}");
    }
}

#[tokio::test]
async fn crafted_output_formats_are_refused_with_status_3_and_nothing_is_written() {
    let work = tempfile::TempDir::new().unwrap();
    let dir = work.path().join("out/a/b");
    for format in [
        json!("../../x"),
        json!("webp/../../../x"),
        json!("sh"),
        json!(""),
        Value::Null,
    ] {
        let base = fake_service(json!(ID), format.clone(), "a.webp").await;
        let (code, stderr) = create_and_wait(&base, &dir).await;
        assert_eq!(code, 3, "{format}: {stderr}");
        assert!(stderr.contains("output format"), "{format}: {stderr}");
        assert_eq!(files_under(work.path()), Vec::<PathBuf>::new(), "{format}");
    }
}

#[tokio::test]
async fn a_crafted_download_name_is_ignored_for_the_checked_one_inside_the_output_dir() {
    let work = tempfile::TempDir::new().unwrap();
    let dir = work.path().join("out/a/b");
    let outside = work.path().join("evil.webp");
    for name in ["../../../evil.webp", outside.to_str().unwrap()] {
        let base = fake_service(json!(ID), json!("webp"), name).await;
        let (code, stderr) = create_and_wait(&base, &dir).await;
        assert_eq!(code, 0, "{name}: {stderr}");
        assert_eq!(
            files_under(work.path()),
            [dir.join(format!("{ID}-0-0.webp"))],
            "{name}"
        );
    }
}
