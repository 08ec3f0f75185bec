//! Uploads (docs/API.md): direct and tus, a stock tus client (tuspy), an upload
//! used as an asset `src`, and a tus upload that resumes after `kill -9`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::backends::Backend;
use crate::binary::{token_create, Server};
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    a_direct_upload_is_stored_hashed_and_edited_like_a_hosted_file,
    a_tus_upload_goes_up_in_chunks_at_the_right_offsets_only,
    a_stock_tus_client_uploads_unchanged,
    an_upload_is_only_usable_by_its_organization_once_complete,
);

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn code(doc: &Value) -> &str {
    doc["errors"][0]["code"].as_str().unwrap_or_default()
}

/// A tus request on `url` (a path under the app, or absolute).
fn tus(app: &TestApp, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
    let url = if url.starts_with("http") {
        url.to_string()
    } else {
        format!("{}{url}", app.base)
    };
    app.client
        .request(method, url)
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
}

/// Creates a tus upload of `length` bytes; returns its path.
async fn create_tus(app: &TestApp, length: usize) -> String {
    let response = tus(app, reqwest::Method::POST, "/v1/uploads")
        .header("Upload-Length", length.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["tus-resumable"], "1.0.0");
    response.headers()["location"].to_str().unwrap().to_string()
}

async fn patch(app: &TestApp, path: &str, offset: usize, bytes: &[u8]) -> reqwest::Response {
    tus(app, reqwest::Method::PATCH, path)
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap()
}

async fn offset_of(app: &TestApp, path: &str) -> Option<usize> {
    let response = tus(app, reqwest::Method::HEAD, path).send().await.unwrap();
    if response.status() == 404 {
        return None;
    }
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["cache-control"], "no-store");
    Some(
        response.headers()["upload-offset"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap(),
    )
}

