//! Fetcher tests against real servers on 127.0.0.1:0.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use futures::stream;
use tokio::net::TcpListener;

use super::*;

mod stall;

const PAYLOAD: &[u8] = b"\x89PNG\r\n\x1a\n pretend this is an image";

pub(super) fn config(allow_private: bool) -> FetchConfig {
    FetchConfig {
        allow_private,
        max_bytes: 1000,
        connect_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(5),
        max_redirects: 5,
        // Loose enough that only the tests of the stall rules meet them.
        stall: StallLimits {
            first_byte_timeout: Duration::from_secs(5),
            min_bytes_per_sec: 0,
            min_speed_window: Duration::from_secs(1),
        },
    }
}

pub(super) fn fetcher(allow_private: bool) -> Fetcher {
    Fetcher::new(config(allow_private)).expect("client builds")
}

/// A media server on 127.0.0.1:0 that counts the requests it answers.
pub(super) struct MediaServer {
    pub(super) addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl MediaServer {
    pub(super) fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    pub(super) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

pub(super) async fn spawn_media_server() -> MediaServer {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new()
        .route("/ok", get(|| async { PAYLOAD }))
        .route("/status/{code}", get(status))
        .route("/big", get(|| async { vec![7u8; 1001] }))
        .route("/big-chunked", get(big_chunked))
        .route("/drip", get(drip))
        .route("/stall", get(stall))
        .route("/redirect/{n}", get(redirect_n))
        .route("/goto", get(goto))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                counter.fetch_add(1, Ordering::SeqCst);
                next.run(req)
            },
        ));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    MediaServer { addr, hits }
}

async fn status(UrlPath(code): UrlPath<u16>) -> StatusCode {
    StatusCode::from_u16(code).unwrap()
}

/// 1,050 bytes in 21 chunks, no Content-Length.
async fn big_chunked() -> Response {
    let chunks = (0..21).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![1u8; 50])));
    Body::from_stream(stream::iter(chunks)).into_response()
}

/// One byte every 200 ms, 100 bytes in all.
async fn drip() -> Response {
    let bytes = stream::unfold(0, |i| async move {
        if i == 100 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), i + 1))
    });
    Body::from_stream(bytes).into_response()
}

/// Headers at once, then a body that never sends a byte.
async fn stall() -> Response {
    Body::from_stream(stream::pending::<Result<Bytes, std::io::Error>>()).into_response()
}

/// `/redirect/n` redirects to `/redirect/n-1`; `/redirect/0` is the payload.
async fn redirect_n(UrlPath(n): UrlPath<u32>) -> Response {
    if n == 0 {
        return PAYLOAD.into_response();
    }
    (
        StatusCode::FOUND,
        [(header::LOCATION, format!("/redirect/{}", n - 1))],
    )
        .into_response()
}

/// Redirects to the `to` query parameter.
async fn goto(Query(q): Query<HashMap<String, String>>) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, q["to"].clone())]).into_response()
}

/// A listener on 127.0.0.1:0 that counts TCP connections and closes them unanswered:
/// stronger than counting requests, since a refused address must not even be dialled.
pub(super) async fn spawn_counting_listener() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (addr, accepted)
}

pub(super) fn dest() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("source");
    (dir, path)
}

#[tokio::test]
async fn plain_download_writes_the_exact_bytes() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let n = fetcher(true)
        .fetch_to_file(&server.url("/ok"), &dest)
        .await
        .unwrap();
    assert_eq!(n, PAYLOAD.len() as u64);
    assert_eq!(tokio::fs::read(&dest).await.unwrap(), PAYLOAD);
}

#[tokio::test]
async fn not_found_is_a_final_http_status_error() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/status/404"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::HttpStatus(404)), "{err:?}");
    assert!(!err.is_retryable());
    assert_eq!(err.code(), "source_http_error");
    assert!(!dest.exists());
}

#[tokio::test]
async fn service_unavailable_is_retryable() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/status/503"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::HttpStatus(503)), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn body_over_the_cap_with_content_length_is_too_large() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/big"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooLarge(1000)), "{err:?}");
    assert!(!err.is_retryable());
    assert!(!dest.exists(), "no partial file is left behind");
}

#[tokio::test]
async fn body_over_the_cap_without_content_length_is_too_large() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/big-chunked"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooLarge(1000)), "{err:?}");
    assert!(!dest.exists(), "no partial file is left behind");
}

#[tokio::test]
async fn slow_drip_source_hits_the_total_timeout() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let fetcher = Fetcher::new(FetchConfig {
        total_timeout: Duration::from_millis(700),
        ..config(true)
    })
    .unwrap();
    let started = std::time::Instant::now();
    let err = fetcher
        .fetch_to_file(&server.url("/drip"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Timeout), "{err:?}");
    assert!(err.is_retryable());
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_chain_of_two_redirects_is_followed() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let n = fetcher(true)
        .fetch_to_file(&server.url("/redirect/2"), &dest)
        .await
        .unwrap();
    assert_eq!(n, PAYLOAD.len() as u64);
    assert_eq!(tokio::fs::read(&dest).await.unwrap(), PAYLOAD);
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn exactly_max_redirects_is_still_followed() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    fetcher(true)
        .fetch_to_file(&server.url("/redirect/5"), &dest)
        .await
        .unwrap();
}

#[tokio::test]
async fn six_redirects_are_too_many() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/redirect/6"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooManyRedirects(5)), "{err:?}");
    assert!(!err.is_retryable());
    assert_eq!(server.hits(), 6, "the sixth redirect is not followed");
}

#[tokio::test]
async fn a_redirect_to_a_non_http_scheme_is_an_invalid_url() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let err = fetcher(true)
        .fetch_to_file(&server.url("/goto?to=ftp://example.com/a.png"), &dest)
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::InvalidUrl), "{err:?}");
}

#[tokio::test]
async fn a_closed_port_is_unreachable_and_retryable() {
    let (addr, _) = spawn_counting_listener().await;
    // Bind and drop to find a port that is very likely closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    assert_ne!(addr, closed);
    let (_dir, dest) = dest();
    let url = Url::parse(&format!("http://{closed}/")).unwrap();
    let err = fetcher(true).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(matches!(err, FetchError::Unreachable(_)), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn an_unknown_host_name_is_unreachable_and_retryable() {
    let (_dir, dest) = dest();
    // `.invalid` never resolves (RFC 2606), so this fails in the resolver itself.
    let url = Url::parse("http://does-not-exist.invalid/a.png").unwrap();
    let err = fetcher(false).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::Unreachable(reason) if reason.starts_with("does-not-exist.invalid: ")),
        "{err:?}"
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn user_agent_names_mediaedit() {
    let app = Router::new().route(
        "/",
        get(|headers: axum::http::HeaderMap| async move {
            headers[header::USER_AGENT].to_str().unwrap().to_owned()
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (_dir, dest) = dest();
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    fetcher(true).fetch_to_file(&url, &dest).await.unwrap();
    let ua = tokio::fs::read_to_string(&dest).await.unwrap();
    assert_eq!(ua, format!("mediaedit/{}", env!("CARGO_PKG_VERSION")));
}
