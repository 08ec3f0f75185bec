//! The HTTP server: the router on hyper's HTTP/1 connections, with the limits a public
//! service needs and `axum::serve` does not expose.
//!
//! - A connection must send a request's headers within `header_timeout` of being ready
//!   for one, which also closes keep-alive connections idle that long: a client that
//!   opens connections and sends nothing, or a byte a second, holds nothing for long.
//! - A request body must keep arriving: a pause of `body_timeout` ends it.
//! - At most `max_connections` are served at once; past that, new connections wait in
//!   the listen backlog rather than take memory and file descriptors. While some wait,
//!   connections without a request in flight for [`IDLE_BEFORE_SHED`] are closed
//!   (those in a request answer it and close), so idle keep-alive connections — one
//!   tenant's pool, or a stranger's — never keep others out for a header timeout.
//! - On shutdown the listener closes, every connection is told to finish its current
//!   request, and what is still open at the deadline is dropped.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeoutLayer;

/// How long a connection must have been without a request in flight before it is
/// closed to make room at the connection cap: long enough that a client that has
/// just connected gets to send its request.
pub const IDLE_BEFORE_SHED: Duration = Duration::from_millis(500);

/// How often idle connections are asked again to make room while some wait.
const SHED_EVERY: Duration = Duration::from_millis(100);

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
    // Told while connections wait at the cap: idle ones close to make room.
    let pressure = Arc::new(Notify::new());
    'accept: loop {
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
        // Answers go out as they are written: with Nagle's algorithm, a response sent
        // as headers then body waits for the client's delayed ACK (tens of ms each).
        let _ = stream.set_nodelay(true);
        // Accepted first, so a place is made only when someone waits for one; the
        // connections behind it wait in the listen backlog.
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => loop {
                pressure.notify_waiters();
                tokio::select! {
                    permit = permits.clone().acquire_owned() => break permit.expect("never closed"),
                    _ = tokio::time::sleep(SHED_EVERY) => {}
                    _ = shutdown.cancelled() => break 'accept,
                }
            },
        };
        // Reap finished connections so the set does not grow with the uptime.
        while connections.try_join_next().is_some() {}
        let activity = Arc::new(Activity::new());
        let router = router.clone();
        let tracker = activity.clone();
        let service =
            tower::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                // Failed authentications are counted per peer address.
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                let busy = Activity::start(&tracker);
                let answer = router.clone().oneshot(request);
                async move {
                    let response = answer.await;
                    drop(busy);
                    response
                }
            });
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let stop = shutdown.clone();
        let pressure = pressure.clone();
        connections.spawn(async move {
            tokio::pin!(connection);
            loop {
                tokio::select! {
                    _ = connection.as_mut() => break,
                    _ = pressure.notified() => {
                        if activity.idle_for() < IDLE_BEFORE_SHED {
                            continue;
                        }
                    }
                    _ = stop.cancelled() => {}
                }
                // Closes it now if idle, else after the request it is in.
                connection.as_mut().graceful_shutdown();
                let _ = connection.as_mut().await;
                break;
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

/// Whether a connection has a request in flight, and since when it has had none.
struct Activity(Mutex<(usize, Instant)>);

/// A request in flight on a connection; its end is the connection's last activity.
struct Busy(Arc<Activity>);

impl Activity {
    fn new() -> Activity {
        Activity(Mutex::new((0, Instant::now())))
    }

    fn start(this: &Arc<Activity>) -> Busy {
        this.lock().0 += 1;
        Busy(this.clone())
    }

    /// How long the connection has been without a request in flight (zero while one is).
    fn idle_for(&self) -> Duration {
        let (in_flight, since) = *self.lock();
        match in_flight {
            0 => since.elapsed(),
            _ => Duration::ZERO,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, Instant)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.0 -= 1;
        state.1 = Instant::now();
    }
}
