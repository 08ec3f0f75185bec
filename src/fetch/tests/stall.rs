//! The stall rules against sources that trickle, stop or keep pace.

use super::*;

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
