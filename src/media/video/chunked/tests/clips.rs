//! The clips the chunked encodes are tested on, and what ffprobe and ffmpeg's SSIM
//! filter say of an encode.

use std::path::Path;
use std::process::Command;

use crate::media::{MediaFile, MediaFormat};

/// A `w`x`h` clip at 25 fps of three scenes lasting `scenes` seconds (a test pattern, a
/// fractal zoom, noisy bars: two hard cuts), with a tone as long, by x264 at `preset`.
pub(crate) fn clip_with_cuts(
    dir: &Path,
    (w, h): (u32, u32),
    scenes: [f64; 3],
    preset: &str,
) -> MediaFile {
    let path = dir.join("cuts.mp4");
    let [a, b, c] = scenes;
    let graph = format!(
        "testsrc2=s={w}x{h}:r=25:d={a}[a];\
         mandelbrot=s={w}x{h}:r=25,trim=duration={b},setpts=PTS-STARTPTS[b];\
         smptebars=s={w}x{h}:r=25:d={c},noise=alls=20:allf=t[c];\
         [a][b][c]concat=n=3,format=yuv420p[v]"
    );
    let tone = format!("sine=frequency=300:duration={:.3}", a + b + c);
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-filter_complex", &graph])
        .args(["-f", "lavfi", "-i", &tone])
        .args(["-map", "[v]", "-map", "0:a", "-c:v", "libx264", "-g", "250"])
        .args(["-preset", preset, "-c:a", "aac", "-shortest"])
        .arg(&path)
        .status()
        .expect("run ffmpeg");
    assert!(status.success());
    MediaFile {
        path,
        format: MediaFormat::Mp4,
    }
}

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
