//! The seam where a chunked encode's video chunks run through the queue rather than
//! on this node's slots alone (`--chunk-across-nodes`, docs/ARCHITECTURE.md "Chunk
//! claims"). The engine hands a step a `Media` that carries a `ChunkFarm` (as it lends
//! CPU slots, see `media::lending`); a chunked encode that finds one hands it its chunks, each an
//! ffmpeg recipe any node can run on the source ([`encode_chunk`]), encodes the audio
//! on its own slot meanwhile, and joins the chunk files the farm brings back exactly
//! as it joins its own. The plan, the recipes and the join are the same either way.

use std::path::Path;
use std::sync::Arc;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{input_args_with, run_ffmpeg};
use crate::media::file::MediaFile;
use crate::media::lending::ChunkFarm;

/// The farm of the step `media` was handed to, if any, and the slots to plan its
/// chunks for.
pub(super) async fn farm_and_slots(media: &Media) -> Option<(Arc<dyn ChunkFarm>, usize)> {
    let farm = media.farm()?.clone();
    let slots = farm.slots().await;
    Some((farm, slots))
}

/// Encodes one chunk of `source` (`options` before `-i`, `tail` after it) into
/// `output`: what a chunked encode runs for each of its pieces, and a node that
/// claimed a chunk runs for it.
pub async fn encode_chunk(
    media: &Media,
    source: &MediaFile,
    (options, tail): (&[String], Vec<String>),
    seconds: Option<f64>,
    output: &Path,
    progress: ProgressFn<'_>,
) -> Result<(), MediaError> {
    let max_seconds = media.config().max_video_seconds;
    let input = (source.path.as_path(), demuxer(source.format));
    let head = input_args_with(input, max_seconds, options);
    run_ffmpeg(media, head, tail, file_url(output), seconds, progress).await
}
