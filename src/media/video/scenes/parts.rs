//! The analysis decode, cut into parts that run at once. One ffmpeg run keeps about
//! 1.5 of 2 cores busy on a 1080p H.264 stream (its decoder's frame threads) and
//! shrinks each picture on its main thread beside them, for 1.4× the time of a plain
//! decode; single-threaded decoders, one a part, use every core fully: two parts of
//! the bench's 60 s 1080p clip take 0.93× the plain decode (docs/PERFORMANCE.md).
//!
//! A part is a process of its own with one decoder thread per core it stands for. It
//! seeks (accurately) to a quarter frame before its first frame and stops a quarter
//! frame before the next part's, both counted from the video's first frame, so each
//! frame is analysed in exactly one part, and its pictures are the whole run's byte
//! for byte (tested). Its first change, to the last picture of the part before, is
//! measured when the parts are joined. The parts run as a chunked encode's chunks do
//! (`lending::run_pieces`): the first on the step's own CPU slot, each further
//! one on a slot borrowed from the engine, so they wait their turn like other work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::io::AsyncReadExt;

use super::change::{content_change, luma_of_gbr, Hsv};
use crate::media::cores;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::quiet_input_args_with;
use crate::media::file::MediaFile;
use crate::media::lending::run_pieces;
use crate::media::video::frame_score::{score, Score};
use crate::media::video::info::VideoInfo;

/// The side of the picture analysed.
pub(super) const SIDE: usize = 128;
/// Frames scored for the best frame a second.
const SCORED_PER_SECOND: f64 = 5.0;
/// The shortest part: a part decodes from the keyframe before its first frame (up to
/// 10 s before it with x264's default of a keyframe every 250 frames), which a much
/// shorter part would spend more on than it saves.
const MIN_PART_SECONDS: f64 = 10.0;

/// One stretch of the analysis, decoded by a process of its own.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Part {
    /// Its first frame, at the analysis rate.
    pub start: u64,
    /// Seconds from the start of the file to seek to; none for the first part.
    pub seek: Option<f64>,
    /// Seconds of the file it reads from there (`-t`).
    pub seconds: f64,
    /// Decoder threads; ffmpeg's own choice for a whole run.
    pub threads: Option<usize>,
}

impl Part {
    /// The options before the input, `-t` aside.
    fn options(&self) -> Vec<String> {
        let mut options = Vec::new();
        if let Some(threads) = self.threads {
            options.extend(["-threads".into(), threads.to_string()]);
        }
        if let Some(seek) = self.seek {
            options.extend(["-ss".into(), format!("{seek:.6}")]);
        }
        options
    }
}

/// What is kept of the frames read: one change a frame (0 for the first), the scores
/// of every `every`-th frame, and the first and last pictures (for the joins).
#[derive(Default)]
pub(super) struct Analysis {
    /// The frame the first change is of.
    start: u64,
    first: Hsv,
    previous: Hsv,
    pub changes: Vec<f64>,
    pub scored: Vec<(u64, Score)>,
}

impl Analysis {
    fn starting_at(start: u64) -> Analysis {
        Analysis {
            start,
            ..Analysis::default()
        }
    }

    /// Takes in the next picture, [`SIDE`]² pixels as ffmpeg's planar `gbrp`.
    fn frame(&mut self, gbr: &[u8], every: u64) {
        let hsv = Hsv::of_gbr(gbr, SIDE * SIDE);
        let change = if self.previous.is_empty() {
            self.first.clone_from(&hsv);
            0.0
        } else {
            content_change(&self.previous, &hsv)
        };
        let index = self.start + self.changes.len() as u64;
        self.changes.push(change);
        if index % every == 0 {
            let grey = luma_of_gbr(gbr, SIDE * SIDE);
            self.scored.push((index, score(&grey, SIDE)));
        }
        self.previous = hsv;
    }
}

/// Reads every frame of `input` (described by `info`) at `rate_milli` thousandths of
/// frames a second, in parts on every core where the file allows (module docs): where
/// its video's `lead` after the file's start is known (`None` for a file that cannot
/// seek).
pub(super) async fn analyse(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    (rate_milli, lead, keyframes): (u64, Option<f64>, &[u64]),
    progress: ProgressFn<'_>,
) -> Result<Analysis, MediaError> {
    let rate = rate_milli as f64 / 1000.0;
    let max_seconds = media.config().max_video_seconds;
    let planned = (cores(), max_seconds, keyframes);
    let parts = plan(info.duration.zip(lead), rate, planned);
    let expected = info.duration.map(|d| (d * rate).max(1.0));
    let read = AtomicU64::new(0);
    let on_frame = || {
        let frames = read.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(expected) = expected {
            progress((frames as f64 / expected).min(0.99));
        }
    };
    analyse_parts(media, input, rate_milli, &parts, &on_frame).await
}

