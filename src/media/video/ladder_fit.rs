//! `ladder: auto` on `video-to-hls`: a ladder fitted to the video. The fixed ladder
//! encodes every rung at CRF 23 under its rate cap, which spends the same quality
//! setting on a slide deck as on a football match; a slide deck looks the same at a
//! far higher CRF. So before the real encode, a few seconds sampled from the video
//! (up to [`WINDOWS`] windows of [`WINDOW_SECONDS`], spread over it) are encoded
//! at each rung's size at the trial CRFs ([`TRIALS`]) in one process, from one decode,
//! under the rung's cap, and each trial's SSIM is measured against the samples scaled
//! to the rung's size. A rung's target is the fixed ladder's own quality on this video
//! (the SSIM of the CRF 23 trial) less [`SSIM_MARGIN`]; it is then encoded at the
//! highest trial CRF that reaches it (CRF 23 when none higher does: a busy video
//! keeps the fixed ladder's quality). A rung whose chosen trial takes at least
//! [`REPEAT_SHARE`] of the bits of the rung above it is dropped: it would repeat that
//! rung at nearly its cost with less picture.
//!
//! What a still video really spends its bits on is keyframes: on a slide, a talk or a
//! screen recording the frames between two keyframes cost next to nothing, so the
//! fixed ladder's keyframe every 2 s is most of the stream, and raising the CRF even a
//! little costs visible SSIM on photos and text. So the trials also say what share of
//! their bytes the keyframe takes; when it is [`STILL_KEYFRAME_SHARE`] or more on every
//! rung, the ladder puts a keyframe at each segment (6 s) instead of every 2 s —
//! players switch renditions at segments, so nothing is lost but finer seeking inside
//! a segment — a third of the keyframes, each rung [`STILL_CRF_DROP`] CRF finer to
//! make up for the longer drift from its keyframe.

use std::ffi::OsString;
use std::path::Path;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::transcode::{quiet_args, x264_at};
use crate::media::file::MediaFile;
use crate::media::video::chunked::x264::graph_path;

/// The CRFs tried, the fixed ladder's first.
pub const TRIALS: [u8; 3] = [23, 28, 33];
/// Windows sampled, and seconds in each.
const WINDOWS: usize = 2;
const WINDOW_SECONDS: f64 = 2.0;
/// How far below the fixed ladder's SSIM a fitted rung may be (the goal allows 0.005).
const SSIM_MARGIN: f64 = 0.003;
/// A rung at this share of the bits of the rung above it, or more, is dropped.
const REPEAT_SHARE: f64 = 0.85;
/// The share of a 2 s trial's bytes in its keyframe from which a video counts as still.
pub const STILL_KEYFRAME_SHARE: f64 = 0.4;
/// How much finer a still video's rungs are encoded: the frames of a still drift from
/// their keyframe over 6 s (SSIM 0.015 lower at the same CRF on grain, 0.004 on a
/// photograph), and 3 CRF finer brings them back above the fixed ladder's SSIM at about
/// half its bytes on a 4 s clip, less on a longer one.
pub const STILL_CRF_DROP: u8 = 3;

/// One rung to fit: its size and the fixed ladder's rate cap (kbit/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RungToFit {
    pub size: (u32, u32),
    pub rate_k: u32,
}

/// What one trial measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trial {
    pub crf: u8,
    pub ssim: f64,
    pub bytes: u64,
    /// The share of `bytes` in keyframes.
    pub keyframe_share: f64,
}

/// Whether every rung's CRF 23 trial spends [`STILL_KEYFRAME_SHARE`] or more of its
/// bytes on keyframes: a still video, whose keyframes go at segments (module docs).
pub fn is_still(trials: &[Vec<Trial>]) -> bool {
    !trials.is_empty()
        && trials.iter().all(|rung| {
            rung.first()
                .is_some_and(|t| t.keyframe_share >= STILL_KEYFRAME_SHARE)
        })
}

