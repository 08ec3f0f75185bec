//! Webhooks under one tenant's weight (docs/API.md): a receiver that never
//! answers holds at most `--webhook-concurrency-per-org` of a node's deliveries, so
//! another organization's events still go out at once; and what a failed attempt
//! records names no address, port or host. On both backends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::webhooks::{deliveries, with_webhook, Receiver};

on_both_backends!(
    a_tarpit_receiver_of_one_organization_does_not_delay_another_organizations_events,
    a_refused_connection_is_recorded_in_general_words,
);

/// A receiver that accepts every connection and never answers: each delivery to it
/// holds its slot until the sender gives up.
struct Tarpit {
    url: String,
    accepted: Arc<AtomicUsize>,
    /// The connections, kept open so that nothing is ever answered.
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Tarpit {
    async fn start() -> Tarpit {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let held: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (count, keep) = (accepted.clone(), held.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                keep.lock().unwrap().push(socket);
            }
        });
        Tarpit {
            url,
            accepted,
            held,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn a_tarpit_receiver_of_one_organization_does_not_delay_another_organizations_events(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    let other = create_token_in(&app.database_url(), "other-org").await;
    let tarpit = Tarpit::start().await;
    let receiver = Receiver::start(0).await;
    // 20 edits of ORG that fail at once, each announced to the tarpit: more than the
    // node's 16 delivery slots.
    let failing = app.fixtures.status_url(404);
    for _ in 0..20 {
        let body = with_webhook(edit(&failing, &["image-to-webp"], None), &tarpit.url);
        app.create_edit(body).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while tarpit.accepted() < 4 {
        assert!(Instant::now() < deadline, "the tarpit got no deliveries");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The first four attempts give up after 10 s; what follows is timed against that.
    let held_since = Instant::now();

    // Now the other organization's edits end while ORG's events wait for the tarpit.
    let src = app.fixtures.add("b.png", fixtures::png(16, 16));
    let mut ended = Vec::new();
    for n in 0..3 {
        let body = with_webhook(edit(&src, &["image-to-webp"], None), &receiver.url);
        let response = app.post_edit_as(&other, body).await;
        assert_eq!(response.status(), 201);
        let id = response.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let doc: Value = app.get_edit_as(&other, &id).await.json().await.unwrap();
            if doc["attributes"]["status"] == "done" {
                break;
            }
            assert!(Instant::now() < deadline, "edit {id}: {doc}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let since = Instant::now();
        receiver.wait_for(n + 1, Duration::from_secs(3)).await;
        ended.push(since.elapsed());
    }
    assert!(
        ended.iter().all(|took| *took < Duration::from_secs(2)),
        "the other organization's events came within 2 s of their edits' end: {ended:?}"
    );
    assert!(
        held_since.elapsed() < Duration::from_secs(9),
        "the check ran while the first attempts were still held"
    );
    assert_eq!(
        (tarpit.accepted(), tarpit.held.lock().unwrap().len()),
        (4, 4),
        "ORG held 4 deliveries in flight, no more, while the tarpit kept them"
    );
}

async fn a_refused_connection_is_recorded_in_general_words(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    // Bound then dropped: nothing listens on the port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{closed}/hook");
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let id = app
        .create_edit(with_webhook(edit(&src, &["image-to-webp"], None), &url))
        .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let log = loop {
        let log = deliveries(&app, &id).await;
        if !log.is_empty() {
            break log;
        }
        assert!(Instant::now() < deadline, "no attempt was recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(log[0]["error"], "connection refused", "{log:?}");
    assert_eq!(log[0]["status"], Value::Null);
    // The first attempt's words are the rule; a retry's are the same.
    for attempt in &log {
        let error = attempt["error"].as_str().unwrap();
        for leak in ["127.0.0.1", &closed.port().to_string(), "http", "/hook"] {
            assert!(!error.contains(leak), "{leak} in {error}");
        }
    }
}
