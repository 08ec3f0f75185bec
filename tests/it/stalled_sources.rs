//! Sources that stall: the first-byte and minimum-speed rules end the fetch early with
//! `source_timeout`, such a source is retried once only, and fast sources never notice.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fixtures;
use crate::helpers::*;

/// Strict stall rules so that tests run in seconds: 1 s to the first byte, then at
/// least 1 KiB/s over each 2 s window. `--max-attempts` keeps its default of 5.
async fn spawn_strict_app() -> TestApp {
    spawn_app_with(|c| {
        c.fetch_first_byte_timeout_secs = 1;
        c.fetch_min_bytes_per_sec = 1024;
        c.fetch_min_speed_window_secs = 2;
    })
    .await
}

fn detail(error: &Value) -> &str {
    error["detail"].as_str().unwrap()
}

#[tokio::test]
async fn a_dripping_source_fails_within_its_window_and_is_tried_twice_at_most() {
    let app = spawn_strict_app().await;
    let started = Instant::now();
    let error = app
        .run_failed(edit(&app.fixtures.drip_url(), &["image-to-webp"], None))
        .await;
    let elapsed = started.elapsed();
    assert_eq!(error["code"], "source_timeout", "{error}");
    assert!(
        detail(&error).contains("slower than the minimum of 1024 bytes per second"),
        "{error}"
    );
    assert_eq!(
        app.fixtures.hits(),
        2,
        "a stalled source is retried once, not --max-attempts times"
    );
    // Two attempts of one window each (plus the 0.2 s to the first byte), a short
    // backoff and polling: far under the 120 s total timeout.
    assert!(elapsed < Duration::from_secs(9), "took {elapsed:?}");
}

#[tokio::test]
async fn a_source_that_sends_headers_and_then_nothing_fails_by_the_first_byte_rule() {
    let app = spawn_strict_app().await;
    let started = Instant::now();
    let error = app
        .run_failed(edit(&app.fixtures.stall_url(), &["image-to-webp"], None))
        .await;
    let elapsed = started.elapsed();
    assert_eq!(error["code"], "source_timeout", "{error}");
    assert!(
        detail(&error).contains("sent no data within 1 s of the request"),
        "{error}"
    );
    assert_eq!(app.fixtures.hits(), 2);
    assert!(elapsed < Duration::from_secs(6), "took {elapsed:?}");
}

#[tokio::test]
async fn fast_sources_are_untouched_by_strict_stall_rules() {
    let app = spawn_strict_app().await;
    let name = "fast.png";
    let src = app.fixtures.add(name, fixtures::png(64, 48));
    app.run_done(edit(&src, &["image-to-webp"], None)).await;
    // Headers after 0.5 s are within the 1 s first-byte limit, and a small body
    // completes long before its first speed window ends.
    app.run_done(edit(
        &app.fixtures.slow_url(name, 500),
        &["image-to-webp"],
        None,
    ))
    .await;
    assert_eq!(app.fixtures.hits(), 2, "each source was fetched once");
}

#[tokio::test]
async fn a_failing_server_keeps_the_usual_attempts_under_strict_stall_rules() {
    let app = spawn_app_with(|c| {
        c.fetch_first_byte_timeout_secs = 1;
        c.max_attempts = 3;
    })
    .await;
    let error = app
        .run_failed(edit(
            &app.fixtures.status_url(503),
            &["image-to-webp"],
            None,
        ))
        .await;
    assert_eq!(error["code"], "source_http_error", "{error}");
    assert_eq!(
        app.fixtures.hits(),
        3,
        "a 5xx is retried up to --max-attempts"
    );
}
