//! The minimum speed of a request body: each window of `--min-body-speed-window-secs`
//! must bring `--min-body-bytes-per-sec` × the window, or the request ends with
//! `408 request_too_slow`. A pause timeout alone resets on every frame, so a client
//! sending one byte every few seconds would hold a connection and an organization's
//! request slot for as long as it liked; a rate cannot be cheated that way.
//!
//! Only time spent waiting for the client counts: while the handler is away (writing
//! to the object store, say) the window is held open. A body done within its first
//! window is never judged. What was received before the cut is handed to the handler
//! as usual, so a tus `PATCH` records it: the `408` carries the upload's new
//! `Upload-Offset`, and a later `PATCH` resumes from there.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use tokio::time::{Instant, Sleep};

use super::error::ApiError;

/// The rule: at least `min_bytes_per_sec`, averaged over each `window`.
#[derive(Debug, Clone, Copy)]
pub struct BodyRate {
    /// 0 turns the rule off.
    pub min_bytes_per_sec: u64,
    pub window: Duration,
}

impl BodyRate {
    /// Bytes one window must bring.
    fn per_window(&self) -> u64 {
        (self.min_bytes_per_sec as f64 * self.window.as_secs_f64()).ceil() as u64
    }
}

/// Why a body ended: it was slower than the rule.
#[derive(Debug)]
struct TooSlow;

impl std::fmt::Display for TooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body arrived slower than the minimum rate")
    }
}

impl std::error::Error for TooSlow {}

/// Middleware: holds every request body to `rule`, and answers a request whose body
/// it cut with `408 request_too_slow` whatever its handler made of the shortened body,
/// keeping the headers a tus client resumes with.
pub async fn min_body_rate(State(rule): State<BodyRate>, request: Request, next: Next) -> Response {
    use axum::body::HttpBody;
    if rule.min_bytes_per_sec == 0 || request.body().is_end_stream() {
        return next.run(request).await;
    }
    let cut = Arc::new(AtomicBool::new(false));
    let request = request
        .map(|body| Body::from_stream(MinRate::new(body.into_data_stream(), rule, cut.clone())));
    let response = next.run(request).await;
    if !cut.load(Ordering::SeqCst) {
        return response;
    }
    let mut too_slow =
        ApiError::request_too_slow(rule.min_bytes_per_sec, rule.window).into_response();
    let headers = too_slow.headers_mut();
    for (name, value) in response.headers() {
        let name_str = name.as_str();
        if name == header::LOCATION
            || name_str.starts_with("upload-")
            || name_str.starts_with("tus-")
        {
            headers.insert(name.clone(), value.clone());
        }
    }
    // The rest of the body is never read: the connection cannot carry another request.
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    too_slow
}

/// A body stream that ends with [`TooSlow`] when a window brings too few bytes.
struct MinRate {
    inner: BodyDataStream,
    rule: BodyRate,
    required: u64,
    /// Raised when the body was cut, for [`min_body_rate`] to answer 408.
    cut: Arc<AtomicBool>,
    /// The end of the current window; set at the first read.
    window_end: Option<Instant>,
    /// Bytes received in the current window.
    bytes: u64,
    /// When the last chunk was handed out: the time until the next read is the
    /// handler's, not the client's, and moves the window's end.
    returned_at: Option<Instant>,
    /// Wakes the reader at the window's end, made at the first wait.
    timer: Option<Pin<Box<Sleep>>>,
    /// The window ended short as a chunk came: the chunk is handed over (those
    /// bytes are the client's), and the next read ends the body.
    cut_next: bool,
    done: bool,
}

impl MinRate {
    fn new(inner: BodyDataStream, rule: BodyRate, cut: Arc<AtomicBool>) -> MinRate {
        MinRate {
            inner,
            rule,
            required: rule.per_window(),
            cut,
            window_end: None,
            bytes: 0,
            returned_at: None,
            timer: None,
            cut_next: false,
            done: false,
        }
    }

