//! Tiny video fixtures made with ffmpeg at test time, and the probes that check the
//! outputs of the video commands.

use std::path::Path;
use std::process::Command as Process;

use serde_json::Value;

use crate::helpers::*;

/// Runs ffmpeg with `args` writing to a temp file named `out_name`; returns its bytes.
pub fn ffmpeg(args: &[&str], out_name: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(out_name);
    let status = Process::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y"])
        .args(args)
        .arg(&out)
        .status()
        .expect("ffmpeg runs");
    assert!(status.success(), "making fixture {out_name}");
    std::fs::read(&out).unwrap()
}

/// An H.264 clip of testsrc2 at `size` and `rate` for `secs`, with a 440 Hz tone if
/// `audio`, in `container` (`mp4` or `mov`).
pub fn clip(size: &str, rate: u32, secs: f64, audio: bool, container: &str) -> Vec<u8> {
    encoded_clip(size, rate, secs, audio, &[], container)
}

/// A silent [`clip`] with the ffmpeg video filter `filter` applied before encoding.
pub fn filtered_clip(size: &str, rate: u32, secs: f64, filter: &str, container: &str) -> Vec<u8> {
    encoded_clip(size, rate, secs, false, &["-vf", filter], container)
}

fn encoded_clip(
    size: &str,
    rate: u32,
    secs: f64,
    audio: bool,
    filter: &[&str],
    container: &str,
) -> Vec<u8> {
    let video = format!("testsrc2=size={size}:rate={rate}:duration={secs}");
    let tone = format!("sine=frequency=440:duration={secs}");
    let mut args = vec!["-f", "lavfi", "-i", &video];
    if audio {
        args.extend(["-f", "lavfi", "-i", &tone, "-c:a", "aac"]);
    }
    args.extend(filter);
    args.extend([
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-f",
        container,
    ]);
    ffmpeg(&args, &format!("clip.{container}"))
}

pub fn mp4(size: &str, rate: u32, secs: f64, audio: bool) -> Vec<u8> {
    clip(size, rate, secs, audio, "mp4")
}

/// An animated GIF of the lavfi `source`.
pub fn lavfi_gif(source: &str, name: &str) -> Vec<u8> {
    ffmpeg(&["-f", "lavfi", "-i", source, "-f", "gif"], name)
}

/// A 99×61 clip at 10 fps lasting `secs`: 4:4:4 is the only way x264 writes odd sizes.
pub fn odd_size_mp4(secs: f64) -> Vec<u8> {
    let source = format!("testsrc2=size=99x61:rate=10:duration={secs}");
    let args = [
        "-f",
        "lavfi",
        "-i",
        &source,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
    ];
    ffmpeg(
        &[&args[..], &["-pix_fmt", "yuv444p", "-f", "mp4"]].concat(),
        "odd.mp4",
    )
}

/// Writes `bytes` to a temp file and hands its path to `f`.
pub fn with_file<T>(bytes: &[u8], f: impl FnOnce(&Path) -> T) -> T {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input");
    std::fs::write(&path, bytes).unwrap();
    f(&path)
}

pub fn dims(stream: &Value) -> (u64, u64) {
    (
        stream["width"].as_u64().unwrap(),
        stream["height"].as_u64().unwrap(),
    )
}

pub fn streams_of<'a>(probe: &'a Value, kind: &str) -> Vec<&'a Value> {
    probe["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["codec_type"] == kind)
        .collect()
}

pub fn audio_codec(probe: &Value) -> Option<String> {
    streams_of(probe, "audio")
        .first()
        .map(|s| s["codec_name"].as_str().unwrap().to_string())
}

pub fn duration(probe: &Value) -> f64 {
    probe["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn frames(stream: &Value) -> u64 {
    stream["nb_read_frames"].as_str().unwrap().parse().unwrap()
}

/// Runs `commands` on one source and probes every output.
pub async fn run_and_probe(
    app: &TestApp,
    src: &str,
    commands: &[&str],
    options: Option<Value>,
) -> Vec<(std::path::PathBuf, Value)> {
    let doc = app.run_done(edit(src, commands, options)).await;
    app.download_all(&doc)
        .await
        .into_iter()
        .map(|path| {
            let probe = probe(&path);
            (path, probe)
        })
        .collect()
}

/// A 96x64 H.264 MP4 whose frames come at uneven intervals: 5 at 25 fps, then 5 at
/// 10 fps.
pub fn vfr_mp4() -> Vec<u8> {
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=96x64:rate=25:duration=0.4",
            "-vf",
            "setpts='if(lt(N,5),N*0.04,0.2+(N-5)*0.1)/TB'",
            "-fps_mode",
            "vfr",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-f",
            "mp4",
        ],
        "vfr.mp4",
    )
}

/// When each frame of the first video stream starts, in seconds (ffprobe's reading).
pub fn frame_starts(path: &Path) -> Vec<f64> {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args(["frame=pts_time", "-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "ffprobe reads {}", path.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .split(['\n', ','])
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// ffprobe's `-of csv=p=0` answer for `args` on `path`: one line per entry, the
/// trailing comma of a short entry dropped, empty lines left out.
pub fn ffprobe_csv(path: &Path, args: &[&str]) -> Vec<String> {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error"])
        .args(args)
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "ffprobe reads {}", path.display());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches(',').to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Video packets as (presentation time, keyframe), in presentation order.
pub fn video_packets(path: &Path) -> Vec<(f64, bool)> {
    let entries = [
        "-select_streams",
        "v:0",
        "-show_entries",
        "packet=pts_time,flags",
    ];
    let mut packets: Vec<(f64, bool)> = ffprobe_csv(path, &entries)
        .iter()
        .map(|l| {
            let (pts, flags) = l.split_once(',').unwrap();
            (pts.parse().unwrap(), flags.starts_with('K'))
        })
        .collect();
    packets.sort_by(|a, b| a.0.total_cmp(&b.0));
    packets
}

/// Where the audio ends, in seconds.
pub fn audio_end(path: &Path) -> f64 {
    let entries = [
        "-select_streams",
        "a:0",
        "-show_entries",
        "packet=pts_time,duration_time",
    ];
    ffprobe_csv(path, &entries)
        .iter()
        .map(|l| {
            let (pts, duration) = l.split_once(',').unwrap();
            pts.parse::<f64>().unwrap() + duration.parse::<f64>().unwrap()
        })
        .fold(0.0, f64::max)
}
