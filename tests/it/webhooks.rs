//! Webhooks (docs/API.md): signed per Standard Webhooks, retried with the same id,
//! durable across a restart, listed in the delivery log; on both backends, and once
//! per event with two nodes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use mediaedit::app::App;
use mediaedit::webhooks::signing::new_secret;
use serde_json::{json, Value};
use standardwebhooks::Webhook;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    a_done_edit_is_posted_to_its_webhook_signed_by_the_organizations_secret,
    a_failed_attempt_is_retried_with_the_same_id_and_body,
    a_pending_retry_is_delivered_after_a_restart,
    a_canceled_edit_is_announced_and_after_a_rotation_both_secrets_sign,
);

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    headers: HeaderMap,
    pub(crate) body: String,
}

/// A webhook receiver on loopback: records every request, and answers 500 to the
/// first `failures` of them, 204 after.
pub(crate) struct Receiver {
    pub(crate) url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

#[derive(Clone)]
struct ReceiverState {
    got: Arc<Mutex<Vec<Received>>>,
    failures: Arc<AtomicUsize>,
}

impl Receiver {
    pub(crate) async fn start(failures: usize) -> Receiver {
        let state = ReceiverState {
            got: Arc::default(),
            failures: Arc::new(AtomicUsize::new(failures)),
        };
        let got = state.got.clone();
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { url, got }
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until `n` requests have come (at most `within`).
    pub(crate) async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} requests came",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn receive(
    State(state): State<ReceiverState>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    state.got.lock().unwrap().push(Received {
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    });
    let failing = state
        .failures
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    match failing {
        true => StatusCode::INTERNAL_SERVER_ERROR,
        false => StatusCode::NO_CONTENT,
    }
}

/// The organization's current signing secret, as `mediaedit webhook-secret` prints it.
async fn secret_of(app: &TestApp) -> String {
    app.db()
        .await
        .webhook_secrets(ORG, &new_secret())
        .await
        .unwrap()
        .current
}

/// The request verified with `secret` by the specification's own library; its body.
fn verified(request: &Received, secret: &str) -> Value {
    Webhook::new(secret)
        .unwrap()
        .verify(request.body.as_bytes(), &request.headers)
        .unwrap_or_else(|e| panic!("signature rejected: {e:?}: {request:?}"));
    serde_json::from_str(&request.body).unwrap()
}

pub(crate) fn with_webhook(mut body: Value, url: &str) -> Value {
    body["webhook"] = json!({ "url": url });
    body
}

pub(crate) async fn deliveries(app: &TestApp, id: &str) -> Vec<Value> {
    let path = format!("/v1/edits/{id}/deliveries");
    let (_, doc) = app.send(reqwest::Method::GET, &path).await;
    doc["data"].as_array().unwrap().clone()
}

async fn a_done_edit_is_posted_to_its_webhook_signed_by_the_organizations_secret(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let receiver = Receiver::start(0).await;
    let src = app.fixtures.add("a.png", fixtures::png(32, 24));
    let body = with_webhook(edit(&src, &["image-to-webp"], None), &receiver.url);
    let id = app.create_edit(body).await;
    let done = app.wait_finished(&id).await;
    assert_eq!(
        done["attributes"]["webhook"]["url"],
        receiver.url.as_str(),
        "echoed as sent"
    );
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    let event = verified(&got[0], &secret_of(&app).await);
    assert_eq!(event["type"], "edit.done");
    assert!(
        event["timestamp"].as_str().unwrap().ends_with('Z'),
        "{event}"
    );
    assert_eq!(event["data"]["id"], id.as_str());
    assert_eq!(event["data"]["attributes"]["status"], "done");
    assert!(event["data"]["attributes"]["downloadUrls"][0].is_string());
    assert!(got[0].headers["webhook-id"]
        .to_str()
        .unwrap()
        .starts_with("msg_"));
    assert_eq!(got[0].headers["content-type"], "application/json");

    let log = deliveries(&app, &id).await;
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        log[0]["eventId"],
        got[0].headers["webhook-id"].to_str().unwrap()
    );
    assert_eq!(
        (log[0]["type"].as_str(), log[0]["attempt"].as_i64()),
        (Some("edit.done"), Some(1))
    );
    assert_eq!(
        (log[0]["status"].as_i64(), &log[0]["error"]),
        (Some(204), &Value::Null)
    );
    assert!(
        log[0]["durationMs"].is_i64() && log[0]["at"].is_string(),
        "{log:?}"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), 1, "delivered once");
    let metrics = reqwest::get(format!("{}/metrics", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("mediaedit_webhook_deliveries_total{outcome=\"delivered\"} 1"),
        "{metrics}"
    );
}

