//! Chunked encoding: a video whose encoder leaves cores idle (Theora encodes on one
//! thread; VP9's realtime mode on few) is cut into chunks of exact frame ranges, the
//! chunks are encoded at once on as many CPU slots as the engine lends (see `lend`),
//! and joined without re-encoding by ffmpeg's concat demuxer with stream copy. The
//! audio is encoded once, in a single pass beside the chunks, and muxed at the join.
//!
//! A chunk is read with an accurate input seek half a frame before its first frame,
//! its timestamps restarted at zero and its frame count fixed (`-frames:v`), so each
//! source frame lands in exactly one chunk; the join places each chunk at the exact
//! time of its first frame (the concat list's `duration`), so timestamps run on with
//! no frame dropped or repeated. Every chunk begins with a keyframe, the only cost in
//! size. Only a video that starts where its file does is split (see
//! `sizes::video_lead`). The joined file's frames are counted before it is handed on;
//! a count that differs from the source's (a source whose timestamps defeat the exact
//! seek) falls back to the single-process encode. Where splitting does not pay (see `plan`), the
//! single-process recipe runs as before; docs/PERFORMANCE.md has the threshold and
//! the measurements.

use std::path::Path;

use crate::format::MediaFormat;
use crate::media::cores;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{self};
use crate::media::file::MediaFile;
use crate::media::video::info::VideoInfo;

mod farm;
mod join;
pub(crate) mod ladder;
pub(crate) mod part;
mod pieces;
pub(crate) mod plan;
mod remote;
pub(crate) mod sizes;
pub(crate) mod x264;

pub use farm::encode_chunk;
pub(crate) use part::Part;
use plan::FrameCosts;

mod recipe;
pub(crate) use recipe::SplitRecipe;

mod encode;
use encode::Chunked;

/// Probes `input` (one of `accepted`), checks its limits and encodes it with the
/// recipe `recipe` makes of it (the commands inspect first themselves, to read what
/// their options need of the source; the tests come this way).
#[cfg(test)]
pub(crate) async fn convert(
    media: &Media,
    input: &MediaFile,
    accepted: &[MediaFormat],
    recipe: impl FnOnce(&VideoInfo) -> SplitRecipe,
    format: MediaFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = crate::media::video::inspect::inspect(media, input, accepted).await?;
    let recipe = recipe(&info);
    convert_inspected(media, (input, &info), &recipe, format, out_dir, progress).await
}

/// Encodes `input`, already inspected and checked against the limits (`info`), with
/// `recipe` into a file of `format`: in chunks where that pays, in one process
/// otherwise. Errors as [`transcode::convert`]'s.
pub(crate) async fn convert_inspected(
    media: &Media,
    (input, info): (&MediaFile, &VideoInfo),
    recipe: &SplitRecipe,
    format: MediaFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let split = try_split(media, (input, info), recipe, format, out_dir, progress);
    if let Some(file) = split.await? {
        return Ok(file);
    }
    let tail = recipe.whole();
    let seconds = info.duration.map(|d| d * recipe.time_scale);
    transcode::run_to_file(media, input, tail, format, seconds, out_dir, progress).await
}

/// The chunked encode of `input` (already inspected: `info`) with `recipe`, or `None`
/// where it does not split or its frames do not add up: then the caller encodes in
/// one process (`recipe.whole()`, or its own recipe of the same part).
pub(crate) async fn try_split(
    media: &Media,
    (input, info): (&MediaFile, &VideoInfo),
    recipe: &SplitRecipe,
    format: MediaFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Option<MediaFile>, MediaError> {
    let min_work = media.config().min_chunk_work;
    let interval = recipe.keyframe_interval;
    // One chunk for the cores its encoder keeps busy; across nodes, for every node's
    // slots rather than this node's cores.
    let farm = if recipe.local_only {
        None
    } else {
        farm::farm_and_slots(media).await
    };
    let slots = farm.as_ref().map_or_else(cores, |(_, slots)| *slots);
    let cores = slots / recipe.cores_per_chunk.max(1);
    // A part is planned over its own frames.
    let part_info = recipe.part.as_ref().map(|part| VideoInfo {
        frames: Some(part.frames),
        ..info.clone()
    });
    let planned = part_info.as_ref().unwrap_or(info);
    let plan = |costs: &FrameCosts| {
        let mut plan = plan::plan(planned, min_work, cores, interval, costs)?;
        plan.time_scale = recipe.time_scale;
        Some(plan)
    };
    // Where it splits at all, the frames are weighed by their bytes in the source.
    let seekable = input.format.seeks_to_keyframes();
    let mut split = plan(&FrameCosts::uniform(recipe.decode_weight)).filter(|_| seekable);
    if split.is_some() {
        let lead = sizes::video_lead(media, input).await;
        split = split.filter(|_| lead.is_some_and(|l| l.abs() < 1e-6));
    }
    if let (Some(_), Some(frames)) = (&split, info.frames) {
        let bytes = sizes::frame_bytes(media, input, frames).await;
        let bytes = match &recipe.part {
            Some(part) => bytes.and_then(|b| part.of(&b)),
            None => bytes,
        };
        if let Some(bytes) = bytes {
            let pixels = u64::from(info.shown.0) * u64::from(info.shown.1);
            split = plan(&FrameCosts::from_bytes(
                recipe.decode_weight,
                &bytes,
                pixels,
            ));
        }
    }
    if let Some(plan) = split {
        let chunked = Chunked {
            media,
            input,
            recipe,
            plan: &plan,
            format,
            farm,
        };
        return chunked.run(out_dir, progress).await;
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
