//! The HTTP server: the router on hyper's HTTP/1 connections, with the limits a public
//! service needs and `axum::serve` does not expose.
//!
//! - A connection must send a request's headers within `header_timeout` of being ready
//!   for one, which also closes keep-alive connections idle that long: a client that
//!   opens connections and sends nothing, or a byte a second, holds nothing for long.
//! - A request body must keep arriving: a pause of `body_timeout` ends it.
//! - At most `max_connections` are served at once; past that, new connections wait in
//!   the listen backlog rather than take memory and file descriptors.
//! - On shutdown the listener closes, every connection is told to finish its current
//!   request, and what is still open at the deadline is dropped.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeoutLayer;

/// The server's limits (see the module's docs).
#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
}

/// Serves `router` on `listener` until `shutdown`, then drains connections until
/// `deadline` (read when shutdown comes) and drops the rest.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ServerLimits,
    shutdown: CancellationToken,
    deadline: impl FnOnce() -> Instant,
) {
    let router = router.layer(RequestBodyTimeoutLayer::new(limits.body_timeout));
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut connections = JoinSet::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("never closed"),
            _ = shutdown.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: back off rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        // Reap finished connections so the set does not grow with the uptime.
        while connections.try_join_next().is_some() {}
        let service = router.clone().map_request(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                // Failed authentications are counted per peer address.
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                request
            },
        );
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let stop = shutdown.clone();
        connections.spawn(async move {
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    let drained = tokio::time::timeout_at(deadline(), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = connections.len(),
            "closing connections still open at the deadline"
        );
        connections.abort_all();
    }
}
