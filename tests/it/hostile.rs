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

/// Runs ffmpeg to make a fixture file; returns its bytes.
pub fn ffmpeg_fixture(args: &[&str], name: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(name);
    let status = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y"])
        .args(args)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "making {name}");
    std::fs::read(out).unwrap()
}

#[tokio::test]
async fn files_that_point_elsewhere_never_read_local_files_or_reach_the_network() {
    let app = spawn_app().await;
    let canary = FixtureServer::start().await;
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let secret_url = format!("file://{}", secret.display());
    let canary_url = canary.url("stolen.ts");

    let playlist = format!(
        "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n{canary_url}\n#EXTINF:1,\n{secret_url}\n#EXT-X-ENDLIST\n"
    );
    let concat = format!(
        "ffconcat version 1.0\nfile '{}'\nfile '{canary_url}'\n",
        secret.display()
    );
    let mut ftyp_then_playlist = b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2".to_vec();
    ftyp_then_playlist.extend_from_slice(playlist.as_bytes());
    let mut avi_with_playlist = b"RIFF\x00\x10\x00\x00AVI LIST".to_vec();
    avi_with_playlist.extend_from_slice(playlist.as_bytes());
    let sdp = format!(
        "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=video {} RTP/AVP 96\n",
        canary.addr.port()
    );

    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "playlist.mp4",
            playlist.into_bytes(),
            "unsupported_input_format",
        ),
        (
            "concat.mov",
            concat.into_bytes(),
            "unsupported_input_format",
        ),
        // An AVI header is read by the AVI demuxer, which finds no AVI after it.
        ("avi.mp4", avi_with_playlist, "invalid_media"),
        ("stream.mp4", sdp.into_bytes(), "unsupported_input_format"),
        ("ftyp-playlist.mp4", ftyp_then_playlist, "invalid_media"),
    ];
    for (name, bytes, code) in cases {
        let src = app.fixtures.add(name, bytes);
        for command in ["video-to-webm", "extract-frames", "modify-video-speed"] {
            let error = app.run_failed(edit(&src, &[command], None)).await;
            assert_eq!(error["code"], code, "{name} {command}: {error}");
            assert!(!error.to_string().contains("TOPSECRET"));
        }
    }
    assert_eq!(canary.hits(), 0, "the canary was reached");
}

#[tokio::test]
async fn hostile_gifs_fail_fast_and_leave_the_service_working() {
    let app = spawn_app().await;
    // A GIF whose logical screen claims 60000×60000.
    let mut huge = fixtures::gif(8, 8);
    huge[6..8].copy_from_slice(&60000u16.to_le_bytes());
    huge[8..10].copy_from_slice(&60000u16.to_le_bytes());
    let src = app.fixtures.add("huge.gif", huge);
    let started = Instant::now();
    let error = app.run_failed(edit(&src, &["gif-to-video"], None)).await;
    assert!(
        ["video_too_large", "invalid_media"].contains(&error["code"].as_str().unwrap()),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    // Thousands of frames: refused by the frame limit before any decoding work.
    let many = ffmpeg_fixture(
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=red:s=8x8:r=50:d=60",
            "-f",
            "gif",
        ],
        "many.gif",
    );
    let app_limited = spawn_app_with(|c| c.max_video_frames = 1000).await;
    let src = app_limited.fixtures.add("many.gif", many);
    let started = Instant::now();
    let error = app_limited
        .run_failed(edit(&src, &["gif-to-video"], None))
        .await;
    assert_eq!(error["code"], "too_many_frames", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("3000"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));

    // Both services still work.
    let png = app.fixtures.add("ok.png", fixtures::png(10, 10));
    app.run_done(edit(&png, &["image-to-webp"], None)).await;
}

#[tokio::test]
async fn a_container_that_understates_its_duration_is_held_to_its_streams() {
    let app = spawn_app_with(|c| c.max_video_seconds = 2).await;
    let mut clip = ffmpeg_fixture(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=32x32:rate=10:duration=3",
            "-f",
            "mp4",
        ],
        "long.mp4",
    );
    // The movie header (mvhd, version 0) claims one tick; the track still lasts 3 s.
    let mvhd = clip.windows(4).position(|w| w == b"mvhd").unwrap();
    assert_eq!(clip[mvhd + 4], 0, "a version 0 mvhd");
    clip[mvhd + 20..mvhd + 24].copy_from_slice(&1u32.to_be_bytes());
    let src = app.fixtures.add("long.mp4", clip);
    let error = app.run_failed(edit(&src, &["video-to-webm"], None)).await;
    assert_eq!(error["code"], "video_too_long", "{error}");
    assert!(
        error["detail"].as_str().unwrap().contains("3.0 seconds"),
        "{error}"
    );
}
