//! x264 re-encodes in chunks through the whole service: `modify-video-speed` of a source
//! it cannot copy (4:4:4 H.264), `watermark` on a video and `trim-video` of a part it
//! must re-encode, each held to the same edit on
//! an app that never splits (`--min-chunk-work 0`) and the speed change also to its
//! recipe run by hand: every frame once at the same times, the audio as long, SSIM
//! within 0.003 and size within 5 % (docs/API.md, "x264 re-encodes in chunks").

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::clips::{audio_end, video_packets};
use crate::helpers::*;

const SQUARE_PIXELS: &str =
    "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1";
const EVEN_SIZE: &str = "scale='max(2,trunc(iw/2)*2)':'max(2,trunc(ih/2)*2)'";

/// A 320x240 MP4 of 4 s at 25 fps: a test pattern for 1 s, a fractal zoom for 2 s,
/// noisy bars for 1 s (two hard cuts, where x264 puts keyframes of its own), with a
/// tone; H.264 in 4:4:4 (which `modify-video-speed` cannot copy) and AAC.
fn clip_with_cuts(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("cuts.mp4");
    let graph = "testsrc2=s=320x240:r=25:d=1[a];\
         mandelbrot=s=320x240:r=25,trim=duration=2,setpts=PTS-STARTPTS[b];\
         smptebars=s=320x240:r=25:d=1,noise=alls=20:allf=t[c];\
         [a][b][c]concat=n=3,format=yuv444p[v]";
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-filter_complex", graph])
        .args(["-f", "lavfi", "-i", "sine=frequency=300:duration=4"])
        .args(["-map", "[v]", "-map", "0:a", "-c:v", "libx264", "-preset"])
        .args(["medium", "-c:a", "aac", "-shortest", "-f", "mp4"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    path
}

/// Mean SSIM of `encoded` against `source`, whose frames are first given `retime`.
fn ssim(encoded: &Path, source: &Path, retime: &str) -> f64 {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-i"])
        .arg(encoded)
        .arg("-i")
        .arg(source)
        .arg("-lavfi")
        .arg(format!("[1:v]{retime}[ref];[0:v][ref]ssim"))
        .args(["-f", "null", "-"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    let all = log.rsplit("All:").next().expect("an SSIM line");
    all.split_whitespace().next().unwrap().parse().unwrap()
}

/// `chunked` held to `whole` (one process): its `frames` frames once at the same
/// times, each `frame` seconds after the one before; the audio as long; SSIM and size; a cut of its
/// own (a keyframe where the single-process encode has none); its index first.
fn assert_like_one_process(
    what: &str,
    (chunked, whole): (&Path, &Path),
    (frames, frame): (usize, f64),
    q: (f64, f64),
) {
    let (packets, whole_packets) = (video_packets(chunked), video_packets(whole));
    assert_eq!(
        packets.len(),
        frames,
        "{what}: every frame of the source once"
    );
    let times: Vec<f64> = packets.iter().map(|p| p.0).collect();
    let whole_times: Vec<f64> = whole_packets.iter().map(|p| p.0).collect();
    assert_eq!(times, whole_times, "{what}: the single-process frame times");
    let steady = times
        .windows(2)
        .all(|w| (w[1] - w[0] - frame).abs() < 0.002);
    assert!(steady, "{what}: continuous: {times:?}");
    let cut = packets.iter().zip(&whole_packets).any(|(c, w)| c.1 && !w.1);
    assert!(
        cut,
        "{what}: split, a keyframe of its own where a chunk starts"
    );
    let bytes = std::fs::read(chunked).unwrap();
    let at = |tag: &[u8]| bytes.windows(4).position(|w| w == tag).unwrap();
    assert!(
        at(b"moov") < at(b"mdat"),
        "{what}: the index first (+faststart)"
    );
    let (audio, whole_audio) = (audio_end(chunked), audio_end(whole));
    assert!(
        (audio - whole_audio).abs() < 0.03 && audio > frames as f64 * frame - 0.1,
        "{what}: audio to {audio} s, {whole_audio} s in one process"
    );
    assert!(
        (q.0 - q.1).abs() <= 0.003,
        "{what}: SSIM {} chunked, {} in one process",
        q.0,
        q.1
    );
    let size = std::fs::metadata(chunked).unwrap().len() as f64;
    let whole_size = std::fs::metadata(whole).unwrap().len() as f64;
    assert!(
        (size / whole_size - 1.0).abs() <= 0.05,
        "{what}: {size} bytes chunked, {whole_size} in one process"
    );
}

/// An app that splits x264 encodes on any machine of two cores or more (a chunk a
/// core, no least work), and one that never splits.
async fn split_and_whole_apps() -> (TestApp, TestApp) {
    let chunked = spawn_app_with(|c| {
        c.chunking.min_chunk_work = 1;
        c.chunking.x264_cores_per_chunk = 1;
    })
    .await;
    let whole = spawn_app_with(|c| c.chunking.min_chunk_work = 0).await;
    (chunked, whole)
}

#[tokio::test]
async fn chunked_x264_speed_changes_and_watermarks_match_the_single_process_encode() {
    let dir = tempfile::tempdir().unwrap();
    let source = clip_with_cuts(dir.path());
    let (chunked, whole) = split_and_whole_apps().await;
    let logo = image::RgbaImage::from_pixel(60, 30, image::Rgba([255, 40, 40, 200]));
    let mut png = std::io::Cursor::new(Vec::new());
    logo.write_to(&mut png, image::ImageFormat::Png).unwrap();
    let mut outputs = Vec::new();
    for app in [&chunked, &whole] {
        let src = app
            .fixtures
            .add("cuts.mp4", std::fs::read(&source).unwrap());
        let overlay = app.fixtures.add("logo.png", png.get_ref().clone());
        let mut speed = edit(&src, &["modify-video-speed"], Some(json!({"speed": 1.5})));
        speed["assets"][0]["type"] = json!("video");
        let mut mark = edit(&src, &["watermark"], Some(json!({"overlay": overlay})));
        mark["assets"][0]["type"] = json!("video");
        let faster = app.download_all(&app.run_done(speed).await).await.remove(0);
        let marked = app.download_all(&app.run_done(mark).await).await.remove(0);
        outputs.push((faster, marked));
    }
    let [(faster, marked), (faster_whole, marked_whole)] = [outputs.remove(0), outputs.remove(0)];

    // The speed change's recipe by hand, in one process.
    let by_hand = dir.path().join("by-hand.mp4");
    let filter =
        format!("{SQUARE_PIXELS},setpts=PTS/1.5,fps=75/2,{EVEN_SIZE},setsar=1,format=yuv420p");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&source)
        .args([
            "-map",
            "0:v:0",
            "-map",
            "0:a:0",
            "-vf",
            &filter,
            "-fps_mode",
            "vfr",
        ])
        .args(["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"])
        .args(["-af", "atempo=1.5", "-c:a", "aac", "-b:a", "128k"])
        .args(["-movflags", "+faststart", "-f", "mp4"])
        .arg(&by_hand)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(video_packets(&faster_whole), video_packets(&by_hand));

    let retimed = "setpts=PTS/1.5";
    let q = (
        ssim(&faster, &source, retimed),
        ssim(&by_hand, &source, retimed),
    );
    let speed = (faster.as_path(), by_hand.as_path());
    assert_like_one_process("modify-video-speed", speed, (100, 1.0 / 37.5), q);
    let same = "null";
    let q = (
        ssim(&marked, &source, same),
        ssim(&marked_whole, &source, same),
    );
    let mark = (marked.as_path(), marked_whole.as_path());
    assert_like_one_process("watermark", mark, (100, 0.04), q);
}

#[tokio::test]
async fn a_chunked_trim_matches_the_single_process_trim() {
    let dir = tempfile::tempdir().unwrap();
    let source = clip_with_cuts(dir.path());
    let (chunked, whole) = split_and_whole_apps().await;
    // From the frame shown at 0.53 s (the 14th, at 0.52 s) to 3.3 s: 2.78 s, so the
    // 70 frames starting before it; 4:4:4, so re-encoded. And from 0.3 s (the 8th frame, at 0.28 s) to the end.
    let spans = [json!({"start": 0.53, "end": 3.3}), json!({"start": 0.3})];
    let mut outputs = Vec::new();
    for app in [&chunked, &whole] {
        let src = app
            .fixtures
            .add("cuts.mp4", std::fs::read(&source).unwrap());
        for span in &spans {
            let mut trim = edit(&src, &["trim-video"], Some(span.clone()));
            trim["assets"][0]["type"] = json!("video");
            outputs.push(app.download_all(&app.run_done(trim).await).await.remove(0));
        }
    }
    let parts = [("0.53 to 3.3", 13, 70), ("0.3 to the end", 7, 93)];
    for (i, (what, first, frames)) in parts.into_iter().enumerate() {
        let (split, single) = (&outputs[i], &outputs[i + spans.len()]);
        let frame_range = format!(
            "trim=start_frame={first}:end_frame={},setpts=PTS-STARTPTS",
            first + frames
        );
        let q = (
            ssim(split, &source, &frame_range),
            ssim(single, &source, &frame_range),
        );
        let what = format!("trim-video {what}");
        let files = (split.as_path(), single.as_path());
        assert_like_one_process(&what, files, (frames, 0.04), q);
    }
}

#[tokio::test]
async fn a_chunked_trim_starts_sound_that_begins_late_where_one_process_does() {
    let dir = tempfile::tempdir().unwrap();
    let source = clip_with_cuts(dir.path());
    // The same clip, its tone moved 0.6 s later and ending before the picture does: a
    // part from 0.3 s has 0.3 s of silence before its sound.
    let late = dir.path().join("late.mp4");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&source)
        .args(["-itsoffset", "0.6", "-t", "3.3", "-i"])
        .arg(&source)
        .args(["-map", "0:v", "-map", "1:a", "-c", "copy"])
        .arg(&late)
        .status()
        .unwrap();
    assert!(status.success());
    let (chunked, whole) = split_and_whole_apps().await;
    let mut outputs = Vec::new();
    for app in [&chunked, &whole] {
        let src = app.fixtures.add("late.mp4", std::fs::read(&late).unwrap());
        let mut trim = edit(&src, &["trim-video"], Some(json!({"start": 0.3})));
        trim["assets"][0]["type"] = json!("video");
        outputs.push(app.download_all(&app.run_done(trim).await).await.remove(0));
    }
    let audio_start = |path: &Path| {
        let probe = probe(path);
        let streams = probe["streams"].as_array().unwrap();
        let audio = streams.iter().find(|s| s["codec_type"] == "audio").unwrap();
        audio["start_time"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let (split, single) = (audio_start(&outputs[0]), audio_start(&outputs[1]));
    assert!(
        single > 0.25 && (split - single).abs() < 0.002,
        "the sound starts at {split} s in chunks, {single} s in one process"
    );
    let (packets, whole_packets) = (video_packets(&outputs[0]), video_packets(&outputs[1]));
    assert_eq!(packets.len(), 93, "every frame from 0.3 s");
    let cut = packets.iter().zip(&whole_packets).any(|(c, w)| c.1 && !w.1);
    assert!(cut, "split, a keyframe of its own where a chunk starts");
}