/// The windows sampled from a video of `duration` seconds: (start, length). A short
/// video gives one window, so the analysis stays a small share of the encode.
pub fn windows(duration: f64) -> Vec<(f64, f64)> {
    let length = WINDOW_SECONDS.min(duration.max(0.1));
    let count = match duration >= 20.0 {
        true => WINDOWS,
        false => 1,
    };
    (0..count)
        .map(|i| {
            // Evenly inside the video: at 1/3 and 2/3 for two, the middle for one.
            let centre = duration * (i as f64 + 1.0) / (count as f64 + 1.0);
            ((centre - length / 2.0).max(0.0), length)
        })
        .collect()
}

/// The CRF chosen for each rung from its trials (in [`TRIALS`] order), `None` for a
/// rung dropped; `rungs` largest first. See the module docs.
pub fn choose(trials: &[Vec<Trial>]) -> Vec<Option<u8>> {
    let mut chosen = Vec::with_capacity(trials.len());
    let mut above: Option<u64> = None;
    for rung in trials {
        // The first trial (CRF 23) always reaches its own target.
        let target = rung.first().map_or(0.0, |t| t.ssim) - SSIM_MARGIN;
        let picked = rung
            .iter()
            .filter(|t| t.ssim >= target)
            .max_by_key(|t| t.crf);
        let Some(trial) = picked else {
            chosen.push(Some(TRIALS[0]));
            continue;
        };
        if above.is_some_and(|a| trial.bytes as f64 >= a as f64 * REPEAT_SHARE) {
            chosen.push(None);
        } else {
            chosen.push(Some(trial.crf));
            above = Some(trial.bytes);
        }
    }
    chosen
}

/// Encodes the samples of `input` at every rung and trial CRF into `dir`, then
/// measures each; the trials of each rung, in [`TRIALS`] order. `chain`: the filters
/// every picture of the output goes through first (tone mapping, square pixels).
pub async fn measure(
    media: &Media,
    (input, duration): (&MediaFile, f64),
    chain: &str,
    rungs: &[RungToFit],
    dir: &Path,
) -> Result<Vec<Vec<Trial>>, MediaError> {
    let windows = windows(duration);
    let mut args = sample_inputs(input, &windows);
    let n = windows.len();
    let graph = samples_at_rungs(n, chain, rungs, "t");
    args.extend(["-filter_complex".into(), graph.into()]);
    for (r, rung) in rungs.iter().enumerate() {
        for crf in TRIALS {
            let cap = rung.rate_k;
            let mut trial = vec!["-map".to_string(), format!("[t{r}c{crf}]"), "-an".into()];
            trial.extend(x264_at(crf));
            trial.extend(["-maxrate".into(), format!("{cap}k")]);
            trial.extend(["-bufsize".into(), format!("{}k", cap * 2)]);
            args.extend(trial.into_iter().map(OsString::from));
            args.push(file_url(&trial_path(dir, r, crf)));
        }
    }
    media
        .runner()
        .run_streaming(&media.config().ffmpeg, args, &mut |_| {})
        .await?;
    let ssims = ssims_of(media, (input, &windows), chain, rungs, dir).await?;
    let mut measured = Vec::with_capacity(rungs.len());
    for (r, rung_ssims) in ssims.into_iter().enumerate() {
        let mut trials = Vec::with_capacity(TRIALS.len());
        for (crf, ssim) in TRIALS.into_iter().zip(rung_ssims) {
            let (bytes, keyframe_share) = packet_bytes(media, &trial_path(dir, r, crf)).await?;
            trials.push(Trial {
                crf,
                ssim,
                bytes,
                keyframe_share,
            });
        }
        measured.push(trials);
    }
    Ok(measured)
}

