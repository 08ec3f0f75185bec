//! Hostile input: every bad file or source ends its edit `failed` with a code, fast,
//! and the service keeps working.

use std::time::{Duration, Instant};

use crate::fixtures;
use crate::helpers::*;

/// A PNG whose header claims `w`×`h` but that carries almost no data.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut png = fixtures::png(4, 4);
    // IHDR data starts at byte 16: width, height (big-endian), then its CRC at 29..33.
    png[16..20].copy_from_slice(&w.to_be_bytes());
    png[20..24].copy_from_slice(&h.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    png
}

/// A JPEG whose SOF header claims `w`×`h`.
fn jpeg_claiming(w: u16, h: u16) -> Vec<u8> {
    let mut jpeg = fixtures::jpeg(8, 8);
    let sof = jpeg
        .windows(2)
        .position(|m| m == [0xFF, 0xC0])
        .expect("baseline SOF0");
    // FFC0, length (2), precision (1), height (2), width (2).
    jpeg[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    jpeg[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    jpeg
}

/// An extended (VP8X) WebP whose canvas claims `w`×`h`.
fn webp_claiming(w: u32, h: u32) -> Vec<u8> {
    let mut chunk = b"VP8X".to_vec();
    chunk.extend_from_slice(&10u32.to_le_bytes());
    chunk.extend_from_slice(&[0, 0, 0, 0]); // flags + reserved
    chunk.extend_from_slice(&(w - 1).to_le_bytes()[..3]);
    chunk.extend_from_slice(&(h - 1).to_le_bytes()[..3]);
    let mut webp = b"RIFF".to_vec();
    webp.extend_from_slice(&((4 + chunk.len()) as u32).to_le_bytes());
    webp.extend_from_slice(b"WEBP");
    webp.extend_from_slice(&chunk);
    webp
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[tokio::test]
async fn huge_image_headers_fail_fast_without_decoding() {
    let app = spawn_app().await;
    for (name, bytes) in [
        ("huge.png", png_claiming(60000, 60000)),
        ("huge.jpg", jpeg_claiming(60000, 60000)),
        ("huge.webp", webp_claiming(60000, 60000)),
    ] {
        let src = app.fixtures.add(name, bytes);
        for command in ["resize-image", "image-to-webp", "image-to-video"] {
            let started = Instant::now();
            let error = app.run_failed(edit(&src, &[command], None)).await;
            assert_eq!(
                error["code"], "image_too_large",
                "{name} {command}: {error}"
            );
            assert!(
                error["detail"].as_str().unwrap().contains("60000"),
                "{error}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{name} took {:?}",
                started.elapsed()
            );
        }
    }
    // The service is still fine.
    let src = app.fixtures.add("ok.png", fixtures::png(10, 10));
    app.run_done(edit(&src, &["image-to-webp"], None)).await;
}

#[tokio::test]
async fn a_dripping_source_is_cut_off_by_the_total_timeout() {
    let app = spawn_app_with(|c| {
        c.fetch_timeout_secs = 1;
        c.max_attempts = 1;
    })
    .await;
    let started = Instant::now();
    let error = app
        .run_failed(edit(&app.fixtures.drip_url(), &["image-to-webp"], None))
        .await;
    assert_eq!(error["code"], "source_timeout", "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn an_endless_source_is_cut_off_by_the_byte_cap() {
    let app = spawn_app_with(|c| c.max_source_bytes = 1024 * 1024).await;
    let error = app
        .run_failed(edit(&app.fixtures.endless_url(), &["image-to-webp"], None))
        .await;
    assert_eq!(error["code"], "source_too_large", "{error}");
    assert_eq!(
        app.fixtures.hits(),
        1,
        "a size violation is final, not retried"
    );
}

#[tokio::test]
async fn a_storage_write_error_fails_the_edit_not_the_process() {
    let app = spawn_app_with(|c| c.max_attempts = 2).await;
    // A file where the outputs' directory should be: every write fails (even as root).
    std::fs::write(app.data_dir.path().join("files/edits"), b"in the way").unwrap();
    let src = app.fixtures.add("a.png", fixtures::png(10, 10));
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "storage_error", "{error}");
    assert!(
        !error["detail"].as_str().unwrap().contains("files/edits"),
        "no internal paths: {error}"
    );

    // Once the obstacle is gone the same service stores fine.
    std::fs::remove_file(app.data_dir.path().join("files/edits")).unwrap();
    app.run_done(edit(&src, &["image-to-webp"], None)).await;
}
