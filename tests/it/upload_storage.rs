//! What uploads leave in storage (docs/API.md, Uploads): no bytes after a DELETE
//! mid-PATCH or from the loser of two racing PATCHes, the sweep of parts no row names,
//! and the hash taken once. On both backends: the data dir's files or the S3 prefix.

use std::path::Path;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::backends::{bucket, Backend};
use crate::fixtures;
use crate::helpers::*;
use mediaedit::db::Db;
use mediaedit::storage::Storage;

on_both_backends!(
    deleting_an_upload_while_its_patch_streams_leaves_no_bytes_in_storage,
    the_loser_of_two_racing_patches_leaves_no_bytes_in_storage,
    the_sweep_deletes_upload_parts_no_row_references,
    an_upload_is_hashed_once_and_reads_answer_the_stored_hash,
);

pub(crate) fn code(doc: &Value) -> &str {
    doc["errors"][0]["code"].as_str().unwrap_or_default()
}

pub(crate) fn tus(app: &TestApp, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
    app.client
        .request(method, format!("{}{path}", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
}

pub(crate) async fn create_tus(app: &TestApp, length: usize) -> reqwest::Response {
    tus(app, reqwest::Method::POST, "/v1/uploads")
        .header("Upload-Length", length.to_string())
        .send()
        .await
        .unwrap()
}

pub(crate) async fn created_tus(app: &TestApp, length: usize) -> String {
    let response = create_tus(app, length).await;
    assert_eq!(response.status(), 201);
    response.headers()["location"].to_str().unwrap().to_string()
}

/// Feeds a streamed request body, chunk by chunk.
type Chunks = mpsc::Sender<Result<Vec<u8>, std::io::Error>>;
/// A request sent in the background.
type Sending = tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>;

/// A PATCH at `offset` whose body is fed through the returned sender, chunk by chunk.
fn streamed_patch(app: &TestApp, path: &str, offset: usize) -> (Chunks, Sending) {
    let (tx, rx) = mpsc::channel(4);
    let chunks = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let body = reqwest::Body::wrap_stream(chunks);
    let request = tus(app, reqwest::Method::PATCH, path)
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(body);
    (tx, tokio::spawn(request.send()))
}

/// Every stored byte of uploads, object by object: the files (staging files of
/// unfinished writes included) under the data dir's `files/uploads`, or the objects
/// under the test's S3 prefix.
pub(crate) async fn upload_objects(app: &TestApp) -> Vec<(String, u64)> {
    match &app.cluster {
        None => {
            let mut found = Vec::new();
            walk(&app.data_dir.path().join("files/uploads"), &mut found);
            found
        }
        Some(urls) => {
            let prefix = object_store::path::Path::from(format!("{}/uploads", urls.prefix));
            bucket()
                .list(Some(&prefix))
                .map_ok(|meta| (meta.location.to_string(), meta.size))
                .try_collect()
                .await
                .unwrap()
        }
    }
}

fn walk(dir: &Path, found: &mut Vec<(String, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            walk(&entry.path(), found);
        } else {
            found.push((entry.path().display().to_string(), meta.len()));
        }
    }
}

/// Waits (up to 10 s) until storage holds no upload bytes; fails with what is left.
async fn assert_no_upload_bytes(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = upload_objects(app).await;
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "upload bytes left: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The app's storage, as another node would open it.
pub(crate) fn storage_of(app: &TestApp) -> Storage {
    let mut config = test_config(app.data_dir.path());
    use_backend(&mut config, app.cluster.as_ref());
    Storage::open(
        &config.storage_url(),
        vec![0; 32],
        app.base.parse().unwrap(),
        Duration::from_secs(60),
    )
    .unwrap()
}

/// Runs one statement with `$1`/`$2` placeholders on either database.
async fn execute(db: &Db, sql: &str, a: i64, b: &str) {
    match db {
        Db::Sqlite(pool) => {
            sqlx::query(&sql.replace('$', "?"))
                .bind(a)
                .bind(b)
                .execute(pool)
                .await
                .unwrap();
        }
        Db::Postgres(pool) => {
            sqlx::query(sql)
                .bind(a)
                .bind(b)
                .execute(pool)
                .await
                .unwrap();
        }
    }
}

async fn deleting_an_upload_while_its_patch_streams_leaves_no_bytes_in_storage(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    // Deleted through this node: the PATCH streaming here stops and stores nothing.
    let path = created_tus(&app, 24 << 20).await;
    let (tx, patching) = streamed_patch(&app, &path, 0);
    // Past one 8 MiB part: the write to the store is a multipart upload under way.
    for _ in 0..12 {
        tx.send(Ok(vec![7u8; 1 << 20])).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let deleted = tus(&app, reqwest::Method::DELETE, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert_no_upload_bytes(&app).await;
    drop(tx);
    // Its answer is 404, unless the connection closed first.
    if let Ok(response) = patching.await.unwrap() {
        assert_eq!(response.status(), 404);
    }
    assert_no_upload_bytes(&app).await;
    let (status, _) = app.send(reqwest::Method::GET, &path).await;
    assert_eq!(status, 404);

    // Deleted through another node (as its DELETE does it, on the shared database and
    // store): the PATCH streaming here cannot record its part, and deletes it.
    let path = created_tus(&app, 24 << 20).await;
    let id = path.rsplit('/').next().unwrap().to_string();
    let (tx, patching) = streamed_patch(&app, &path, 0);
    for _ in 0..12 {
        tx.send(Ok(vec![7u8; 1 << 20])).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let db = app.db().await;
    let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
    assert!(db.expire_upload(ORG, &id, now).await.unwrap());
    storage_of(&app)
        .delete_prefix(&format!("uploads/{id}/"))
        .await
        .unwrap();
    db.delete_expired_upload(&id, now).await.unwrap();
    tx.send(Ok(vec![7u8; 1 << 20])).await.unwrap();
    drop(tx);
    let response = patching.await.unwrap().unwrap();
    assert_eq!(response.status(), 404);
    assert_no_upload_bytes(&app).await;
}

async fn the_loser_of_two_racing_patches_leaves_no_bytes_in_storage(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let path = created_tus(&app, 3 << 20).await;
    let (first, first_patch) = streamed_patch(&app, &path, 0);
    let (second, second_patch) = streamed_patch(&app, &path, 0);
    first.send(Ok(vec![1u8; 1 << 20])).await.unwrap();
    second.send(Ok(vec![2u8; 1 << 20])).await.unwrap();
    second.send(Ok(vec![2u8; 1 << 20])).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Both passed the offset check; the first to finish wins.
    drop(first);
    let won = first_patch.await.unwrap().unwrap();
    assert_eq!(won.status(), 204);
    assert_eq!(won.headers()["upload-offset"], (1 << 20).to_string());
    drop(second);
    let lost = second_patch.await.unwrap().unwrap();
    assert_eq!(lost.status(), 409);
    assert_eq!(code(&lost.json().await.unwrap()), "upload_offset_mismatch");
    let stored = upload_objects(&app).await;
    assert_eq!(stored.len(), 1, "only the winner's part stays: {stored:?}");
    assert_eq!(stored[0].1, 1 << 20);

    let deleted = tus(&app, reqwest::Method::DELETE, &path)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert_no_upload_bytes(&app).await;
}

async fn the_sweep_deletes_upload_parts_no_row_references(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let png = fixtures::png(16, 16);
    let doc = app.upload(png.clone()).await;
    let id = doc["id"].as_str().unwrap();
    let storage = storage_of(&app);
    let stray = [
        format!("uploads/{}/0-0123456789ab", uuid::Uuid::new_v4()),
        format!("uploads/{id}/16-0123456789ab"),
    ];
    for key in &stray {
        let location = object_store::path::Path::from(key.as_str());
        storage
            .store()
            .put(&location, vec![9u8; 1000].into())
            .await
            .unwrap();
    }
    if backend == Backend::Embedded {
        // A write a killed process left unfinished.
        let staging = app
            .data_dir
            .path()
            .join(format!("files/uploads/{id}/32-x#1"));
        std::fs::write(staging, vec![9u8; 1000]).unwrap();
    }
    let db = app.db().await;
    let young = mediaedit::uploads::sweep_orphan_parts(&db, &storage, Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(young, 0, "parts within the grace period are left alone");
    let before = upload_objects(&app).await.len();
    assert_eq!(before, if backend == Backend::Embedded { 4 } else { 3 });

    let swept = mediaedit::uploads::sweep_orphan_parts(&db, &storage, Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(swept, before - 1);
    let left = upload_objects(&app).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].1, png.len() as u64, "the referenced part stays");
    let content = app
        .bytes_of(doc["attributes"]["src"].as_str().unwrap())
        .await;
    assert_eq!(content.as_slice(), png.as_slice());
}

async fn an_upload_is_hashed_once_and_reads_answer_the_stored_hash(backend: Backend) {
    use sha2::{Digest, Sha256};
    let app = spawn_app_on(backend, |_| {}).await;
    let file: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let path = created_tus(&app, file.len()).await;
    for (offset, chunk) in [(0, &file[..100_000]), (100_000, &file[100_000..])] {
        let response = tus(&app, reqwest::Method::PATCH, &path)
            .header("Upload-Offset", offset.to_string())
            .header("Content-Type", "application/offset+octet-stream")
            .body(chunk.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 204);
    }
    let (_, doc) = app.send(reqwest::Method::GET, &path).await;
    assert_eq!(
        doc["attributes"]["sha256"],
        hex::encode(Sha256::digest(&file))
    );

    // As while the request that stored the last byte hashes it: every byte in, the
    // claim held. Reads answer the stored state and read no byte.
    let db = app.db().await;
    let id = doc["id"].as_str().unwrap().to_string();
    let far = mediaedit::db::unix_ms(std::time::SystemTime::now()) + 3_600_000;
    let reset = "UPDATE uploads SET sha256 = NULL, finishing_until = $1 WHERE id = $2";
    execute(&db, reset, far, &id).await;
    for _ in 0..3 {
        let head = tus(&app, reqwest::Method::HEAD, &path)
            .send()
            .await
            .unwrap();
        assert_eq!(head.headers()["upload-offset"], file.len().to_string());
        let (_, doc) = app.send(reqwest::Method::GET, &path).await;
        assert_eq!(doc["attributes"]["status"], "uploading", "{doc}");
        assert_eq!(doc["attributes"]["offset"], file.len());
    }

    // The bytes change in the store; the claim runs out (its node stopped): the next
    // read hashes what is stored, once, and later reads answer that stored hash.
    let storage = storage_of(&app);
    let first = db.upload_parts(&id).await.unwrap()[0].object_key.clone();
    let location = object_store::path::Path::from(first.as_str());
    let changed = vec![0u8; 100_000];
    storage
        .store()
        .put(&location, changed.clone().into())
        .await
        .unwrap();
    execute(
        &db,
        "UPDATE uploads SET finishing_until = $1 WHERE id = $2",
        0,
        &id,
    )
    .await;
    let hashed = hex::encode(Sha256::digest([&changed[..], &file[100_000..]].concat()));
    let (_, doc) = app.send(reqwest::Method::GET, &path).await;
    assert_eq!(doc["attributes"]["status"], "complete");
    assert_eq!(doc["attributes"]["sha256"], hashed);
    storage
        .store()
        .put(&location, file[..100_000].to_vec().into())
        .await
        .unwrap();
    for _ in 0..2 {
        let (_, doc) = app.send(reqwest::Method::GET, &path).await;
        assert_eq!(
            doc["attributes"]["sha256"], hashed,
            "the stored hash, not a new one"
        );
        let head = tus(&app, reqwest::Method::HEAD, &path)
            .send()
            .await
            .unwrap();
        assert_eq!(head.status(), 200);
    }
}