/// The filter graph that joins the `windows` sample inputs, puts them through `chain`
/// and scales them to each rung, one copy per trial: outputs `[{label}{r}c{crf}]`. The
/// trials' encode and their SSIM reference are both made by it, so they see the same
/// pictures.
fn samples_at_rungs(windows: usize, chain: &str, rungs: &[RungToFit], label: &str) -> String {
    let joined: String = (0..windows).map(|i| format!("[{i}:v:0]")).collect();
    let mut graph = format!(
        "{joined}concat=n={windows}:v=1:a=0,{chain},format=yuv420p,split={}",
        rungs.len()
    );
    graph.extend((0..rungs.len()).map(|r| format!("[{label}{r}]")));
    for (r, rung) in rungs.iter().enumerate() {
        let (w, h) = rung.size;
        let outs: String = TRIALS.iter().map(|c| format!("[{label}{r}c{c}]")).collect();
        graph.push_str(&format!(
            ";[{label}{r}]scale={w}:{h}:flags=bicubic,setsar=1,split={}{outs}",
            TRIALS.len()
        ));
    }
    graph
}

fn trial_path(dir: &Path, rung: usize, crf: u8) -> std::path::PathBuf {
    dir.join(format!("fit-{rung}-{crf}.mp4"))
}

/// The bytes of the video packets of the trial at `path`, and the share of them in
/// keyframes.
async fn packet_bytes(media: &Media, path: &Path) -> Result<(u64, f64), MediaError> {
    let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "v:0", "-show_entries"]
        .map(OsString::from)
        .into();
    args.extend(
        [
            "packet=size,flags",
            "-of",
            "csv=p=0",
            "-protocol_whitelist",
            "file",
        ]
        .map(OsString::from),
    );
    args.push(file_url(path));
    let output = media.runner().run(&media.config().ffprobe, args).await?;
    let (mut all, mut key) = (0u64, 0u64);
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let mut fields = line.split(',');
        let size: u64 = fields
            .next()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        all += size;
        if fields.next().is_some_and(|f| f.starts_with('K')) {
            key += size;
        }
    }
    Ok((all, key as f64 / all.max(1) as f64))
}

/// ffmpeg's options with one input per window of `input`, each cut exactly.
fn sample_inputs(input: &MediaFile, windows: &[(f64, f64)]) -> Vec<OsString> {
    let mut args = quiet_args();
    for (start, length) in windows {
        args.extend(
            [
                "-ss".into(),
                format!("{start:.3}"),
                "-t".into(),
                format!("{length:.3}"),
                "-f".into(),
                demuxer(input.format).to_string(),
                "-i".into(),
            ]
            .map(OsString::from),
        );
        args.push(file_url(&input.path));
    }
    args
}

/// The mean SSIM ("All") of every trial in `dir` against the samples of `input`
/// through `chain`, scaled to its rung's size: per rung, in [`TRIALS`] order. One
/// process decodes the samples once for all of them (a process per trial decoded the
/// source a dozen times, which took longer than the trials' encode); each `ssim`
/// filter writes its frames' scores to a file of its own.
async fn ssims_of(
    media: &Media,
    (input, windows): (&MediaFile, &[(f64, f64)]),
    chain: &str,
    rungs: &[RungToFit],
    dir: &Path,
) -> Result<Vec<Vec<f64>>, MediaError> {
    let mut args = sample_inputs(input, windows);
    let n = windows.len();
    let trials: Vec<(usize, u8)> = (0..rungs.len())
        .flat_map(|r| TRIALS.map(|crf| (r, crf)))
        .collect();
    for &(r, crf) in &trials {
        args.extend(["-i".into(), file_url(&trial_path(dir, r, crf))]);
    }
    let mut graph = samples_at_rungs(n, chain, rungs, "ref");
    for (k, &(r, crf)) in trials.iter().enumerate() {
        let stats = graph_path(&stats_path(dir, r, crf));
        let encoded = n + k;
        graph.push_str(&format!(
            ";[{encoded}:v:0]format=yuv420p[enc{k}];\
             [enc{k}][ref{r}c{crf}]ssim=stats_file={stats}[o{k}]"
        ));
    }
    args.extend(["-filter_complex".into(), graph.into()]);
    for k in 0..trials.len() {
        args.extend(["-map", &format!("[o{k}]"), "-f", "null", "-"].map(OsString::from));
    }
    media.runner().run(&media.config().ffmpeg, args).await?;
    let mut ssims = vec![Vec::with_capacity(TRIALS.len()); rungs.len()];
    for (r, crf) in trials {
        let stats = tokio::fs::read_to_string(stats_path(dir, r, crf)).await?;
        ssims[r].push(mean_ssim(&stats).ok_or_else(|| {
            MediaError::InvalidMedia("the ladder analysis measured no frame".into())
        })?);
    }
    Ok(ssims)
}

