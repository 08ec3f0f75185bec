//! An animation bomb — a few hundred KB of tiny frames on a huge screen — fails
//! `too_much_work` from its headers within seconds, in every command that takes it,
//! and leaves the service working.

use std::time::{Duration, Instant};

use crate::fixtures;
use crate::helpers::{edit, spawn_app};

/// A GIF of `frames` 1×1 frames (a few bytes of LZW each) on a `side`×`side` screen,
/// each shown for 20 ms: every viewer composites `frames` whole screens.
fn gif_bomb(side: u16, frames: usize) -> Vec<u8> {
    let mut b = b"GIF89a".to_vec();
    b.extend_from_slice(&side.to_le_bytes());
    b.extend_from_slice(&side.to_le_bytes());
    // A global table of two colours: red and blue.
    b.extend_from_slice(&[0x80, 0, 0, 255, 0, 0, 0, 0, 255]);
    for _ in 0..frames {
        b.extend_from_slice(&[0x21, 0xF9, 4, 0, 2, 0, 0, 0]);
        b.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0]);
    }
    b.push(0x3B);
    b
}

#[tokio::test]
async fn a_gif_bomb_fails_too_much_work_within_seconds_in_every_command() {
    let app = spawn_app().await;
    // 20 000 frames of 2000×2000: 8·10¹⁰ pixels, twenty times the default limit, in
    // 460 KB — yet under the per-edit work budget (2·10¹¹).
    let bomb = gif_bomb(2000, 20_000);
    assert!(bomb.len() < 500_000, "{} bytes", bomb.len());
    let src = app.fixtures.add("bomb.gif", bomb);
    for command in [
        "gif-to-video",
        "resize-image",
        "image-to-webp",
        "image-to-video",
    ] {
        let started = Instant::now();
        let error = app.run_failed(edit(&src, &[command], None)).await;
        assert_eq!(error["code"], "too_much_work", "{command}: {error}");
        let detail = error["detail"].as_str().unwrap();
        assert!(
            detail.contains("20000 frames of 2000x2000") && detail.contains("4000 million"),
            "{command}: {detail}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{command} took {:?}",
            started.elapsed()
        );
    }
    // The service still works, and an ordinary animation passes the limit.
    let small = app.fixtures.add("small.gif", gif_bomb(64, 20));
    app.run_done(edit(&small, &["gif-to-video"], None)).await;
    let png = app.fixtures.add("ok.png", fixtures::png(10, 10));
    app.run_done(edit(&png, &["image-to-webp"], None)).await;
}
