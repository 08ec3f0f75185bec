//! `codec: av1` on `video-to-webm` (docs/API.md, "Video commands"): AV1 + Opus in
//! WebM, every frame there, the picture kept (SSIM against the source), an HDR source
//! tone-mapped and tagged BT.709 as with VP9; Chromium plays it.

use serde_json::json;

use crate::clips;
use crate::helpers::*;

/// SSIM ("All") of `output` against `source`, both decoded at the source's size.
fn ssim(source: &std::path::Path, output: &std::path::Path) -> f64 {
    let out = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-nostats", "-i"])
        .arg(output)
        .arg("-i")
        .arg(source)
        .args(["-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let at = log.rfind("All:").expect("ssim's summary");
    log[at + 4..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn av1_webm_keeps_every_frame_and_the_picture_with_opus_audio() {
    let app = spawn_app().await;
    let bytes = clips::clip("160x96", 10, 2.0, true, "mp4");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("a.mp4");
    std::fs::write(&source, &bytes).unwrap();
    let src = app.fixtures.add("a.mp4", bytes);
    let doc = app
        .run_done(edit(
            &src,
            &["video-to-webm"],
            Some(json!({"codec": "av1"})),
        ))
        .await;
    let out = &app.download_all(&doc).await[0];
    let probe = probe(out);
    assert!(probe["format"]["format_name"]
        .as_str()
        .unwrap()
        .contains("webm"));
    let video = video_stream(&probe);
    assert_eq!(video["codec_name"], "av1", "{probe}");
    assert_eq!(clips::frames(video), 20, "{probe}");
    assert_eq!(clips::audio_codec(&probe).as_deref(), Some("opus"));
    let similarity = ssim(&source, out);
    assert!(similarity > 0.9, "SSIM {similarity}");

    // Chromium plays it from its download URL, on a page of another origin.
    let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let seen = run_script("video_player.py", &[url]).await;
    assert!(seen["current_time"].as_f64().unwrap() > 1.2, "{seen}");
    assert_eq!(
        (seen["width"].as_u64(), seen["height"].as_u64()),
        (Some(160), Some(96)),
        "{seen}"
    );
    assert!(seen["decoded_frames"].as_u64().unwrap() >= 12, "{seen}");
    assert_eq!(seen["media_error"], serde_json::Value::Null, "{seen}");

    // An unknown codec is refused at creation, at the option.
    let response = app
        .post_edit(edit(
            &src,
            &["video-to-webm"],
            Some(json!({"codec": "h265"})),
        ))
        .await;
    assert_eq!(response.status(), 422);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["errors"][0]["source"]["pointer"], "/options/codec");
}