async fn read_upload(app: &TestApp, path: &str) -> Value {
    app.client
        .get(format!("{}{path}", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn a_direct_upload_is_stored_hashed_and_edited_like_a_hosted_file(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let png = fixtures::png(40, 20);
    let response = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .header("Content-Type", "image/png")
        .body(png.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let doc: Value = response.json().await.unwrap();
    let id = doc["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/uploads/{id}"));
    assert_eq!(doc["type"], "upload");
    let attributes = &doc["attributes"];
    assert_eq!(attributes["status"], "complete");
    assert_eq!(attributes["size"], png.len());
    assert_eq!(attributes["offset"], png.len());
    assert_eq!(attributes["sha256"], sha256(&png));
    let src = attributes["src"].as_str().unwrap();
    assert_eq!(src, format!("{}/v1/uploads/{id}/content", app.base));
    assert_eq!(read_upload(&app, &location).await, doc);

    let edited = app
        .run_done(edit(src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    let output = &edited["attributes"]["outputs"][0];
    assert_eq!(
        (output["width"].as_u64(), output["height"].as_u64()),
        (Some(20), Some(10))
    );
    assert_eq!(app.fixtures.hits(), 0, "nothing was fetched over HTTP");

    let too_big = spawn_app_on(backend, |c| c.retention.max_upload_bytes = 100).await;
    let response = too_big
        .client
        .post(format!("{}/v1/uploads", too_big.base))
        .bearer_auth(&too_big.token)
        .body(vec![0u8; 101])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(code(&response.json().await.unwrap()), "upload_too_large");
}

async fn a_tus_upload_goes_up_in_chunks_at_the_right_offsets_only(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let options = app
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/v1/uploads", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(options.status(), 204);
    assert_eq!(options.headers()["tus-version"], "1.0.0");
    let extensions = options.headers()["tus-extension"].to_str().unwrap();
    for extension in [
        "creation",
        "creation-with-upload",
        "termination",
        "expiration",
    ] {
        assert!(
            extensions.split(',').any(|e| e == extension),
            "{extensions}"
        );
    }
    assert!(options.headers().contains_key("tus-max-size"));

    let file: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let path = create_tus(&app, file.len()).await;
    assert_eq!(offset_of(&app, &path).await, Some(0));
    let wrong = patch(&app, &path, 5, &file[5..100]).await;
    assert_eq!(wrong.status(), 409);
    assert_eq!(code(&wrong.json().await.unwrap()), "upload_offset_mismatch");
    let first = patch(&app, &path, 0, &file[..100_000]).await;
    assert_eq!(first.status(), 204);
    assert_eq!(first.headers()["upload-offset"], "100000");
    assert!(first.headers().contains_key("upload-expires"));
    assert_eq!(
        read_upload(&app, &path).await["attributes"]["status"],
        "uploading"
    );
    // A retried PATCH of what is already in is refused, not stored twice.
    assert_eq!(patch(&app, &path, 0, &file[..100_000]).await.status(), 409);
    let past_end = patch(&app, &path, 100_000, &[&file[100_000..], b"extra"].concat()).await;
    assert_eq!(past_end.status(), 413);
    assert_eq!(offset_of(&app, &path).await, Some(100_000));
    assert_eq!(
        patch(&app, &path, 100_000, &file[100_000..]).await.status(),
        204
    );
    let doc = read_upload(&app, &path).await;
    assert_eq!(doc["attributes"]["status"], "complete", "{doc}");
    assert_eq!(doc["attributes"]["sha256"], sha256(&file));
    let content = app
        .bytes_of(doc["attributes"]["src"].as_str().unwrap())
        .await;
    assert_eq!(content.as_slice(), file.as_slice());

    // creation-with-upload, then termination.
    let response = tus(&app, reqwest::Method::POST, "/v1/uploads")
        .header("Upload-Length", "10")
        .header("Content-Type", "application/offset+octet-stream")
        .body(b"01234".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["upload-offset"], "5");
    let path = response.headers()["location"].to_str().unwrap().to_string();
    let deleted = tus(&app, reqwest::Method::DELETE, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert_eq!(offset_of(&app, &path).await, None);

    let response = tus(&app, reqwest::Method::POST, "/v1/uploads")
        .header("Upload-Length", (3u64 << 30).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let response = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "0.2.2")
        .header("Upload-Length", "10")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 412);
}

async fn a_stock_tus_client_uploads_unchanged(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let file = fixtures::png(300, 200);
    let path = app.data_dir.path().join("upload.png");
    std::fs::write(&path, &file).unwrap();
    let script = r#"
import sys
from tusclient import client
tus = client.TusClient(sys.argv[1] + "/v1/uploads", headers={"Authorization": "Bearer " + sys.argv[2]})
uploader = tus.uploader(file_path=sys.argv[3], chunk_size=20000, metadata={"filename": "upload.png"})
uploader.upload()
print(uploader.url)
"#;
    let (base, token) = (app.base.clone(), app.token.clone());
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(test_python())
            .args(["-c", script, &base, &token])
            .arg(&path)
            .output()
            .expect("the test venv's python runs (scripts/install-deps.sh --test makes it)")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "tuspy failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let url = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let path = url.strip_prefix(&app.base).unwrap_or(&url).to_string();
    let doc = read_upload(&app, &path).await;
    assert_eq!(doc["attributes"]["status"], "complete", "{doc}");
    assert_eq!(doc["attributes"]["sha256"], sha256(&file));
    let src = doc["attributes"]["src"].as_str().unwrap();
    let done = app.run_done(edit(src, &["image-to-webp"], None)).await;
    assert_eq!(done["attributes"]["outputs"][0]["width"], 300);
}

async fn an_upload_is_only_usable_by_its_organization_once_complete(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let path = create_tus(&app, 1000).await;
    let src = format!("{}{path}/content", app.base);
    let response = app.post_edit(edit(&src, &["resize-image"], None)).await;
    assert_eq!(response.status(), 422);
    let error: Value = response.json().await.unwrap();
    assert_eq!(code(&error), "upload_not_found");
    assert_eq!(error["errors"][0]["source"]["pointer"], "/assets/0/src");

    let png = fixtures::png(8, 8);
    let doc = app.upload(png).await;
    let src = doc["attributes"]["src"].as_str().unwrap();
    let other = create_token_in(&app.database_url(), "someone-else").await;
    let theirs = app
        .post_edit_as(&other, edit(src, &["resize-image"], None))
        .await;
    assert_eq!(theirs.status(), 422);
    assert_eq!(code(&theirs.json().await.unwrap()), "upload_not_found");
    let peek = app
        .client
        .head(format!("{}{path}", app.base))
        .bearer_auth(&other)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(peek.status(), 404);
    let unknown = format!("{}/v1/uploads/{}/content", app.base, uuid::Uuid::new_v4());
    let response = app.post_edit(edit(&unknown, &["resize-image"], None)).await;
    assert_eq!(code(&response.json().await.unwrap()), "upload_not_found");
}

#[tokio::test]
async fn a_tus_upload_interrupted_by_kill_9_resumes_after_restart() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "upload-org");
    let mut server = Server::start(data.path(), &[], Stdio::null()).await;
    let client = reqwest::Client::new();
    let file: Vec<u8> = (0..2_000_000u32).map(|i| (i % 253) as u8).collect();
    let created = client
        .post(format!("{}/v1/uploads", server.base))
        .bearer_auth(&token)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", file.len().to_string())
        .send()
        .await
        .unwrap();
    let path = created.headers()["location"].to_str().unwrap().to_string();
    let send = |base: &str, offset: usize, body: reqwest::Body| {
        client
            .patch(format!("{base}{path}"))
            .bearer_auth(&token)
            .header("Tus-Resumable", "1.0.0")
            .header("Upload-Offset", offset.to_string())
            .header("Content-Type", "application/offset+octet-stream")
            .body(body)
            .send()
    };
    let first = send(&server.base, 0, file[..500_000].to_vec().into())
        .await
        .unwrap();
    assert_eq!(first.status(), 204);

    // The next chunk trickles in; the server dies in the middle of it.
    let trickle = futures::stream::iter(
        file[500_000..]
            .chunks(50_000)
            .map(|c| c.to_vec())
            .collect::<Vec<_>>(),
    )
    .then(|chunk| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok::<_, std::io::Error>(chunk)
    });
    let base = server.base.clone();
    let in_flight = tokio::spawn(send(&base, 500_000, reqwest::Body::wrap_stream(trickle)));
    tokio::time::sleep(Duration::from_millis(400)).await;
    server.signal_and_wait("-KILL");
    assert!(in_flight.await.unwrap().is_err(), "the PATCH was cut off");

    let server = Server::start(data.path(), &[], Stdio::null()).await;
    let head = client
        .head(format!("{}{path}", server.base))
        .bearer_auth(&token)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    let offset: usize = head.headers()["upload-offset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(offset, 500_000, "the interrupted part is not recorded");
    let rest = send(&server.base, offset, file[offset..].to_vec().into())
        .await
        .unwrap();
    assert_eq!(rest.status(), 204);
    let deadline = Instant::now() + Duration::from_secs(10);
    let doc: Value = loop {
        let doc: Value = client
            .get(format!("{}{path}", server.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if doc["attributes"]["status"] == "complete" || Instant::now() > deadline {
            break doc;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(doc["attributes"]["sha256"], sha256(&file), "{doc}");
}
