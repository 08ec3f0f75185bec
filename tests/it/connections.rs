//! The HTTP server's own limits: slow or idle connections are closed, the number of
//! connections is capped (idle ones making room at the cap), and a stop does not wait
//! on a slow client.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::binary::{token_create, Server};
use crate::helpers::*;

fn host(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes the connection (or `limit` passes); true when closed.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let read = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, read).await.is_ok()
}

#[tokio::test]
async fn a_connection_that_sends_half_a_header_is_closed_after_the_header_timeout() {
    let app = spawn_app_with(|c| c.http_header_timeout_secs = 1).await;
    let mut slow = TcpStream::connect(host(&app.base)).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    assert!(
        closed_within(&mut slow, Duration::from_secs(5)).await,
        "still open"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    // An idle connection that never sends a byte goes the same way.
    let mut idle = TcpStream::connect(host(&app.base)).await.unwrap();
    assert!(
        closed_within(&mut idle, Duration::from_secs(5)).await,
        "idle still open"
    );
    // Well-behaved clients are served as before.
    let health = app
        .client
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn connections_past_the_cap_wait_until_one_closes() {
    let app = spawn_app_with(|c| {
        c.max_connections = 2;
        c.http_header_timeout_secs = 2;
    })
    .await;
    // Two clients in the middle of sending a request hold both places.
    let mut a = TcpStream::connect(host(&app.base)).await.unwrap();
    let mut b = TcpStream::connect(host(&app.base)).await.unwrap();
    for slow in [&mut a, &mut b] {
        slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A third client waits for a free place: the two are closed at their header
    // timeout, and then it is served.
    let started = Instant::now();
    let health = reqwest::Client::new()
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(1200),
        "served at once: {waited:?}"
    );
    assert!(waited < Duration::from_secs(6), "{waited:?}");
}

#[tokio::test]
async fn idle_connections_make_room_at_the_cap() {
    let app = spawn_app_with(|c| {
        c.max_connections = 2;
        c.http_header_timeout_secs = 30;
    })
    .await;
    // Two connections without a request: a keep-alive connection after its request
    // was answered, and one that never sent one.
    let mut kept = TcpStream::connect(host(&app.base)).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0u8; 512];
    let n = kept.read(&mut answer).await.unwrap();
    assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _silent = TcpStream::connect(host(&app.base)).await.unwrap();
    // A third client is served once one has been idle for half a second, not after
    // the 30 s header timeout.
    let started = Instant::now();
    let health = reqwest::Client::new()
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The one idle longest made the room.
    assert!(closed_within(&mut kept, Duration::from_secs(1)).await);
}

#[tokio::test]
async fn a_stop_does_not_wait_on_a_slow_client_past_the_grace_period() {
    let data = tempfile::TempDir::new().unwrap();
    let env = [
        ("MEDIAEDIT_SHUTDOWN_GRACE_SECS", "2"),
        ("MEDIAEDIT_HTTP_HEADER_TIMEOUT_SECS", "60"),
        ("MEDIAEDIT_HTTP_BODY_TIMEOUT_SECS", "60"),
    ];
    let token = token_create(data.path(), "slow-org");
    let mut server = Server::start(data.path(), &env, Stdio::null()).await;
    // An authenticated request whose body never completes: it holds its connection.
    let mut slow = TcpStream::connect(host(&server.base)).await.unwrap();
    let head = format!(
        "POST /v1/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let status = server.signal_and_wait("-TERM");
    let took = started.elapsed();
    assert!(status.success(), "{status:?}");
    // The open request gets the grace period, and not a moment past it.
    assert!(
        took >= Duration::from_millis(1500),
        "the stop took only {took:?}"
    );
    assert!(took < Duration::from_secs(5), "the stop took {took:?}");
}