async fn a_failed_attempt_is_retried_with_the_same_id_and_body(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let receiver = Receiver::start(1).await;
    let body = with_webhook(
        edit(&app.fixtures.status_url(404), &["image-to-webp"], None),
        &receiver.url,
    );
    let id = app.create_edit(body).await;
    let first = receiver.wait_for(1, Duration::from_secs(30)).await;
    let started = Instant::now();
    let got = receiver.wait_for(2, Duration::from_secs(15)).await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "retried after about 5 s: {:?}",
        started.elapsed()
    );
    assert_eq!(got[0].headers["webhook-id"], got[1].headers["webhook-id"]);
    assert_eq!(got[0].body, got[1].body);
    let secret = secret_of(&app).await;
    let event = verified(&got[1], &secret);
    assert_eq!(event["type"], "edit.failed", "{event}");
    assert_eq!(event["data"]["attributes"]["status"], "failed");
    verified(&first[0], &secret);
    let log = deliveries(&app, &id).await;
    let attempts: Vec<(i64, Option<i64>)> = log
        .iter()
        .map(|d| (d["attempt"].as_i64().unwrap(), d["status"].as_i64()))
        .collect();
    assert_eq!(attempts, [(1, Some(500)), (2, Some(204))], "{log:?}");
    assert!(log[0]["error"].as_str().unwrap().contains("500"), "{log:?}");
}

async fn a_pending_retry_is_delivered_after_a_restart(backend: Backend) {
    let mut app = spawn_app_on(backend, |_| {}).await;
    let receiver = Receiver::start(1).await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let id = app
        .create_edit(with_webhook(
            edit(&src, &["resize-image"], None),
            &receiver.url,
        ))
        .await;
    receiver.wait_for(1, Duration::from_secs(30)).await;
    // The first attempt failed; its retry is due in 5 s. Stop the server before then.
    app.stop().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(receiver.received().len(), 1);
    app.restart_with(|_| {}).await;
    let got = receiver.wait_for(2, Duration::from_secs(20)).await;
    assert_eq!(got[0].headers["webhook-id"], got[1].headers["webhook-id"]);
    let event = verified(&got[1], &secret_of(&app).await);
    assert_eq!(event["data"]["id"], id.as_str());
    assert_eq!(deliveries(&app, &id).await.len(), 2);
}

async fn a_canceled_edit_is_announced_and_after_a_rotation_both_secrets_sign(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let receiver = Receiver::start(0).await;
    let old = secret_of(&app).await;
    let rotated = app
        .db()
        .await
        .rotate_webhook_secret(
            ORG,
            &new_secret(),
            mediaedit::db::unix_ms(std::time::SystemTime::now()),
        )
        .await
        .unwrap();
    assert_ne!(rotated.current, old);
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app
        .create_edit(with_webhook(
            edit(&src, &["image-to-webp"], None),
            &receiver.url,
        ))
        .await;
    let path = format!("/v1/edits/{id}/cancel");
    assert_eq!(app.send(reqwest::Method::POST, &path).await.0, 200);
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(
        got[0].headers["webhook-signature"]
            .to_str()
            .unwrap()
            .split(' ')
            .count(),
        2
    );
    for secret in [&old, &rotated.current] {
        let event = verified(&got[0], secret);
        assert_eq!(event["type"], "edit.canceled");
    }
}

#[tokio::test]
async fn two_nodes_send_each_event_once() {
    let app = spawn_app_on(Backend::Cluster, |c| c.workers = 2).await;
    let second_dir = tempfile::TempDir::new().unwrap();
    let mut config = test_config(second_dir.path());
    use_backend(&mut config, app.cluster.as_ref());
    let second = App::start(config).await.unwrap();
    let receiver = Receiver::start(0).await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let mut ids = Vec::new();
    for _ in 0..12 {
        let body = with_webhook(
            edit(&src, &["resize-image"], Some(json!({"scale": 0.5}))),
            &receiver.url,
        );
        ids.push(app.create_edit(body).await);
    }
    let got = receiver.wait_for(12, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got_after = receiver.received();
    assert_eq!(got_after.len(), got.len().max(12), "no event is sent twice");
    let mut edits: Vec<String> = got_after
        .iter()
        .map(|r| {
            serde_json::from_str::<Value>(&r.body).unwrap()["data"]["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    edits.sort();
    ids.sort();
    assert_eq!(edits, ids, "each edit's event arrived exactly once");
    second.stop().await.unwrap();
}
