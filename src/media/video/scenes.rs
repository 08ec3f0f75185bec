//! Shot boundaries of a video, for `video-scenes` and `video-storyboard` `at: scenes`.
//!
//! ffmpeg decodes the video once and hands on each frame shrunk to a 128² RGB picture
//! at an even rate ([`analysis_rate`]: the video's, at most 60 fps), so frame `i` is
//! the picture shown at `i / rate`. Nothing else of the full-size picture is needed:
//! the shrinking is one pass of `scale` beside the decoder, and the analysis here costs
//! microseconds a frame. A long video is decoded in parts at once, a process a core
//! (`parts`).
//!
//! The content measure is PySceneDetect's `ContentDetector`'s, made continuous: each
//! picture as hue, chroma and value, and between consecutive ones the mean absolute
//! change of each, averaged (0–255). PySceneDetect's saturation (chroma ÷ value) and
//! hue are noise in near-black and near-grey pixels, so a fade through black, or the
//! first frame of a dissolve tinting a grey picture, jumps in them; here saturation is
//! the chroma itself, and a change of hue (taken round its circle) counts in
//! proportion to the lesser chroma of the two pixels. A cut is a frame whose change is at
//! least `threshold` *and* at least 2.5 times the mean change of the
//! two frames on each side (the adaptive test of PySceneDetect's
//! `AdaptiveDetector`): a fade or a slow pan moves a little every frame and never
//! passes the first; fast motion changes a lot every frame and fails the second,
//! where a cut stands out of its neighbours. A shot shorter than `min_seconds` is
//! merged into the one before it (the last one, into the one before it too).
//!
//! Each scene's best frame is picked as `video-poster` picks its own
//! (`frame_score::pick`: not dark, flat or fading, then the sharpest) among up to
//! [`CANDIDATES`] of the scene's frames, scored on the same small picture in grey;
//! where an MP4's keyframes are known, of those nearly as sharp the one its poster's
//! seek reaches soonest (`frame_score::pick_reaching`).

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::file::MediaFile;
use crate::media::video::chunked::sizes::video_lead;
use crate::media::video::frame_score::{pick_reaching, Score};
use crate::media::video::info::VideoInfo;

mod change;
mod parts;

/// The most candidates of a scene for its best frame.
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
    /// Seconds from the start of the file to frame 0, when the analysis's frames are
    /// the video's own (a constant rate, the analysis's): a frame is then found by
    /// seeking to it ([`Scenes::seek`]), with no probe of the packets around it.
    pub origin: Option<f64>,
}

impl Scenes {
    /// The second frame `frame` is shown at.
    pub fn seconds(&self, frame: u64) -> f64 {
        frame as f64 * 1000.0 / self.rate_milli as f64
    }

