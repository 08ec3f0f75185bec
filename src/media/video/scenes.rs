//! Shot boundaries of a video, for `video-scenes` and `video-storyboard` `at: scenes`.
//!
//! ffmpeg decodes the video once (its decoder threads on every core) and hands on each
//! frame shrunk to a [`SIDE`]² RGB picture at an even rate ([`analysis_rate`]: the
//! video's, at most 60 fps), so frame `i` is the picture shown at `i / rate`. Nothing
//! else of the full-size picture is needed: the shrinking is one pass of `scale`
//! beside the decoder, and the analysis here costs microseconds a frame.
//!
//! The content measure is PySceneDetect's `ContentDetector`'s, made continuous: each
//! picture as hue, chroma and value, and between consecutive ones the mean absolute
//! change of each, averaged (0–255). PySceneDetect's saturation (chroma ÷ value) and
//! hue are noise in near-black and near-grey pixels, so a fade through black, or the
//! first frame of a dissolve tinting a grey picture, jumps in them; here saturation is
//! the chroma itself, and a change of hue (taken round its circle) counts in
//! proportion to the lesser chroma of the two pixels. A cut is a frame whose change is at
//! least `threshold` *and* at least [`RATIO`] times the mean change of the
//! [`WINDOW`] frames on each side (the adaptive test of PySceneDetect's
//! `AdaptiveDetector`): a fade or a slow pan moves a little every frame and never
//! passes the first; fast motion changes a lot every frame and fails the second,
//! where a cut stands out of its neighbours. A shot shorter than `min_seconds` is
//! merged into the one before it (the last one, into the one before it too).
//!
//! Each scene's best frame is picked as `video-poster` picks its own
//! (`frame_score::pick`: not dark, flat or fading, then the sharpest) among up to
//! [`CANDIDATES`] of the scene's frames, scored on the same small picture in grey.

use tokio::io::AsyncReadExt;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::file::MediaFile;
use crate::media::video::frame_score::{pick, score, Score};
use crate::media::video::info::VideoInfo;

/// The side of the picture analysed.
const SIDE: usize = 128;
/// How many times the mean change of the [`WINDOW`] frames each side a cut's must be.
const RATIO: f64 = 2.5;
const WINDOW: usize = 2;
/// Frames scored for the best frame a second, and the most candidates of a scene.
const SCORED_PER_SECOND: f64 = 5.0;
const CANDIDATES: usize = 20;
/// The most scenes: the shortest are merged past it (a storyboard holds 400 tiles).
pub(crate) const MAX_SCENES: usize = 400;

/// How cuts are told apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Settings {
    /// The least change (0–255) that counts as a cut.
    pub threshold: f64,
    /// Shots shorter than this are merged.
    pub min_seconds: f64,
}

/// One scene: frames `start..end` of the analysis, at [`Scenes::rate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scene {
    pub start: u64,
    pub end: u64,
    /// The frame that shows it best.
    pub best: u64,
}

/// The scenes of a video, end to end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scenes {
    /// Frames a second of the analysis, as `numerator / 1000`.
    pub rate_milli: u64,
    pub scenes: Vec<Scene>,
}

impl Scenes {
    /// The second frame `frame` is shown at.
    pub fn seconds(&self, frame: u64) -> f64 {
        frame as f64 * 1000.0 / self.rate_milli as f64
    }

    /// The filter that passes on the best frame of each scene, in order: the analysis's
    /// `fps`, which numbers frames as it did, then `select`.
    pub fn best_frames_filter(&self) -> String {
        let picks: Vec<String> = self
            .scenes
            .iter()
            .map(|s| format!("eq(n,{})", s.best))
            .collect();
        format!(
            "fps=fps={}/1000,select='{}'",
            self.rate_milli,
            picks.join("+")
        )
    }

    /// Each scene's first and last millisecond, end to end; the last scene ends at
    /// `duration` when known.
    pub fn spans_ms(&self, duration: Option<f64>) -> Vec<(u64, u64)> {
        let ms = |seconds: f64| (seconds * 1000.0).round() as u64;
        let last = self.scenes.last().map_or(0, |s| s.end);
        let end = ms(duration.unwrap_or(self.seconds(last)));
        let starts: Vec<u64> = self
            .scenes
            .iter()
            .map(|s| ms(self.seconds(s.start)))
            .collect();
        let ends = starts.iter().skip(1).copied().chain([end]);
        starts
            .iter()
            .zip(ends)
            .map(|(&a, b)| (a, b.max(a)))
            .collect()
    }
}

/// The analysis rate of `info`'s video, in thousandths of frames a second: its own
/// rate, 25 when unknown, at most 60 (a cut is as well found at 60 as at 240).
pub(crate) fn analysis_rate(info: &VideoInfo) -> u64 {
    let rate = info.frame_rate.filter(|r| r.is_finite() && *r > 0.0);
    (rate.unwrap_or(25.0).clamp(1.0, 60.0) * 1000.0).round() as u64
}

