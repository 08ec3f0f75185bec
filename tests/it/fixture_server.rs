//! A local HTTP server for source media: files by path, with hit counts, ETags,
//! and sources that are slow, drip, stall, never end or answer a given status.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;

/// A local HTTP server for source media, with per-path hit counts.
#[derive(Clone)]
pub struct FixtureServer {
    pub addr: SocketAddr,
    files: Arc<Mutex<HashMap<String, Bytes>>>,
    hits: Arc<AtomicUsize>,
    not_modified: Arc<AtomicUsize>,
}

impl FixtureServer {
    pub async fn start() -> FixtureServer {
        let files: Arc<Mutex<HashMap<String, Bytes>>> = Arc::default();
        let hits = Arc::new(AtomicUsize::new(0));
        let not_modified = Arc::new(AtomicUsize::new(0));
        let app = axum::Router::new()
            .route("/files/{name}", axum::routing::get(serve_file))
            .route("/status/{code}", axum::routing::get(serve_status))
            .route("/slow/{ms}/{name}", axum::routing::get(serve_slowly))
            .route("/drip", axum::routing::get(serve_drip))
            .route("/stall", axum::routing::get(serve_stall))
            .route("/endless", axum::routing::get(serve_endless))
            .with_state((files.clone(), hits.clone()))
            .merge(
                axum::Router::new()
                    .route("/etag/{name}", axum::routing::get(serve_with_etag))
                    .with_state((files.clone(), not_modified.clone())),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        FixtureServer {
            addr,
            files,
            hits,
            not_modified,
        }
    }

    /// Serves `bytes` and returns the URL.
    pub fn add(&self, name: &str, bytes: Vec<u8>) -> String {
        self.files
            .lock()
            .unwrap()
            .insert(name.to_string(), Bytes::from(bytes));
        self.url(name)
    }

    /// Stops serving `name`: its URL answers `404` from now on.
    pub fn remove(&self, name: &str) {
        self.files.lock().unwrap().remove(name);
    }

    pub fn url(&self, name: &str) -> String {
        format!("http://{}/files/{name}", self.addr)
    }

    /// A URL that serves `name` after waiting `ms` milliseconds.
    pub fn slow_url(&self, name: &str, ms: u64) -> String {
        format!("http://{}/slow/{ms}/{name}", self.addr)
    }

    /// A URL whose body trickles one byte every 200 ms, forever.
    pub fn drip_url(&self) -> String {
        format!("http://{}/drip", self.addr)
    }

    /// A URL that sends its headers at once and then never a byte of its body.
    pub fn stall_url(&self) -> String {
        format!("http://{}/stall", self.addr)
    }

    /// A URL whose body never ends (64 KiB chunks as fast as they are read).
    pub fn endless_url(&self) -> String {
        format!("http://{}/endless", self.addr)
    }

    /// A URL that always answers with `code`.
    pub fn status_url(&self, code: u16) -> String {
        format!("http://{}/status/{code}", self.addr)
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// A URL that serves `name` with an `ETag` (of its content) and answers a
    /// matching `If-None-Match` with `304 Not Modified`.
    pub fn etag_url(&self, name: &str) -> String {
        format!("http://{}/etag/{name}", self.addr)
    }

    /// `304 Not Modified` answers the `etag_url`s gave.
    pub fn not_modified(&self) -> usize {
        self.not_modified.load(Ordering::SeqCst)
    }
}

type FixtureState = (Arc<Mutex<HashMap<String, Bytes>>>, Arc<AtomicUsize>);

async fn serve_file(
    State((files, hits)): State<FixtureState>,
    UrlPath(name): UrlPath<String>,
) -> impl IntoResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    match files.lock().unwrap().get(&name) {
        Some(bytes) => (StatusCode::OK, bytes.clone()),
        None => (StatusCode::NOT_FOUND, Bytes::from_static(b"no such file")),
    }
}

async fn serve_with_etag(
    State((files, not_modified)): State<FixtureState>,
    UrlPath(name): UrlPath<String>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use sha2::Digest;
    let Some(bytes) = files.lock().unwrap().get(&name).cloned() else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let etag = format!("\"{}\"", hex::encode(&sha2::Sha256::digest(&bytes)[..8]));
    let asked = headers.get("if-none-match").and_then(|v| v.to_str().ok());
    if asked == Some(etag.as_str()) {
        not_modified.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::NOT_MODIFIED, [("etag", etag)]).into_response();
    }
    (StatusCode::OK, [("etag", etag)], bytes).into_response()
}

async fn serve_slowly(
    State((files, hits)): State<FixtureState>,
    UrlPath((ms, name)): UrlPath<(u64, String)>,
) -> impl IntoResponse {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    serve_file(State((files, hits)), UrlPath(name)).await
}

async fn serve_drip(State((_, hits)): State<FixtureState>) -> impl IntoResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    let stream = futures::stream::unfold((), |()| async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from_static(b"x")), ()))
    });
    axum::body::Body::from_stream(stream)
}

async fn serve_stall(State((_, hits)): State<FixtureState>) -> impl IntoResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    axum::body::Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>())
}

async fn serve_endless(State((_, hits)): State<FixtureState>) -> impl IntoResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    let chunk = Bytes::from(vec![0u8; 64 * 1024]);
    let stream = futures::stream::repeat_with(move || Ok::<_, std::io::Error>(chunk.clone()));
    axum::body::Body::from_stream(stream)
}

async fn serve_status(
    State((_, hits)): State<FixtureState>,
    UrlPath(code): UrlPath<u16>,
) -> impl IntoResponse {
    hits.fetch_add(1, Ordering::SeqCst);
    (StatusCode::from_u16(code).unwrap(), "status")
}
