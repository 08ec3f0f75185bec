//! `loudness` (docs/API.md, "Loudness"): every command that writes audio brings a quiet
//! and a loud source to the target integrated loudness, within 1 LU, with the true peak
//! at or under −1 dBTP, as ffmpeg's BS.1770 meter (`ebur128`) measures the output.

use serde_json::{json, Value};

use crate::clips::ffmpeg;
use crate::helpers::*;

/// A 3 s, 96×64 test pattern with stereo pink noise at `amplitude` over a 220 Hz tone
/// at `tone` (volume): quiet at 0.02 and no tone, loud at 0.9 with a strong tone.
fn source(amplitude: f64, tone: f64, name: &str) -> Vec<u8> {
    let noise = format!("anoisesrc=d=3:c=pink:a={amplitude}");
    let sine = format!("sine=f=220:d=3,volume={tone}");
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=96x64:r=10:d=3",
            "-f",
            "lavfi",
            "-i",
            &noise,
            "-f",
            "lavfi",
            "-i",
            &sine,
            "-filter_complex",
            "[1][2]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo[a]",
            "-map",
            "0:v",
            "-map",
            "[a]",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-b:a",
            "192k",
            "-f",
            "mp4",
        ],
        name,
    )
}

/// Integrated loudness (LUFS) and true peak (dBTP) of the first audio track of `input`
/// (a path or URL), from the summary ffmpeg's `ebur128` prints.
async fn loudness_of(input: &str) -> (f64, f64) {
    let out = tokio::process::Command::new("ffmpeg")
        .args(["-nostdin", "-nostats", "-hide_banner", "-i", input])
        .args([
            "-map",
            "0:a:0",
            "-af",
            "ebur128=peak=true",
            "-f",
            "null",
            "-",
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "measuring {input}");
    let log = String::from_utf8_lossy(&out.stderr);
    let summary = &log[log.rfind("Summary:").expect("the meter's summary")..];
    let value = |label: &str| -> f64 {
        let at = summary
            .find(label)
            .unwrap_or_else(|| panic!("{label} in {summary}"));
        summary[at + label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (value("I:"), value("Peak:"))
}

#[tokio::test]
async fn every_command_that_writes_audio_brings_quiet_and_loud_sources_to_the_target() {
    let app = spawn_app().await;
    let sources = [
        ("quiet.mp4", source(0.02, 0.0, "quiet.mp4")),
        ("loud.mp4", source(0.9, 4.0, "loud.mp4")),
    ];
    let commands: [(&str, Value); 9] = [
        ("video-to-audio", json!({})),
        ("video-to-audio", json!({"format": "opus"})),
        ("video-to-audio", json!({"format": "mp3"})),
        ("video-to-webm", json!({})),
        ("video-to-ogg", json!({})),
        ("trim-video", json!({"start": 0.5})),
        ("modify-video-speed", json!({"speed": 1.5})),
        ("text", json!({"text": "Hi"})),
        ("video-to-hls", json!({})),
    ];
    for (name, bytes) in sources {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let (before, _) = loudness_of(path.to_str().unwrap()).await;
        let src = app.fixtures.add(name, bytes);
        for (command, options) in &commands {
            let mut options = options.clone();
            options["loudness"] = json!(-16);
            let doc = app
                .run_done(edit(&src, &[command], Some(options.clone())))
                .await;
            let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
            let out = &app.download_all(&doc).await[0];
            let input = match *command {
                "video-to-hls" => url.to_string(),
                _ => out.to_str().unwrap().to_string(),
            };
            let (integrated, peak) = loudness_of(&input).await;
            let what = format!("{name} ({before:.1} LUFS) through {command} {options}");
            // The figures of docs/PERFORMANCE.md (`--nocapture`).
            println!("{what}: {integrated} LUFS, true peak {peak} dBTP");
            assert!(
                (integrated + 16.0).abs() <= 1.0,
                "{what}: {integrated} LUFS"
            );
            assert!(peak <= -1.0, "{what}: true peak {peak} dBTP");
        }
    }

    // Out of range: refused at creation, at the option.
    let src = app.fixtures.add("q.mp4", source(0.02, 0.0, "q.mp4"));
    for bad in [-71.0, -4.0] {
        let response = app
            .post_edit(edit(
                &src,
                &["video-to-audio"],
                Some(json!({"loudness": bad})),
            ))
            .await;
        assert_eq!(response.status(), 422);
        let body: Value = response.json().await.unwrap();
        assert_eq!(
            body["errors"][0]["source"]["pointer"], "/options/loudness",
            "{body}"
        );
    }
}