/// Finds the scenes of `input` (a video described by `info`).
pub(crate) async fn detect(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    settings: Settings,
    progress: ProgressFn<'_>,
) -> Result<Scenes, MediaError> {
    let rate_milli = analysis_rate(info);
    let rate = rate_milli as f64 / 1000.0;
    let expected = info.duration.map(|d| (d * rate).max(1.0));
    let every = (rate / SCORED_PER_SECOND).round().max(1.0) as u64;
    let mut args = quiet_input_args(input, media.config().max_video_seconds);
    let filter = format!("fps=fps={rate_milli}/1000,scale={SIDE}:{SIDE}:flags=area,format=rgb24");
    let tail = ["-map", "0:v:0", "-vf", &filter, "-f", "rawvideo", "pipe:1"];
    args.extend(tail.map(Into::into));
    let mut read = Analysis::default();
    let into = &mut read;
    media
        .runner()
        .run_reading(&media.config().ffmpeg, args, |mut pipe| async move {
            let mut rgb = vec![0u8; SIDE * SIDE * 3];
            loop {
                match pipe.read_exact(&mut rgb).await {
                    Ok(_) => into.frame(&rgb, every),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
                if let Some(frames) = expected {
                    progress((into.changes.len() as f64 / frames).min(0.99));
                }
            }
        })
        .await?;
    if read.changes.is_empty() {
        return Err(MediaError::InvalidMedia("no frame could be decoded".into()));
    }
    let min_frames = (settings.min_seconds * rate).round() as u64;
    let starts = merge(
        &cuts(&read.changes, settings.threshold),
        &read.changes,
        min_frames,
    );
    Ok(Scenes {
        rate_milli,
        scenes: scenes(&starts, read.changes.len() as u64, &read.scored),
    })
}

/// What the analysis keeps of the frames read: one change a frame (0 for the first),
/// and the scores of every `every`-th frame.
#[derive(Default)]
struct Analysis {
    previous: Vec<[u8; 3]>,
    changes: Vec<f64>,
    scored: Vec<(u64, Score)>,
}

impl Analysis {
    fn frame(&mut self, rgb: &[u8], every: u64) {
        let hsv: Vec<[u8; 3]> = rgb.chunks_exact(3).map(hsv).collect();
        let change = if self.previous.is_empty() {
            0.0
        } else {
            content_change(&self.previous, &hsv)
        };
        let index = self.changes.len() as u64;
        self.changes.push(change);
        if index % every == 0 {
            let grey: Vec<u8> = rgb.chunks_exact(3).map(luma).collect();
            self.scored.push((index, score(&grey, SIDE)));
        }
        self.previous = hsv;
    }
}

/// BT.601 luma of one RGB pixel.
fn luma(p: &[u8]) -> u8 {
    let y = 0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2]);
    y.round().clamp(0.0, 255.0) as u8
}

