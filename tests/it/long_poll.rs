//! Long polls (docs/API.md): `GET /v1/edits/{id}?wait=S` answers when the edit
//! ends, or after S seconds with its current document; on both backends.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    a_long_poll_answers_as_soon_as_the_edit_is_done,
    a_long_poll_on_an_edit_that_does_not_end_answers_after_its_wait,
    a_cancel_wakes_a_long_poll_at_once,
    a_wait_out_of_range_is_refused,
);

/// `GET /v1/edits/{id}?wait=S`: the status code, the document, and how long it took.
async fn long_poll(app: &TestApp, id: &str, wait: &str) -> (u16, Value, Duration) {
    let started = Instant::now();
    let response = app
        .client
        .get(format!("{}/v1/edits/{id}?wait={wait}", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let doc = response.json().await.unwrap_or(Value::Null);
    (status, doc, started.elapsed())
}

async fn a_long_poll_answers_as_soon_as_the_edit_is_done(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    app.fixtures.add("a.png", fixtures::png(64, 48));
    // The source takes 1.5 s to arrive, so the edit is still running when the poll starts.
    let src = app.fixtures.slow_url("a.png", 1500);
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let (status, doc, took) = long_poll(&app, &id, "30").await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
    assert!(doc["attributes"]["downloadUrls"][0].is_string(), "{doc}");
    assert!(
        took >= Duration::from_millis(1000),
        "answered before the edit could end: {took:?}"
    );
    assert!(
        took < Duration::from_secs(10),
        "not woken by the ending: {took:?}"
    );
    // An edit that has ended answers at once.
    let (_, again, took) = long_poll(&app, &id, "30").await;
    assert_eq!(again["attributes"]["status"], "done");
    assert!(took < Duration::from_secs(1), "{took:?}");
}

async fn a_long_poll_on_an_edit_that_does_not_end_answers_after_its_wait(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let (status, doc, took) = long_poll(&app, &id, "1.5").await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["attributes"]["status"], "queued");
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(4),
        "{took:?}"
    );
    let (status, _, _) = long_poll(&app, "no-such-edit", "5").await;
    assert_eq!(status, 404);
}

async fn a_cancel_wakes_a_long_poll_at_once(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let poll = {
        let (client, base, token, id) = (
            app.client.clone(),
            app.base.clone(),
            app.token.clone(),
            id.clone(),
        );
        tokio::spawn(async move {
            let started = Instant::now();
            let doc: Value = client
                .get(format!("{base}/v1/edits/{id}?wait=30"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            (doc, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let path = format!("/v1/edits/{id}/cancel");
    assert_eq!(app.send(reqwest::Method::POST, &path).await.0, 200);
    let (doc, took) = poll.await.unwrap();
    assert_eq!(doc["attributes"]["status"], "canceled", "{doc}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

async fn a_wait_out_of_range_is_refused(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    for bad in ["0", "61", "-1", "soon", ""] {
        let (status, doc, _) = long_poll(&app, &id, bad).await;
        assert_eq!(status, 422, "wait={bad}: {doc}");
        assert_eq!(doc["errors"][0]["code"], "invalid_query", "{doc}");
    }
}