fn stats_path(dir: &Path, rung: usize, crf: u8) -> std::path::PathBuf {
    dir.join(format!("fit-{rung}-{crf}.ssim"))
}

/// The mean of the `All:` scores in an `ssim` filter's stats file (a line per frame,
/// `n:1 Y:0.99 U:0.99 V:0.99 All:0.99 (20.1)`); `None` when it has no frame.
fn mean_ssim(stats: &str) -> Option<f64> {
    let scores: Vec<f64> = stats
        .lines()
        .filter_map(|line| line.split_once("All:"))
        .filter_map(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
        .collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trials(ssims: [f64; 3], bytes: [u64; 3]) -> Vec<Trial> {
        (0..3)
            .map(|i| Trial {
                crf: TRIALS[i],
                ssim: ssims[i],
                bytes: bytes[i],
                keyframe_share: 0.1,
            })
            .collect()
    }

    #[test]
    fn a_video_is_still_when_the_keyframe_is_most_of_every_rung_s_bytes() {
        let mut rungs = vec![trials([0.99; 3], [9; 3]), trials([0.99; 3], [5; 3])];
        assert!(!is_still(&rungs));
        rungs[0][0].keyframe_share = 0.7;
        assert!(!is_still(&rungs));
        rungs[1][0].keyframe_share = 0.4;
        assert!(is_still(&rungs));
        assert!(!is_still(&[]));
    }

    #[test]
    fn a_still_rung_takes_the_highest_crf_within_the_margin_and_a_busy_one_keeps_23() {
        let still = trials([0.995, 0.994, 0.9925], [400, 250, 150]);
        let busy = trials([0.95, 0.93, 0.90], [900, 600, 400]);
        assert_eq!(choose(&[still]), [Some(33)]);
        assert_eq!(choose(&[busy]), [Some(23)]);
        // Within the margin of its own CRF 23, not of some absolute figure.
        let middling = trials([0.99, 0.988, 0.98], [400, 250, 150]);
        assert_eq!(choose(&[middling]), [Some(28)]);
    }

    #[test]
    fn a_rung_at_nearly_the_bits_of_the_one_above_is_dropped() {
        let top = trials([0.995, 0.994, 0.993], [400, 250, 100]);
        let close = trials([0.995, 0.994, 0.993], [400, 250, 90]);
        let far = trials([0.995, 0.994, 0.993], [400, 250, 40]);
        assert_eq!(
            choose(&[top.clone(), close, far]),
            [Some(33), None, Some(33)]
        );
    }

    #[test]
    fn the_mean_ssim_is_read_from_every_frame_of_a_stats_file() {
        let stats = "n:1 Y:0.990000 U:0.99 V:0.99 All:0.980000 (16.9)\n\
                     n:2 Y:0.990000 U:0.99 V:0.99 All:0.960000 (13.9)\n";
        assert!((mean_ssim(stats).unwrap() - 0.97).abs() < 1e-9);
        assert_eq!(mean_ssim(""), None);
    }

    #[test]
    fn long_videos_are_sampled_in_two_windows_short_ones_in_one() {
        assert_eq!(windows(60.0), [(19.0, 2.0), (39.0, 2.0)]);
        assert_eq!(windows(10.0), [(4.0, 2.0)]);
        assert_eq!(windows(1.0), [(0.0, 1.0)]);
    }
}