/// One RGB pixel as hue 0–179 (degrees halved, as OpenCV's 8-bit HSV), chroma
/// (max − min) and value (max), 0–255.
fn hsv(p: &[u8]) -> [u8; 3] {
    let (r, g, b) = (f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let spread = max - min;
    let degrees = if spread == 0.0 {
        0.0
    } else if max == r {
        60.0 * (g - b) / spread
    } else if max == g {
        120.0 + 60.0 * (b - r) / spread
    } else {
        240.0 + 60.0 * (r - g) / spread
    };
    let degrees = if degrees < 0.0 {
        degrees + 360.0
    } else {
        degrees
    };
    [
        ((degrees / 2.0).round() as u16 % 180) as u8,
        spread as u8,
        max as u8,
    ]
}

/// The mean change of hue (round its circle, weighed by the lesser chroma), chroma and
/// value between two pictures, averaged: 0–255 (hue's is at most 90).
fn content_change(a: &[[u8; 3]], b: &[[u8; 3]]) -> f64 {
    let mut sums = [0u64; 3];
    for (p, q) in a.iter().zip(b) {
        let hue = p[0].abs_diff(q[0]);
        // Over 255: scaled back once, at the end.
        sums[0] += u64::from(hue.min(180 - hue)) * u64::from(p[1].min(q[1]));
        sums[1] += u64::from(p[1].abs_diff(q[1]));
        sums[2] += u64::from(p[2].abs_diff(q[2]));
    }
    let n = a.len().max(1) as f64;
    let hue = sums[0] as f64 / 255.0;
    (hue + sums[1] as f64 + sums[2] as f64) / n / 3.0
}

/// The frames that start a new shot: a change past `threshold` that stands out of its
/// neighbours' (module docs).
fn cuts(changes: &[f64], threshold: f64) -> Vec<u64> {
    (1..changes.len())
        .filter(|&i| {
            let change = changes[i];
            let around: Vec<f64> = (i.saturating_sub(WINDOW).max(1)..=(i + WINDOW))
                .filter(|&j| j != i && j < changes.len())
                .map(|j| changes[j])
                .collect();
            let mean = around.iter().sum::<f64>() / around.len().max(1) as f64;
            change >= threshold && change >= RATIO * mean
        })
        .map(|i| i as u64)
        .collect()
}

/// The first frame of each scene: 0, then each cut at least `min_frames` after the
/// last one kept and before the end; past [`MAX_SCENES`], the cuts of least change
/// are dropped.
fn merge(cuts: &[u64], changes: &[f64], min_frames: u64) -> Vec<u64> {
    let total = changes.len() as u64;
    let mut starts = vec![0u64];
    for &cut in cuts {
        if cut - starts[starts.len() - 1] >= min_frames.max(1) {
            starts.push(cut);
        }
    }
    if starts.len() > 1 && total - starts[starts.len() - 1] < min_frames {
        starts.pop();
    }
    if starts.len() > MAX_SCENES {
        let mut by_change = starts[1..].to_vec();
        by_change.sort_by(|a, b| changes[*b as usize].total_cmp(&changes[*a as usize]));
        by_change.truncate(MAX_SCENES - 1);
        by_change.sort_unstable();
        starts = [0].into_iter().chain(by_change).collect();
    }
    starts
}

/// The scenes from their starts over `total` frames, each with its best frame among
/// the frames `scored` in it (its middle when none was).
fn scenes(starts: &[u64], total: u64, scored: &[(u64, Score)]) -> Vec<Scene> {
    let ends = starts.iter().skip(1).copied().chain([total]);
    starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| {
            let inside: Vec<&(u64, Score)> = scored
                .iter()
                .filter(|(i, _)| (start..end).contains(i))
                .collect();
            let step = inside.len().div_ceil(CANDIDATES).max(1);
            let candidates: Vec<&(u64, Score)> = inside.into_iter().step_by(step).collect();
            let scores: Vec<Score> = candidates.iter().map(|(_, s)| *s).collect();
            let best = pick(&scores).map_or(start + (end - start) / 2, |k| candidates[k].0);
            Scene { start, end, best }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_is_opencv_s_eight_bit_hsv() {
        assert_eq!(hsv(&[255, 0, 0]), [0, 255, 255]);
        assert_eq!(hsv(&[0, 255, 0]), [60, 255, 255]);
        assert_eq!(hsv(&[0, 0, 255]), [120, 255, 255]);
        assert_eq!(hsv(&[128, 128, 128]), [0, 0, 128]);
        assert_eq!(hsv(&[255, 0, 1]), [0, 255, 255]);
        // Red either side of 0°: near on the circle.
        let (a, b) = (hsv(&[255, 0, 8]), hsv(&[255, 8, 0]));
        assert!(content_change(&[a], &[b]) < 2.0, "{a:?} {b:?}");
        // Grey tinted blue, or near-black: the hue swings a quarter turn, yet the
        // pixels barely change.
        let (grey, tinted) = (hsv(&[120, 120, 120]), hsv(&[120, 120, 124]));
        assert!(content_change(&[grey], &[tinted]) < 3.0);
        let (dark, darker) = (hsv(&[3, 1, 1]), hsv(&[1, 1, 2]));
        assert!(content_change(&[dark], &[darker]) < 2.0);
        // Red to blue: a third of the circle at full chroma.
        let change = content_change(&[hsv(&[255, 0, 0])], &[hsv(&[0, 0, 255])]);
        assert!((change - 20.0).abs() < 0.01, "{change}");
    }

    #[test]
    fn a_jump_is_a_cut_and_steady_change_is_not() {
        // A fade: 5 a frame; fast motion: 40 a frame with a cut of 60 in it; a cut of 80.
        let mut changes = vec![0.0];
        changes.extend([5.0; 20]);
        changes.push(80.0);
        changes.extend([40.0; 10]);
        changes.push(30.0);
        changes.extend([40.0; 10]);
        changes.push(95.0);
        changes.extend([2.0; 5]);
        assert_eq!(cuts(&changes, 27.0), vec![21, 43]);
        assert_eq!(cuts(&changes, 90.0), vec![43]);
    }

    #[test]
    fn short_shots_are_merged_into_the_one_before() {
        let changes = vec![0.0; 100];
        assert_eq!(merge(&[10, 12, 40, 95], &changes, 25), vec![0, 40]);
        assert_eq!(
            merge(&[10, 12, 40, 95], &changes, 0),
            vec![0, 10, 12, 40, 95]
        );
        let mut many = vec![1.0; 1000];
        many[500] = 50.0;
        let every: Vec<u64> = (1..1000).collect();
        let kept = merge(&every, &many, 1);
        assert_eq!(kept.len(), MAX_SCENES);
        assert!(kept.contains(&500));
    }

    #[test]
    fn each_scene_s_best_frame_is_inside_it() {
        let s = |mean, sharpness| Score {
            mean,
            deviation: 50.0,
            sharpness,
        };
        let scored = vec![
            (0, s(120.0, 10.0)),
            (5, s(120.0, 90.0)),
            (10, s(10.0, 500.0)),
            (15, s(120.0, 30.0)),
        ];
        let found = scenes(&[0, 10, 20], 30, &scored);
        assert_eq!(
            found[0],
            Scene {
                start: 0,
                end: 10,
                best: 5
            }
        );
        // 10 is dark: 15 wins.
        assert_eq!(found[1].best, 15);
        // Nothing scored: the middle.
        assert_eq!(
            found[2],
            Scene {
                start: 20,
                end: 30,
                best: 25
            }
        );
    }
}
