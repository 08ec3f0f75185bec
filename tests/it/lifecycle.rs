//! The life of an edit (docs/API.md): listing, cancel, retry, delete, retention
//! and the sweep, outputs metadata, the organization resource and `/readyz`, on both
//! backends.

use std::time::{Duration, Instant};

use futures::TryStreamExt;
use serde_json::{json, Value};

use crate::backends::Backend;
use crate::helpers::*;
use crate::{clips, fixtures};

on_both_backends!(
    edits_are_listed_newest_first_a_page_at_a_time_and_only_the_callers,
    a_queued_edit_is_canceled_retried_and_a_finished_one_refuses_both,
    canceling_a_running_edit_stops_ffmpeg_at_once_and_stores_nothing,
    a_deleted_edit_is_gone_with_its_files,
    an_expired_edit_is_swept_with_every_file_of_every_attempt,
    a_retry_waiting_out_its_backoff_shows_the_last_error_and_the_attempt,
    outputs_carry_the_metadata_of_the_stored_files,
    the_organization_link_resolves_for_its_own_organization_only,
);

/// Keys stored under `prefix` in the app's storage (local files or the S3 bucket).
async fn stored(app: &TestApp, prefix: &str) -> Vec<String> {
    let url = match &app.cluster {
        Some(urls) => urls.storage_url.clone(),
        None => format!("file://{}", app.data_dir.path().join("files").display()),
    };
    let store = mediaedit::storage::from_url(&url).unwrap();
    let prefix = object_store::path::Path::from(prefix);
    store
        .list(Some(&prefix))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap()
}

/// `POST /v1/edits/{id}/{action}` (`cancel`, `retry`).
async fn act(app: &TestApp, id: &str, action: &str) -> (u16, Value) {
    app.send(reqwest::Method::POST, &format!("/v1/edits/{id}/{action}"))
        .await
}

fn code(doc: &Value) -> &str {
    doc["errors"][0]["code"].as_str().unwrap_or_default()
}

async fn edits_are_listed_newest_first_a_page_at_a_time_and_only_the_callers(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(app.create_edit(edit(&src, &["resize-image"], None)).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (status, page) = app.send(reqwest::Method::GET, "/v1/edits?limit=2").await;
    assert_eq!(status, 200, "{page}");
    let listed: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()]);
    let next = page["links"]["next"].as_str().expect("a next page");
    let (_, rest) = app.send(reqwest::Method::GET, next).await;
    assert_eq!(rest["data"].as_array().unwrap().len(), 1);
    assert_eq!(rest["data"][0]["id"], ids[0].as_str());
    assert!(rest["links"]["next"].is_null());

    let (_, queued) = app
        .send(reqwest::Method::GET, "/v1/edits?status=queued")
        .await;
    assert_eq!(queued["data"].as_array().unwrap().len(), 3);
    let (_, done) = app
        .send(reqwest::Method::GET, "/v1/edits?status=done")
        .await;
    assert!(done["data"].as_array().unwrap().is_empty());

    let other = create_token_in(&app.database_url(), "someone-else").await;
    let theirs: Value = app
        .client
        .get(format!("{}/v1/edits", app.base))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(theirs["data"].as_array().unwrap().is_empty(), "{theirs}");

    for bad in ["status=finished", "cursor=nonsense", "limit=0", "limit=101"] {
        let (status, error) = app
            .send(reqwest::Method::GET, &format!("/v1/edits?{bad}"))
            .await;
        assert_eq!(
            (status, code(&error)),
            (422, "invalid_query"),
            "{bad}: {error}"
        );
    }
}

async fn a_queued_edit_is_canceled_retried_and_a_finished_one_refuses_both(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["resize-image"], None)).await;
    let (status, doc) = act(&app, &id, "cancel").await;
    assert_eq!(
        (status, doc["attributes"]["status"].as_str()),
        (200, Some("canceled")),
        "{doc}"
    );
    let (status, doc) = act(&app, &id, "cancel").await;
    assert_eq!((status, code(&doc)), (409, "edit_finished"));

    let (status, doc) = act(&app, &id, "retry").await;
    assert_eq!(
        (status, doc["attributes"]["status"].as_str()),
        (200, Some("queued")),
        "{doc}"
    );
    let (status, doc) = act(&app, &id, "retry").await;
    assert_eq!((status, code(&doc)), (409, "edit_not_retryable"));
    let (status, _) = app
        .send(reqwest::Method::POST, "/v1/edits/no-such-edit/cancel")
        .await;
    assert_eq!(status, 404);

    // With workers, the retried edit runs to the end; a done edit can be neither
    // canceled nor retried.
    let mut app = app;
    app.restart_with(|c| c.workers = 2).await;
    let done = app.wait_finished(&id).await;
    assert_eq!(done["attributes"]["status"], "done", "{done}");
    let (status, doc) = act(&app, &id, "cancel").await;
    assert_eq!((status, code(&doc)), (409, "edit_finished"));
    let (status, doc) = act(&app, &id, "retry").await;
    assert_eq!((status, code(&doc)), (409, "edit_not_retryable"));
}

