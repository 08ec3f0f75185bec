//! `modify-video-speed` through the real service: an H.264 stream the output can
//! keep is copied with its times scaled, anything else re-encoded; lengths and frame
//! counts are exact either way.

use std::path::Path;
use std::process::Command as Process;

use serde_json::json;

use crate::clips::*;
use crate::helpers::*;

/// The sizes of the first video stream's packets, in order: the same list means the
/// same coded frames.
fn packet_sizes(path: &Path) -> Vec<String> {
    let out = Process::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "packet=size", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// The video stream's own duration, in seconds.
fn video_seconds(probe: &serde_json::Value) -> f64 {
    video_stream(probe)["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn modify_video_speed_retimes_video_and_audio() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.mp4", mp4("160x120", 25, 2.0, true));
    for (speed, expected) in [(2.0, 1.0), (0.5, 4.0)] {
        let out = run_and_probe(
            &app,
            &src,
            &["modify-video-speed"],
            Some(json!({ "speed": speed })),
        )
        .await;
        let (path, probe) = &out[0];
        assert_eq!(path.extension().unwrap(), "mp4");
        let video = video_stream(probe);
        assert_eq!(video["codec_name"], "h264");
        assert_eq!(video["pix_fmt"], "yuv420p");
        assert_eq!(dims(video), (160, 120));
        assert_eq!(audio_codec(probe).as_deref(), Some("aac"));
        let found = duration(probe);
        // Within one output frame (1/25 s retimed), plus an AAC frame of padding.
        let frame = 1.0 / (25.0 * speed);
        assert!(
            (found - expected).abs() <= frame + 0.03,
            "speed {speed}: {found} s, expected {expected} s"
        );
        let video_secs: f64 = video["duration"].as_str().unwrap().parse().unwrap();
        assert!(
            (video_secs - expected).abs() <= frame + 1e-3,
            "{video_secs}"
        );
        assert_eq!(frames(video), 50, "speed {speed} keeps every frame");
    }
}

#[tokio::test]
async fn modify_video_speed_works_without_audio_and_defaults_to_speed_one() {
    let app = spawn_app().await;
    let src = app.fixtures.add("s.mp4", mp4("96x64", 20, 2.0, false));
    let out = run_and_probe(
        &app,
        &src,
        &["modify-video-speed"],
        Some(json!({ "speed": 4 })),
    )
    .await;
    let probe = &out[0].1;
    assert_eq!(audio_codec(probe), None);
    assert!((duration(probe) - 0.5).abs() <= 1.0 / 60.0, "{probe}");
    // 20 fps × 4 = 80 fps is lowered to 60.
    assert_eq!(frames(video_stream(probe)), 30);

    let out = run_and_probe(&app, &src, &["modify-video-speed"], None).await;
    assert!((duration(&out[0].1) - 2.0).abs() < 0.06);
}

#[tokio::test]
async fn an_h264_stream_with_b_frames_is_copied_and_retimed_exactly() {
    let app = spawn_app().await;
    let source = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=160x120:rate=25:duration=2",
            "-f",
            "lavfi",
            "-i",
            "sine=duration=2",
            "-c:v",
            "libx264",
            "-preset",
            "fast",
            "-bf",
            "2",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-shortest",
            "-f",
            "mp4",
        ],
        "bframes.mp4",
    );
    let (source_packets, has_b_frames) = with_file(&source, |p| {
        let stream = video_stream(&probe(p)).clone();
        (
            packet_sizes(p),
            stream["has_b_frames"].as_u64().unwrap_or(0),
        )
    });
    assert!(has_b_frames > 0, "the fixture has B-frames");
    let src = app.fixtures.add("bframes.mp4", source);
    // 25 fps × 2.4 is 60 fps, the most a copy keeps (× 3 would be re-encoded).
    for (speed, expected) in [(2.0, 1.0), (0.5, 4.0), (2.4, 2.0 / 2.4)] {
        let out = run_and_probe(
            &app,
            &src,
            &["modify-video-speed"],
            Some(json!({ "speed": speed })),
        )
        .await;
        let (path, probe) = &out[0];
        assert_eq!(packet_sizes(path), source_packets, "speed {speed}: copied");
        let video = video_stream(probe);
        assert_eq!(frames(video), 50, "speed {speed}");
        let found = video_seconds(probe);
        assert!((found - expected).abs() < 1e-3, "speed {speed}: {found} s");
        assert_eq!(audio_codec(probe).as_deref(), Some("aac"));
        let whole = duration(probe);
        assert!((whole - expected).abs() <= 0.03, "speed {speed}: {whole} s");
    }
}

#[tokio::test]
async fn a_variable_rate_h264_stream_is_copied_with_every_frame_time_scaled() {
    let app = spawn_app().await;
    let vfr = vfr_mp4();
    let (source_packets, source_seconds) =
        with_file(&vfr, |p| (packet_sizes(p), video_seconds(&probe(p))));
    let src = app.fixtures.add("vfr.mp4", vfr);
    let out = run_and_probe(
        &app,
        &src,
        &["modify-video-speed"],
        Some(json!({ "speed": 2 })),
    )
    .await;
    let (path, probe) = &out[0];
    assert_eq!(packet_sizes(path), source_packets, "copied");
    assert_eq!(frames(video_stream(probe)), 10);
    let found = video_seconds(probe);
    let expected = source_seconds / 2.0;
    assert!(
        (found - expected).abs() < 1e-3,
        "{found} s, not {expected} s"
    );
}