    /// Where an accurate seek (`-ss` before the input) starts at frame `frame` itself:
    /// a quarter frame before it, as the analysis's parts seek; `None` without an
    /// [`Scenes::origin`].
    pub fn seek(&self, frame: u64) -> Option<f64> {
        let rate = self.rate_milli as f64 / 1000.0;
        self.origin
            .map(|origin| parts::seek_time(origin, frame, rate).max(0.0))
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
    let lead = match input.format.seeks_to_keyframes() {
        true => video_lead(media, input).await,
        false => None,
    };
    let origin = lead.filter(|_| frames_are_the_video_s(info, rate));
    // Where a seek starts decoding, when the analysis's frames are the file's: the
    // parts start just after them, and the posters are taken near them.
    let readable = input.format.is_iso_bmff_video() && media.config().header_readers;
    let keyframes = match origin {
        Some(_) if readable => {
            let path = input.path.clone();
            crate::media::blocking(move || Ok(crate::media::video::mp4::keyframes(&path))).await?
        }
        _ => None,
    };
    let keys = keyframes.as_deref();
    let analysed = (rate_milli, lead, keys.unwrap_or_default());
    let read = parts::analyse(media, input, info, analysed, progress).await?;
    if read.changes.is_empty() {
        return Err(MediaError::InvalidMedia("no frame could be decoded".into()));
    }
    let min_frames = (settings.min_seconds * rate).round() as u64;
    let starts = merge(
        &change::cuts(&read.changes, settings.threshold),
        &read.changes,
        min_frames,
    );
    let total = read.changes.len() as u64;
    Ok(Scenes {
        rate_milli,
        scenes: scenes(&starts, total, &read.scored, keys),
        origin,
    })
}

/// Whether the analysis at `rate` sees every frame of `info`'s video once, each at
/// its own time: a constant rate (the average is the base rate) equal to `rate`.
fn frames_are_the_video_s(info: &VideoInfo, rate: f64) -> bool {
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b;
    matches!((info.frame_rate, info.base_rate), (Some(avg), Some(base)) if near(avg, base) && near(avg, rate))
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
/// the frames `scored` in it (its middle when none was): of those as sharp, the one
/// fewest frames after the keyframe of `keyframes` (where known) before it, which
/// its poster's seek decodes from.
fn scenes(
    starts: &[u64],
    total: u64,
    scored: &[(u64, Score)],
    keyframes: Option<&[u64]>,
) -> Vec<Scene> {
    // A poster's seek lands a quarter frame before its frame (`parts::seek_time`), so
    // it decodes from the last keyframe before the frame: a keyframe's own frame costs a
    // whole GOP, the frame after it two.
    let cost = |frame: u64| match keyframes {
        Some(keys) => match keys.partition_point(|k| *k < frame) {
            0 => frame,
            after => frame - keys[after - 1],
        },
        None => 0,
    };
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
            let costs: Vec<u64> = candidates.iter().map(|(i, _)| cost(*i)).collect();
            let best = pick_reaching(&scores, &costs);
            let best = best.map_or(start + (end - start) / 2, |k| candidates[k].0);
            Scene { start, end, best }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_sought_a_quarter_frame_before_it_only_when_it_is_the_video_s_own() {
        let found = |origin| Scenes {
            rate_milli: 25_000,
            scenes: Vec::new(),
            origin,
        };
        assert_eq!(found(None).seek(10), None);
        let seek = found(Some(0.023)).seek(10).unwrap();
        assert!((seek - (0.023 + 9.75 / 25.0)).abs() < 1e-12);
        assert_eq!(found(Some(0.0)).seek(0), Some(0.0));
        let rated = |avg: f64, base: f64| VideoInfo {
            frame_rate: Some(avg),
            base_rate: Some(base),
            ..VideoInfo::default()
        };
        assert!(frames_are_the_video_s(&rated(29.97, 29.97), 29.97));
        // Variable rate (the average is not the base), or more than the analysis's 60.
        assert!(!frames_are_the_video_s(&rated(24.3, 30.0), 24.3));
        assert!(!frames_are_the_video_s(&rated(120.0, 120.0), 60.0));
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
        let found = scenes(&[0, 10, 20], 30, &scored, None);
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

    #[test]
    fn of_frames_as_sharp_the_one_nearest_after_a_keyframe_is_the_poster() {
        let s = |sharpness| Score {
            mean: 120.0,
            deviation: 50.0,
            sharpness,
        };
        // 58 is sharpest, 50 95 % as sharp, 30 only 80 %.
        let scored = vec![(30, s(80.0)), (50, s(95.0)), (58, s(100.0))];
        // A keyframe at 49: 50 is decoded from it, 58 from it too, 8 frames further.
        assert_eq!(scenes(&[0], 60, &scored, Some(&[0, 49]))[0].best, 50);
        assert_eq!(scenes(&[0], 60, &scored, None)[0].best, 58);
        // A keyframe's own frame is sought from the keyframe before it: at 50, 50 is
        // reached from 0 and 58 from 50.
        assert_eq!(scenes(&[0], 60, &scored, Some(&[0, 50]))[0].best, 58);
        // 30, only 80 % as sharp, is never taken for being near a keyframe.
        assert_eq!(scenes(&[0], 60, &scored, Some(&[0, 29]))[0].best, 50);
    }
}