    /// Judges the window ended at `now`: a next window, or the cut.
    fn judge(&mut self, now: Instant) -> Result<(), TooSlow> {
        if self.bytes < self.required {
            self.cut.store(true, Ordering::SeqCst);
            return Err(TooSlow);
        }
        self.bytes = 0;
        self.window_end = Some(now + self.rule.window);
        Ok(())
    }
}

impl Stream for MinRate {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if this.cut_next {
            this.done = true;
            return Poll::Ready(Some(Err(axum::Error::new(TooSlow))));
        }
        let now = Instant::now();
        let mut end = *this.window_end.get_or_insert(now + this.rule.window);
        if let Some(at) = this.returned_at.take() {
            end += now.saturating_duration_since(at);
            this.window_end = Some(end);
        }
        loop {
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    this.bytes += chunk.len() as u64;
                    let now = Instant::now();
                    if now >= end && this.judge(now).is_err() {
                        this.cut_next = true;
                    }
                    this.returned_at = Some(now);
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Poll::Ready(other) => {
                    this.done = true;
                    return Poll::Ready(other);
                }
                Poll::Pending => {}
            }
            let timer = this
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(end)));
            if timer.deadline() != end {
                timer.as_mut().reset(end);
            }
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if let Err(too_slow) = this.judge(Instant::now()) {
                this.done = true;
                return Poll::Ready(Some(Err(axum::Error::new(too_slow))));
            }
            end = this.window_end.expect("set by judge");
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::channel::mpsc;
    use futures::StreamExt;

    use super::*;

    type Sender = mpsc::UnboundedSender<Result<Bytes, std::io::Error>>;

    /// 100 B/s over 1 s windows, on a body fed through the returned sender.
    fn body() -> (Sender, MinRate, Arc<AtomicBool>) {
        let (tx, rx) = mpsc::unbounded();
        let cut = Arc::new(AtomicBool::new(false));
        let rule = BodyRate {
            min_bytes_per_sec: 100,
            window: Duration::from_secs(1),
        };
        let body = MinRate::new(Body::from_stream(rx).into_data_stream(), rule, cut.clone());
        (tx, body, cut)
    }

    fn send(tx: &Sender, n: usize) {
        tx.unbounded_send(Ok(Bytes::from(vec![7; n]))).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_is_cut_at_the_end_of_its_window_after_what_came() {
        let (tx, mut body, cut) = body();
        let started = Instant::now();
        send(&tx, 30);
        assert_eq!(body.next().await.unwrap().unwrap().len(), 30);
        assert!(body.next().await.unwrap().is_err(), "cut");
        assert_eq!(started.elapsed(), Duration::from_secs(1));
        assert!(cut.load(Ordering::SeqCst));
        assert!(body.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_at_the_rate_is_never_cut() {
        let (tx, mut body, cut) = body();
        tokio::spawn(async move {
            for _ in 0..10 {
                send(&tx, 60);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        let mut received = 0;
        while let Some(chunk) = body.next().await {
            received += chunk.unwrap().len();
        }
        assert_eq!(received, 600);
        assert!(!cut.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn time_the_reader_spends_away_is_not_the_clients() {
        let (tx, mut body, cut) = body();
        send(&tx, 50);
        assert_eq!(body.next().await.unwrap().unwrap().len(), 50);
        // The handler writes for 5 s; the client had sent its next bytes meanwhile.
        send(&tx, 40);
        drop(tx);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(body.next().await.unwrap().unwrap().len(), 40);
        assert!(body.next().await.is_none());
        assert!(!cut.load(Ordering::SeqCst));
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_that_came_before_the_cut_are_handed_over_first() {
        let (tx, mut body, cut) = body();
        send(&tx, 10);
        assert_eq!(body.next().await.unwrap().unwrap().len(), 10);
        let late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(999)).await;
            send(&tx, 5);
            tokio::time::sleep(Duration::from_secs(10)).await;
        });
        assert_eq!(body.next().await.unwrap().unwrap().len(), 5);
        assert!(body.next().await.unwrap().is_err());
        assert!(cut.load(Ordering::SeqCst));
        late.abort();
    }
}
