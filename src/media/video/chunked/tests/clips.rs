//! The clips the chunked encodes are tested on beside `testutil::clip_with_cuts`, and
//! what ffprobe and ffmpeg's SSIM filter say of an encode.

use std::path::Path;
use std::process::Command;

use crate::media::MediaFile;

pub(super) fn probe_lines(path: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("ffprobe")
        .args(["-v", "error"])
        .args(args)
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("run ffprobe");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches(',').to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Presentation times of the video packets, in seconds, in order.
pub(super) fn video_times(path: &Path) -> Vec<f64> {
    let lines = probe_lines(
        path,
        &["-select_streams", "v:0", "-show_entries", "packet=pts_time"],
    );
    let mut times: Vec<f64> = lines.iter().map(|l| l.parse().unwrap()).collect();
    times.sort_by(f64::total_cmp);
    times
}

pub(super) fn audio_seconds(path: &Path) -> f64 {
    let lines = probe_lines(
        path,
        &[
            "-select_streams",
            "a:0",
            "-show_entries",
            "packet=pts_time,duration_time",
        ],
    );
    lines
        .iter()
        .map(|l| {
            let (pts, duration) = l.split_once(',').unwrap();
            pts.parse::<f64>().unwrap() + duration.parse::<f64>().unwrap()
        })
        .fold(0.0, f64::max)
}

/// Mean SSIM (all planes) of `encoded` against `source`, frame by frame.
pub(crate) fn ssim(encoded: &Path, source: &Path) -> f64 {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-i"])
        .arg(encoded)
        .arg("-i")
        .arg(source)
        .args(["-lavfi", "[0:v][1:v]ssim", "-f", "null", "-"])
        .output()
        .expect("run ffmpeg");
    let log = String::from_utf8_lossy(&out.stderr);
    let all = log.rsplit("All:").next().expect("an SSIM line");
    all.split_whitespace().next().unwrap().parse().unwrap()
}

/// `source` with its audio moved `delay` seconds later, its video where it was.
pub(crate) fn audio_delayed(source: &MediaFile, delay: f64) -> MediaFile {
    let path = source.path.with_file_name("late.mp4");
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-i"])
        .arg(&source.path)
        .args(["-itsoffset", &delay.to_string(), "-i"])
        .arg(&source.path)
        .args(["-map", "0:v", "-map", "1:a", "-c", "copy"])
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    MediaFile { path, ..*source }
}

/// Where the first audio stream starts, in seconds.
pub(super) fn audio_start(path: &Path) -> f64 {
    let lines = probe_lines(
        path,
        &[
            "-select_streams",
            "a:0",
            "-show_entries",
            "stream=start_time",
        ],
    );
    lines[0].parse().unwrap()
}
