//! `ladder: auto` on `video-to-hls` (docs/API.md, "HLS and storyboards"): a still
//! picture costs fewer bytes than on the fixed ladder at nearly its SSIM (its
//! keyframes at segments), and a busy one keeps the fixed ladder's quality.

use serde_json::json;

use crate::helpers::*;

/// A 4 s 640×360 clip of `chain` (a lavfi source and filters), nearly lossless.
fn clip(chain: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clip.mp4");
    let status = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-f", "lavfi", "-i", chain])
        .args([
            "-t", "4", "-c:v", "libx264", "-crf", "10", "-preset", "veryfast",
        ])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(path).unwrap()
}

/// The bytes of the stream's one rendition (init section and segments) and its SSIM
/// against `source`.
async fn rendition(app: &TestApp, source: &[u8], ladder: &str) -> (u64, f64) {
    let src = app
        .fixtures
        .add(&format!("{ladder}-{}.mp4", source.len()), source.to_vec());
    let options = json!({ "ladder": ladder });
    let doc = app
        .run_done(edit(&src, &["video-to-hls"], Some(options)))
        .await;
    let master = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("source.mp4");
    std::fs::write(&local, source).unwrap();
    // ffmpeg reads the stream from the master URL alone; its bytes from the playlist.
    let copy = dir.path().join("copy.mkv");
    let out = tokio::process::Command::new("ffmpeg")
        .args([
            "-nostdin", "-v", "error", "-i", master, "-map", "0:v:0", "-c", "copy",
        ])
        .arg(&copy)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::metadata(&copy).unwrap().len();
    let out = tokio::process::Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-nostats", "-i"])
        .arg(&copy)
        .arg("-i")
        .arg(&local)
        .args(["-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"])
        .output()
        .await
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let at = log.rfind("All:").expect("ssim's summary");
    let ssim = log[at + 4..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (bytes, ssim)
}

#[tokio::test]
async fn a_still_picture_takes_fewer_bytes_at_nearly_the_same_ssim_and_a_busy_one_keeps_its_quality(
) {
    let app = spawn_app().await;
    let still = clip("smptehdbars=s=640x360:r=25,noise=alls=12:allf=0,format=yuv420p");
    let (fixed_bytes, fixed_ssim) = rendition(&app, &still, "fixed").await;
    let (auto_bytes, auto_ssim) = rendition(&app, &still, "auto").await;
    // Its keyframes at segments, not every 2 s: one in 4 s where the fixed has two.
    assert!(
        (auto_bytes as f64) < fixed_bytes as f64 * 0.75,
        "still: {auto_bytes} bytes fitted, {fixed_bytes} fixed"
    );
    assert!(
        auto_ssim >= fixed_ssim - 0.005,
        "still: SSIM {auto_ssim} fitted, {fixed_ssim} fixed"
    );

    let busy = clip("testsrc2=s=640x360:r=25,noise=alls=20:allf=t+u,format=yuv420p");
    let (_, fixed_ssim) = rendition(&app, &busy, "fixed").await;
    let (_, auto_ssim) = rendition(&app, &busy, "auto").await;
    assert!(
        auto_ssim >= fixed_ssim - 0.005,
        "busy: SSIM {auto_ssim} fitted, {fixed_ssim} fixed"
    );
}