/// ffmpeg processes whose command line names edit `id` (its temp dir does).
fn ffmpeg_of(id: &str) -> usize {
    let out = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("ffmpeg") && l.contains(id))
        .count()
}

async fn canceling_a_running_edit_stops_ffmpeg_at_once_and_stores_nothing(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("big.png", fixtures::png(1920, 1080));
    let body = edit(
        &src,
        &["image-to-video"],
        Some(json!({ "duration": 600, "fps": 60 })),
    );
    let id = app.create_edit(body).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while ffmpeg_of(&id) == 0 {
        assert!(Instant::now() < deadline, "ffmpeg never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, doc) = act(&app, &id, "cancel").await;
    assert_eq!(
        (status, doc["attributes"]["status"].as_str()),
        (200, Some("canceled")),
        "{doc}"
    );
    let canceled = Instant::now();
    while ffmpeg_of(&id) > 0 {
        assert!(
            canceled.elapsed() < Duration::from_secs(2),
            "ffmpeg still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let doc: Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(doc["attributes"]["status"], "canceled");
    assert!(doc["attributes"].get("downloadUrls").is_none());
    assert_eq!(
        stored(&app, &format!("edits/{id}")).await,
        Vec::<String>::new()
    );
}

async fn a_deleted_edit_is_gone_with_its_files(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let id = doc["id"].as_str().unwrap();
    let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    assert_eq!(stored(&app, &format!("edits/{id}")).await.len(), 1);

    let (status, _) = app
        .send(reqwest::Method::DELETE, &format!("/v1/edits/{id}"))
        .await;
    assert_eq!(status, 204);
    assert_eq!(app.get_edit(id).await.status(), 404);
    assert_eq!(reqwest::get(url).await.unwrap().status(), 404);
    assert!(stored(&app, &format!("edits/{id}")).await.is_empty());
    let (status, _) = app
        .send(reqwest::Method::DELETE, &format!("/v1/edits/{id}"))
        .await;
    assert_eq!(status, 404);
}

async fn an_expired_edit_is_swept_with_every_file_of_every_attempt(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.retention.sweep_interval_secs = 1).await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let mut body = edit(&src, &["image-to-webp"], None);
    body["retention"] = json!(60);
    let doc = app.run_done(body).await;
    let id = doc["id"].as_str().unwrap();
    assert_eq!(doc["attributes"]["retention"], 60);
    let created =
        chrono::DateTime::parse_from_rfc3339(doc["attributes"]["createdAt"].as_str().unwrap())
            .unwrap();
    let expires =
        chrono::DateTime::parse_from_rfc3339(doc["attributes"]["expiresAt"].as_str().unwrap())
            .unwrap();
    assert_eq!((expires - created).num_milliseconds(), 60_000);

    // An earlier attempt's leftover, as a crashed worker would leave it.
    let leftover = format!("edits/{id}/0/0-0.webp");
    let store = mediaedit::storage::from_url(&match &app.cluster {
        Some(urls) => urls.storage_url.clone(),
        None => format!("file://{}", app.data_dir.path().join("files").display()),
    })
    .unwrap();
    store
        .put(&leftover.as_str().into(), b"old".to_vec().into())
        .await
        .unwrap();
    assert_eq!(stored(&app, &format!("edits/{id}")).await.len(), 2);

    // Its retention runs out (moved to the past rather than waited for).
    let db = app.db().await;
    match &db {
        mediaedit::db::Db::Sqlite(pool) => {
            sqlx::query("UPDATE edits SET expires_at = 1 WHERE id = ?")
                .bind(id)
                .execute(pool)
                .await
                .unwrap();
        }
        mediaedit::db::Db::Postgres(pool) => {
            sqlx::query("UPDATE edits SET expires_at = 1 WHERE id = $1")
                .bind(id)
                .execute(pool)
                .await
                .unwrap();
        }
    }
    assert_eq!(
        app.get_edit(id).await.status(),
        404,
        "expired reads as gone at once"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !stored(&app, &format!("edits/{id}")).await.is_empty() {
        assert!(Instant::now() < deadline, "the sweep left files behind");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let mut bad = edit(&src, &["image-to-webp"], None);
    bad["retention"] = json!(59);
    let response = app.post_edit(bad.clone()).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(code(&error), "value_out_of_range");
    assert_eq!(error["errors"][0]["source"]["pointer"], "/retention");
    bad["retention"] = json!("a week");
    let error: Value = app.post_edit(bad).await.json().await.unwrap();
    assert_eq!(code(&error), "invalid_type");
}

async fn a_retry_waiting_out_its_backoff_shows_the_last_error_and_the_attempt(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.retry_base_ms = 60_000).await;
    let id = app
        .create_edit(edit(&app.fixtures.status_url(503), &["resize-image"], None))
        .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let doc = loop {
        let doc: Value = app.get_edit(&id).await.json().await.unwrap();
        if doc["attributes"].get("lastError").is_some() {
            break doc;
        }
        assert!(Instant::now() < deadline, "no retry scheduled: {doc}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(doc["attributes"]["status"], "queued");
    assert_eq!(doc["attributes"]["attempt"], 1);
    assert_eq!(
        doc["attributes"]["lastError"]["code"], "source_http_error",
        "{doc}"
    );
    assert!(doc["attributes"]["lastError"]["detail"]
        .as_str()
        .unwrap()
        .contains("503"));
}

async fn outputs_carry_the_metadata_of_the_stored_files(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let image = app.fixtures.add("a.png", fixtures::png(40, 30));
    let video = app
        .fixtures
        .add("c.mp4", clips::mp4("64x48", 10, 1.0, false));
    let gif = app
        .run_done(
            json!({ "assets": [{ "type": "video", "src": video }], "commands": ["video-to-gif"] }),
        )
        .await;
    let png = app
        .run_done(edit(
            &image,
            &["resize-image"],
            Some(json!({ "scale": 0.5 })),
        ))
        .await;
    let mp4 = app
        .run_done(edit(
            &image,
            &["image-to-video"],
            Some(json!({ "duration": 2, "fps": 10 })),
        ))
        .await;
    for doc in [gif, png, mp4] {
        let outputs = doc["attributes"]["outputs"].as_array().unwrap().clone();
        let paths = app.download_all(&doc).await;
        assert_eq!(outputs.len(), paths.len());
        for (output, path) in outputs.iter().zip(&paths) {
            assert_eq!(output["asset"], 0);
            assert_eq!(output["url"], doc["attributes"]["downloadUrls"][0]);
            assert_eq!(
                output["bytes"],
                std::fs::metadata(path).unwrap().len(),
                "{output}"
            );
            let probed = probe(path);
            let stream = video_stream(&probed);
            assert_eq!(output["width"], stream["width"], "{output}");
            assert_eq!(output["height"], stream["height"], "{output}");
            if output["format"] != "png" {
                let frames: u64 = stream["nb_read_frames"].as_str().unwrap().parse().unwrap();
                assert_eq!(output["frames"], frames, "{output}");
                let duration: f64 = probed["format"]["duration"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                let said = output["duration"].as_f64().unwrap();
                assert!((said - duration).abs() < 0.11, "{output} vs {duration}");
            } else {
                assert_eq!(
                    (output["width"].as_u64(), output["height"].as_u64()),
                    (Some(20), Some(15))
                );
                assert!(output.get("duration").is_none());
            }
        }
    }
}

async fn the_organization_link_resolves_for_its_own_organization_only(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["resize-image"], None)).await;
    let doc: Value = app.get_edit(&id).await.json().await.unwrap();
    let link = doc["relationships"]["organization"]["links"]["self"]
        .as_str()
        .unwrap();
    let (status, org) = app.send(reqwest::Method::GET, link).await;
    assert_eq!(status, 200, "{org}");
    assert_eq!(
        (org["type"].as_str(), org["id"].as_str()),
        (Some("organization"), Some(ORG))
    );
    assert!(org["attributes"]["createdAt"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    create_token_in(&app.database_url(), "someone-else").await;
    let (status, _) = app
        .send(reqwest::Method::GET, "/v1/organizations/someone-else")
        .await;
    assert_eq!(status, 404);

    let ready = reqwest::get(format!("{}/readyz", app.base)).await.unwrap();
    assert_eq!(ready.status(), 200);
}
