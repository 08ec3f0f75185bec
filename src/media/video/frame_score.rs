//! The best frame of a video's opening, for `video-poster` without a time: not dark,
//! not flat, not in the middle of a fade, and of those the sharpest.
//!
//! ffmpeg decodes the first [`WINDOW`] seconds and hands on [`CANDIDATES`] evenly
//! spaced frames, each shrunk to a [`SIDE`]² grey picture (sharpness and brightness
//! need no more); they are scored here. Sharpness is the variance of the Laplacian
//! (the usual focus measure: blur and low contrast both lower it). A fade-in from black
//! passes through frames that are darker and softer than the shot it opens, and the
//! brightness of its frames changes steadily from one candidate to the next, which a
//! held shot's does not: such candidates are left out.

use tokio::io::AsyncReadExt;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::file::MediaFile;
use crate::media::video::info::VideoInfo;

/// Seconds of the opening searched.
pub(crate) const WINDOW: f64 = 10.0;
/// Frames scored, evenly spaced over the window (or over a shorter video).
const CANDIDATES: f64 = 20.0;
/// The side of the grey copy scored.
const SIDE: usize = 128;
/// Mean grey level (0–255) under which a frame counts as dark.
const DARK: f64 = 40.0;
/// Standard deviation of grey under which a frame counts as flat (one colour).
const FLAT: f64 = 10.0;
/// Change of mean grey between neighbouring candidates, both sides the same way,
/// past which a candidate counts as part of a fade.
const FADE_STEP: f64 = 8.0;

/// What one candidate frame looks like.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Score {
    /// Mean grey level, 0–255.
    pub mean: f64,
    /// Standard deviation of grey.
    pub deviation: f64,
    /// Variance of the Laplacian.
    pub sharpness: f64,
}

