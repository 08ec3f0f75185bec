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

const PAYLOAD: &[u8] = b"\x89PNG\r\n\x1a\n pretend this is an image";

fn config(allow_private: bool) -> FetchConfig {
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

fn fetcher(allow_private: bool) -> Fetcher {
    Fetcher::new(config(allow_private)).expect("client builds")
}

/// A media server on 127.0.0.1:0 that counts the requests it answers.
struct MediaServer {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl MediaServer {
    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn spawn_media_server() -> MediaServer {
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
async fn spawn_counting_listener() -> (SocketAddr, Arc<AtomicUsize>) {
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

fn dest() -> (tempfile::TempDir, std::path::PathBuf) {
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
async fn loopback_ip_literal_is_refused_without_a_connection() {
    let (addr, accepted) = spawn_counting_listener().await;
    let (_dir, dest) = dest();
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let err = fetcher(false).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::ForbiddenAddress(a) if a == "127.0.0.1"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_without_a_connection() {
    let (addr, accepted) = spawn_counting_listener().await;
    let (_dir, dest) = dest();
    // The fetcher leaves names to the guarded resolver (check_url's early refusal of
    // "localhost" is not on this path), so this exercises the resolver end to end.
    let url = Url::parse(&format!("http://localhost:{}/", addr.port())).unwrap();
    let err = fetcher(false).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::ForbiddenAddress(h) if h == "localhost"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_resolver_refuses_names_with_a_non_public_address() {
    let resolver = GuardedResolver;
    let err = match resolver.resolve("localhost".parse().unwrap()).await {
        Ok(_) => panic!("localhost must be refused"),
        Err(e) => e,
    };
    assert!(err.downcast_ref::<RefusedName>().is_some(), "{err}");
}

#[tokio::test]
async fn a_redirect_from_an_allowed_source_to_a_private_address_is_refused() {
    let server = spawn_media_server().await;
    let (private, accepted) = spawn_counting_listener().await;
    let fetcher = fetcher(false).trust_for_tests(&[server.addr]);
    let (_dir, dest) = dest();

    // The trusted first hop really is fetched under the guard.
    fetcher
        .fetch_to_file(&server.url("/ok"), &dest)
        .await
        .unwrap();

    for target in [
        format!("http://{private}/"),
        format!("http://localhost:{}/", private.port()),
        format!("http://[::ffff:127.0.0.1]:{}/", private.port()),
    ] {
        let mut url = server.url("/goto");
        url.query_pairs_mut().append_pair("to", &target);
        let err = fetcher.fetch_to_file(&url, &dest).await.unwrap_err();
        assert!(
            matches!(err, FetchError::ForbiddenAddress(_)),
            "{target}: {err:?}"
        );
    }
    assert_eq!(server.hits(), 4, "the first hop was fetched each time");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
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

// ---- check_url ----

const REFUSED_UNLESS_PRIVATE: &[&str] = &[
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://0.0.0.0/",
    "http://10.1.2.3/",
    "https://192.168.1.1:8443/x.png",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://api.localhost/",
];

#[test]
fn the_url_parser_normalises_odd_ipv4_spellings() {
    for spelling in [
        "http://2130706433/",
        "http://0x7f.1/",
        "http://017700000001/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://127.0.0.1./",
    ] {
        let url = Url::parse(spelling).unwrap();
        assert_eq!(
            url.host(),
            Some(Host::Ipv4(std::net::Ipv4Addr::LOCALHOST)),
            "{spelling}"
        );
    }
}

#[test]
fn non_public_hosts_are_refused_unless_private_sources_are_allowed() {
    for url in REFUSED_UNLESS_PRIVATE {
        let err = check_url(url, false).unwrap_err();
        assert!(
            matches!(err, FetchError::ForbiddenAddress(_)),
            "{url}: {err:?}"
        );
        assert!(check_url(url, true).is_ok(), "{url} with allow_private");
    }
}

#[test]
fn malformed_or_unsupported_urls_are_invalid_either_way() {
    for url in [
        "ftp://example.com/a.png",
        "file:///etc/passwd",
        "data:image/png;base64,AAAA",
        "/relative/a.png",
        "a.png",
        "",
        "http://",
        "http://user:pass@example.com/a.png",
        "http://user@example.com/a.png",
    ] {
        for allow_private in [false, true] {
            let err = check_url(url, allow_private).unwrap_err();
            assert!(matches!(err, FetchError::InvalidUrl), "{url}: {err:?}");
            assert_eq!(err.code(), "invalid_source_url");
        }
    }
}

#[test]
fn public_urls_are_accepted() {
    for url in [
        "https://example.com/a.png",
        "http://example.com:8080/a.png?x=1",
        "http://8.8.8.8/a.png",
        "http://[2606:4700:4700::1111]/a.png",
    ] {
        assert_eq!(check_url(url, false).unwrap().as_str(), url);
    }
}

#[test]
fn trusted_test_addresses_only_match_their_port() {
    let trusted: SocketAddr = "127.0.0.1:4000".parse().unwrap();
    let ok = Url::parse("http://127.0.0.1:4000/a").unwrap();
    let other_port = Url::parse("http://127.0.0.1:4001/a").unwrap();
    assert!(check_parsed(&ok, false, &[trusted]).is_ok());
    assert!(check_parsed(&other_port, false, &[trusted]).is_err());
}

#[test]
fn redacted_urls_drop_query_and_fragment() {
    let url = Url::parse("https://cdn.example.com/a.png?token=secret#frag").unwrap();
    assert_eq!(redacted(&url), "https://cdn.example.com/a.png");
}

#[tokio::test]
async fn a_dripping_source_is_cut_off_by_the_minimum_speed_within_a_window() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let mut config = config(true);
    config.stall.min_bytes_per_sec = 100;
    let started = std::time::Instant::now();
    let err = Fetcher::new(config)
        .unwrap()
        .fetch_to_file(&server.url("/drip"), &dest)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            FetchError::Stalled(Stall::TooSlow {
                secs: 1,
                min_per_sec: 100,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "source_timeout");
    assert_eq!(err.max_retries(), Some(1));
    // First byte at 0.2 s, its window ends at 1.2 s.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(!dest.exists(), "a partial download is removed");
}

#[tokio::test]
async fn headers_followed_by_silence_break_the_first_byte_rule() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let mut config = config(true);
    config.stall.first_byte_timeout = Duration::from_millis(500);
    let started = std::time::Instant::now();
    let err = Fetcher::new(config)
        .unwrap()
        .fetch_to_file(&server.url("/stall"), &dest)
        .await
        .unwrap_err();
    assert!(
        matches!(err, FetchError::Stalled(Stall::NoFirstByte { .. })),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_fast_source_is_untouched_by_strict_stall_rules() {
    let server = spawn_media_server().await;
    let (_dir, dest) = dest();
    let mut config = config(true);
    config.stall = StallLimits {
        first_byte_timeout: Duration::from_secs(1),
        min_bytes_per_sec: 1_000_000,
        min_speed_window: Duration::from_secs(1),
    };
    let written = Fetcher::new(config)
        .unwrap()
        .fetch_to_file(&server.url("/ok"), &dest)
        .await
        .unwrap();
    assert_eq!(written, PAYLOAD.len() as u64);
}