/// The parts of a video lasting `duration` seconds whose first frame comes `lead`
/// seconds after its file's start (`None` when either is unknown, or the file cannot
/// seek: one whole run), analysed at `rate` on `cores` cores. Where its `keyframes`
/// are known (the analysis's frames being the video's), each part after the first
/// starts on the frame after the keyframe nearest its even share (if one is within a
/// quarter of a share): its seek, a quarter
/// frame before that, then starts decoding at the keyframe, one frame early, where a
/// part starting on a keyframe would decode the whole GOP before it (on the bench's
/// clip, 2 s: the one part 0.17 s longer than the other).
pub(super) fn plan(
    duration_lead: Option<(f64, f64)>,
    rate: f64,
    (cores, max_seconds, keyframes): (usize, f64, &[u64]),
) -> Vec<Part> {
    let whole = vec![Part {
        start: 0,
        seek: None,
        seconds: max_seconds,
        threads: None,
    }];
    let Some((duration, lead)) = duration_lead else {
        return whole;
    };
    let count = (cores as f64).min((duration / MIN_PART_SECONDS).floor()) as u64;
    if count < 2 {
        return whole;
    }
    let frames = (duration * rate).round() as u64;
    let mut starts: Vec<u64> = (0..count).map(|k| k * frames / count).collect();
    // Within a quarter of a share: the parts stay about even.
    let reach = frames / count / 4;
    for start in starts.iter_mut().skip(1) {
        let even = *start;
        let nearest = keyframes.iter().min_by_key(|key| key.abs_diff(even));
        match nearest {
            Some(key) if key.abs_diff(even) <= reach && key + 1 < frames => *start = key + 1,
            _ => {}
        }
    }
    let threads = (cores / count as usize).max(1);
    starting_at(&starts, (rate, lead), threads, max_seconds)
}

/// Where an accurate seek (`-ss` before the input) starts at frame `frame` of a video
/// at `rate` whose first frame comes `lead` seconds into its file: a quarter frame
/// before the frame's time, so that rounding never lands past it. The seek then
/// decodes from the last keyframe before that time.
pub(super) fn seek_time(lead: f64, frame: u64, rate: f64) -> f64 {
    lead + (frame as f64 - 0.25) / rate
}

/// Parts starting at frames `starts` (the first 0) of a video at `rate` whose first
/// frame comes `lead` seconds after its file's start, each of `threads` threads.
pub(super) fn starting_at(
    starts: &[u64],
    (rate, lead): (f64, f64),
    threads: usize,
    max_seconds: f64,
) -> Vec<Part> {
    let at = |frame: u64| seek_time(lead, frame, rate);
    starts
        .iter()
        .enumerate()
        .map(|(k, &start)| {
            let from = if k == 0 { 0.0 } else { at(start) };
            let until = starts.get(k + 1).map_or(max_seconds, |&next| at(next));
            Part {
                start,
                seek: (k > 0).then_some(from),
                seconds: (until.min(max_seconds) - from).max(0.0),
                threads: Some(threads),
            }
        })
        .collect()
}

/// Runs `parts` and joins what they read; `on_frame` is called after every frame.
pub(super) async fn analyse_parts(
    media: &Media,
    input: &MediaFile,
    rate_milli: u64,
    parts: &[Part],
    on_frame: &(dyn Fn() + Send + Sync),
) -> Result<Analysis, MediaError> {
    let every = (rate_milli as f64 / 1000.0 / SCORED_PER_SECOND)
        .round()
        .max(1.0) as u64;
    let read: Mutex<Vec<Option<Analysis>>> = Mutex::new(parts.iter().map(|_| None).collect());
    run_pieces(media.lender(), parts.len(), |i| {
        let read = &read;
        async move {
            let part = run_part(media, input, (rate_milli, &parts[i]), every, on_frame).await?;
            read.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(part);
            Ok(())
        }
    })
    .await?;
    let read = read.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(join(read.into_iter().flatten().collect()))
}

/// One part's ffmpeg run: its frames shrunk to [`SIDE`]² planar RGB on a pipe,
/// analysed as they come.
async fn run_part(
    media: &Media,
    input: &MediaFile,
    (rate_milli, part): (u64, &Part),
    every: u64,
    on_frame: &(dyn Fn() + Send + Sync),
) -> Result<Analysis, MediaError> {
    let mut args = quiet_input_args_with(input, part.seconds, &part.options());
    // Bilinear samples, as PySceneDetect's own downscale (OpenCV's linear resize):
    // an area average reads every pixel, 0.7 s of a core more over 60 s of 1080p
    // (+50 % of a one-thread decode) against 0.17 s, for the same cuts on the bench.
    let filter =
        format!("fps=fps={rate_milli}/1000,scale={SIDE}:{SIDE}:flags=fast_bilinear,format=gbrp");
    let tail = ["-map", "0:v:0", "-vf", &filter, "-f", "rawvideo", "pipe:1"];
    args.extend(tail.map(Into::into));
    let mut read = Analysis::starting_at(part.start);
    let into = &mut read;
    media
        .runner()
        .run_reading(&media.config().ffmpeg, args, |mut pipe| async move {
            let mut gbr = vec![0u8; SIDE * SIDE * 3];
            loop {
                match pipe.read_exact(&mut gbr).await {
                    Ok(_) => into.frame(&gbr, every),
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                    Err(e) => return Err(e.into()),
                }
                on_frame();
            }
        })
        .await?;
    Ok(read)
}

/// The parts' analyses as one, each part's frames at its own start: a part that read
/// fewer frames than planned is held on its last picture up to the next part's start
/// (as `fps` would hold it), one that read more is cut there.
fn join(parts: Vec<Analysis>) -> Analysis {
    let mut all = Analysis::default();
    for part in parts.into_iter().filter(|p| !p.changes.is_empty()) {
        let at = part.start as usize;
        if all.changes.len() > at {
            all.changes.truncate(at);
            all.scored.retain(|(i, _)| (*i as usize) < at);
        } else {
            all.changes.resize(at, 0.0);
        }
        let mut changes = part.changes;
        if !all.previous.is_empty() {
            changes[0] = content_change(&all.previous, &part.first);
        }
        all.changes.extend(changes);
        all.scored.extend(part.scored);
        all.previous = part.previous;
    }
    all
}

#[cfg(test)]
mod tests;