/// The time (seconds from the start) of the best frame of `input`'s opening, by the
/// rules of the module docs; 0 when no candidate could be decoded.
pub(crate) async fn best_time(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
) -> Result<f64, MediaError> {
    let window = info.duration.unwrap_or(WINDOW).clamp(0.1, WINDOW);
    let mut rate = CANDIDATES / window;
    if let Some(fps) = info.frame_rate {
        rate = rate.min(fps);
    }
    let mut args = quiet_input_args(input, media.config().max_video_seconds);
    let filter = format!("fps={rate:.6},scale={SIDE}:{SIDE}:flags=area,format=gray");
    let window = format!("{window:.6}");
    let tail = [
        "-map", "0:v:0", "-t", &window, "-vf", &filter, "-f", "rawvideo", "pipe:1",
    ];
    args.extend(tail.map(Into::into));
    let mut scores = Vec::new();
    let into = &mut scores;
    media
        .runner()
        .run_reading(&media.config().ffmpeg, args, |mut pipe| async move {
            let mut frame = vec![0u8; SIDE * SIDE];
            loop {
                match pipe.read_exact(&mut frame).await {
                    Ok(_) => into.push(score(&frame, SIDE)),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
            }
        })
        .await?;
    Ok(pick(&scores).map_or(0.0, |k| k as f64 / rate))
}

/// Scores a grey picture `side` pixels square.
pub(crate) fn score(grey: &[u8], side: usize) -> Score {
    let n = grey.len().max(1) as f64;
    let mean = grey.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let deviation = (grey
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    let at = |x: usize, y: usize| f64::from(grey[y * side + x]);
    let mut laplacians = Vec::with_capacity(side * side);
    for y in 1..side.saturating_sub(1) {
        for x in 1..side - 1 {
            let l = 4.0 * at(x, y) - at(x - 1, y) - at(x + 1, y) - at(x, y - 1) - at(x, y + 1);
            laplacians.push(l);
        }
    }
    let count = laplacians.len().max(1) as f64;
    let l_mean = laplacians.iter().sum::<f64>() / count;
    let sharpness = laplacians.iter().map(|l| (l - l_mean).powi(2)).sum::<f64>() / count;
    Score {
        mean,
        deviation,
        sharpness,
    }
}

/// The index of the best candidate: the sharpest that is neither dark, flat nor in a
/// fade; when every one is, the one of most contrast. `None` for no candidates.
pub(crate) fn pick(scores: &[Score]) -> Option<usize> {
    pick_of(scores, &fits(scores))
}

/// [`pick`] with which candidates are `fit` already known.
fn pick_of(scores: &[Score], fit: &[bool]) -> Option<usize> {
    let fitting = &mut (0..scores.len()).filter(|k| fit[*k]);
    best_by(scores, |s| s.sharpness, fitting)
        .or_else(|| best_by(scores, |s| s.deviation, &mut (0..scores.len())))
}

/// Of sharpness this close to the sharpest's, a candidate counts as sharp as it.
const AS_SHARP: f64 = 0.9;

/// [`pick`], save that of the fit candidates at least [`AS_SHARP`] as sharp as its
/// choice, the one of least `cost` (frames decoded to reach it) is taken; the sharper
/// of equal costs.
pub(crate) fn pick_reaching(scores: &[Score], cost: &[u64]) -> Option<usize> {
    let fit = fits(scores);
    let best = pick_of(scores, &fit)?;
    if !fit[best] {
        return Some(best);
    }
    let floor = scores[best].sharpness * AS_SHARP;
    let near = (0..scores.len()).filter(|k| fit[*k] && scores[*k].sharpness >= floor);
    near.min_by(|a, b| {
        let sharper = scores[*b].sharpness.total_cmp(&scores[*a].sharpness);
        cost[*a].cmp(&cost[*b]).then(sharper)
    })
}

/// Which candidates are neither dark, flat nor in a fade.
fn fits(scores: &[Score]) -> Vec<bool> {
    let in_fade = |k: usize| {
        let (Some(before), Some(after)) = (k.checked_sub(1).map(|p| scores[p]), scores.get(k + 1))
        else {
            return false;
        };
        let (rise, next) = (scores[k].mean - before.mean, after.mean - scores[k].mean);
        rise.abs() > FADE_STEP && next.abs() > FADE_STEP && rise.signum() == next.signum()
    };
    (0..scores.len())
        .map(|k| {
            let s = scores[k];
            s.mean >= DARK && s.deviation >= FLAT && !in_fade(k)
        })
        .collect()
}

/// The candidate of the greatest `key` among `ks`; the first of equals (the earlier
/// frame).
fn best_by(
    scores: &[Score],
    key: fn(&Score) -> f64,
    ks: &mut dyn Iterator<Item = usize>,
) -> Option<usize> {
    ks.fold(None, |best: Option<usize>, k| match best {
        Some(b) if key(&scores[b]) >= key(&scores[k]) => Some(b),
        _ => Some(k),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `side`² picture of stripes `width` wide between `dark` and `light`.
    fn stripes(side: usize, width: usize, dark: u8, light: u8) -> Vec<u8> {
        (0..side * side)
            .map(|i| {
                if (i % side / width) % 2 == 0 {
                    dark
                } else {
                    light
                }
            })
            .collect()
    }

    #[test]
    fn fine_detail_is_sharper_than_coarse_and_flat_has_none() {
        let fine = score(&stripes(32, 1, 50, 200), 32);
        let coarse = score(&stripes(32, 8, 50, 200), 32);
        let flat = score(&[120; 32 * 32], 32);
        assert!(
            fine.sharpness > coarse.sharpness * 4.0,
            "{fine:?} {coarse:?}"
        );
        assert_eq!(flat.sharpness, 0.0);
        assert_eq!((flat.mean, flat.deviation), (120.0, 0.0));
    }

    #[test]
    fn the_sharpest_frame_wins_unless_dark_flat_or_fading() {
        let s = |mean, deviation, sharpness| Score {
            mean,
            deviation,
            sharpness,
        };
        // Black, then a fade-in (steady rise), then the shot, softer later.
        let opening = [
            s(16.0, 0.0, 0.0),
            s(60.0, 30.0, 900.0),
            s(100.0, 45.0, 800.0),
            s(130.0, 60.0, 700.0),
            s(131.0, 60.0, 650.0),
        ];
        // 1 is brighter than dark and sharp, but it rises into 2 as 2 into 3: a fade.
        assert_eq!(pick(&opening), Some(3));
        let dark_and_flat = [
            s(20.0, 30.0, 900.0),
            s(128.0, 2.0, 5.0),
            s(90.0, 20.0, 50.0),
        ];
        assert_eq!(pick(&dark_and_flat), Some(2));
        // Nothing fits: the one of most contrast.
        assert_eq!(pick(&[s(10.0, 3.0, 1.0), s(12.0, 5.0, 0.5)]), Some(1));
        assert_eq!(pick(&[]), None);
    }
}
