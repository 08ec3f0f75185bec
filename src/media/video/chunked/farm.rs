//! The seam where a chunked encode's video chunks run through the queue rather than
//! on this node's slots alone (`--chunk-across-nodes`, docs/ARCHITECTURE.md "Chunk
//! claims"). The engine sets a [`ChunkFarm`] for the run of a step (as it lends CPU
//! slots, see `lend`); a chunked encode that finds one hands it its chunks, each an
//! ffmpeg recipe any node can run on the source ([`encode_chunk`]), encodes the audio
//! on its own slot meanwhile, and joins the chunk files the farm brings back exactly
//! as it joins its own. The plan, the recipes and the join are the same either way.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::{input_args_with, run_ffmpeg};
use crate::media::file::MediaFile;

/// One chunk as any node runs it: the options before `-i` (the seek), the recipe
/// after it, and how long its output lasts (for progress; `None` when unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FarmedChunk {
    pub options: Vec<String>,
    pub tail: Vec<String>,
    pub seconds: Option<f64>,
}

/// A chunked encode handed to a farm.
pub struct FarmJob<'a> {
    pub source: &'a MediaFile,
    /// The chunks, in order.
    pub chunks: Vec<FarmedChunk>,
    /// The chunks' format.
    pub format: MediaFormat,
    /// Where each chunk's file must be once done (beside the join's list).
    pub outputs: Vec<PathBuf>,
    /// Told when a chunk is done (index, fraction done).
    pub report: &'a (dyn Fn(usize, f64) + Send + Sync),
    /// The slots the chunks were planned for ([`ChunkFarm::slots`]).
    pub slots: usize,
}

/// A boxed future, as a trait object method returns it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs the chunks of encodes as claims in the queue.
pub trait ChunkFarm: Send + Sync {
    /// Runs `job`'s chunks, on this step's own slot and wherever else a node claims
    /// them, runs `own` (the audio) on this step's slot once it finds no chunk left to
    /// claim, and waits until every chunk is done. `Ok(true)` when every chunk's file
    /// is at its place in `job.outputs`; `Ok(false)` when a chunk failed or ran out
    /// of attempts (the caller then encodes in one process, which reports the cause
    /// if the source is at fault).
    fn encode<'a>(
        &'a self,
        job: FarmJob<'a>,
        own: BoxFuture<'a, Result<(), MediaError>>,
    ) -> BoxFuture<'a, Result<bool, MediaError>>;

    /// How many chunks run at once across the nodes: an encode is planned for that
    /// many cores rather than this node's.
    fn slots(&self) -> BoxFuture<'_, usize>;
}

tokio::task_local! {
    static FARM: Arc<dyn ChunkFarm>;
}

/// Runs `work` (one step) with its chunked encodes' chunks run by `farm`.
pub async fn with_farm<F: Future>(farm: Arc<dyn ChunkFarm>, work: F) -> F::Output {
    FARM.scope(farm, work).await
}

/// The farm of the step running now, if any, and the slots to plan its chunks for.
pub(super) async fn farm_and_slots() -> Option<(Arc<dyn ChunkFarm>, usize)> {
    let farm = FARM.try_with(Arc::clone).ok()?;
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
