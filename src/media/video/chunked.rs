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

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::media::ffmpeg::transcode::{self, map_args};
use crate::media::video::info::VideoInfo;
use crate::media::{cores, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

mod join;
pub(crate) mod ladder;
mod lend;
pub(crate) mod part;
mod pieces;
pub(crate) mod plan;
mod remote;
mod sizes;
pub(crate) mod x264;

use join::{concat_list, join_head};
pub use lend::{with_lender, Borrowed, CoreLender};
pub(crate) use part::Part;
use pieces::{run_piece, run_pieces, ChunkProgress, Piece, ScratchDir};
use plan::{Chunk, FrameCosts, Plan};
pub use remote::{encode_chunk, with_farm, BoxFuture, ChunkFarm, FarmJob, FarmedChunk};

/// An encode that may be split: the video filter and encoder options, the audio
/// encoder options (empty without audio) and the muxer, each run the same way in
/// the single-process recipe and in the chunks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SplitRecipe {
    pub filter: String,
    pub video: Vec<String>,
    pub audio: Vec<String>,
    pub muxer: &'static str,
    /// Frames between the encoder's own keyframes (its `-g`, stated in `video`):
    /// chunks are cut only there.
    pub keyframe_interval: u64,
    /// What decoding a source frame costs against encoding one (see
    /// `plan::plan`): a chunk decodes the source from the keyframe before its cut.
    pub decode_weight: f64,
    /// Options of the finished file alone (MP4's `-movflags +faststart`): given to the
    /// single-process run and to the join, not to the pieces, which are read once.
    pub muxer_options: Vec<String>,
    /// Seconds of output a second of source lasts (about `1 / speed` when `filter`
    /// retimes the frames, on the output rate's own grid; else 1): each chunk's place
    /// in the join is its frames' source length times this. The filter must then keep
    /// every frame (one out per one in).
    pub time_scale: f64,
    /// Cores one chunk's encoder keeps busy: a machine's cores are cut into one chunk
    /// per this many (1 for Theora and VP9; `--x264-cores-per-chunk` for x264).
    pub cores_per_chunk: usize,
    /// Whether `filter` reads a file of this node besides the source (an overlay's
    /// picture): then the chunks run on this node's slots only, never on another node.
    pub local_only: bool,
    /// The part of the source encoded, where not the whole (see `part`).
    pub part: Option<Part>,
}

impl SplitRecipe {
    /// The single-process recipe: both streams in one run.
    pub fn whole(&self) -> Vec<String> {
        let mut args = map_args(!self.audio.is_empty());
        args.extend(["-vf".to_string(), self.filter.clone()]);
        args.extend(self.video.iter().cloned());
        args.extend(self.audio.iter().cloned());
        args.extend(self.muxer_options.iter().cloned());
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        args
    }

    /// The options before `-i` and the recipe after it of `chunk`'s video.
    fn chunk(&self, chunk: &Chunk, rate: f64) -> (Vec<String>, Vec<String>) {
        let seek = match &self.part {
            Some(part) => Some(part.seek(chunk, rate)),
            None => chunk.seek(rate),
        };
        let seek = seek.map(|s| vec!["-ss".to_string(), part::seconds(s)]);
        // The seek leaves the first kept frame at its source time: restarted at zero,
        // the chunk's frames fall on the output rate's grid as the whole video's do.
        let filter = format!("setpts=PTS-STARTPTS,{}", self.filter);
        let mut args: Vec<String> = ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf"]
            .map(String::from)
            .into();
        args.push(filter);
        let rest = self.part.as_ref().and_then(|p| p.rest(chunk, rate));
        if !chunk.last {
            args.extend(["-frames:v".to_string(), chunk.count.to_string()]);
        } else if let Some(rest) = rest {
            args.extend(["-t".to_string(), part::seconds(rest)]);
        }
        args.extend(self.video.iter().cloned());
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        (seek.unwrap_or_default(), args)
    }

    /// The recipe of the audio alone.
    fn audio_only(&self) -> Vec<String> {
        let mut args: Vec<String> = ["-map", "0:a:0", "-vn", "-sn", "-dn"]
            .map(String::from)
            .into();
        args.extend(self.audio.iter().cloned());
        args.extend(self.part.iter().flat_map(Part::audio_cut));
        args.extend(["-f".to_string(), self.audio_muxer().to_string()]);
        args
    }

    /// The container of the audio piece: the output's, but Ogg for WebM. Opus read
    /// back from Matroska comes out earlier by its pre-skip (6.5 ms) than it went in,
    /// so a copy of it would start that much off the single-process encode's audio;
    /// from Ogg it comes back as the encoder made it.
    fn audio_muxer(&self) -> &'static str {
        match self.muxer {
            "webm" => "ogg",
            muxer => muxer,
        }
    }

    /// The options before `-i` and the recipe after it of the audio piece.
    fn audio_piece(&self) -> (Vec<String>, Vec<String>) {
        let input = self.part.iter().flat_map(Part::audio_input).collect();
        (input, self.audio_only())
    }
}

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
        remote::farm_and_slots().await
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

/// One chunked encode.
struct Chunked<'a> {
    media: &'a Media,
    input: &'a MediaFile,
    recipe: &'a SplitRecipe,
    plan: &'a Plan,
    format: MediaFormat,
    /// Where the chunks run across nodes: the farm, and the slots they were planned
    /// for; `None` on this node's slots.
    farm: Option<(Arc<dyn ChunkFarm>, usize)>,
}

impl Chunked<'_> {
    /// The joined file, or `None` when its frames do not add up (then nothing is left
    /// behind and the caller encodes in one process).
    async fn run(
        &self,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Option<MediaFile>, MediaError> {
        let dir = ScratchDir(out_dir.join(format!("chunks-{}", uuid::Uuid::new_v4().simple())));
        tokio::fs::create_dir(&dir.0).await?;
        let pieces = Piece::longest_first(self.plan.chunks.len(), !self.recipe.audio.is_empty());
        let chunks = ChunkProgress::new(self.plan, progress);
        let report = |index: usize, fraction: f64| chunks.report(index, fraction);
        // The seam: through the queue across nodes, or on this node's slots.
        if let Some((farm, slots)) = &self.farm {
            if !self.farm_pieces(&**farm, *slots, &dir.0, &report).await? {
                return Ok(None);
            }
        } else {
            run_pieces(pieces.len(), |i| self.piece(pieces[i], &dir.0, &report)).await?;
        }
        let (joined, frames) = self.join(&dir.0, out_dir).await?;
        if frames != Some(self.plan.frames) {
            tracing::warn!(
                expected = self.plan.frames,
                found = ?frames,
                "a chunked encode's frames did not add up; encoding in one process"
            );
            let _ = tokio::fs::remove_file(&joined.path).await;
            return Ok(None);
        }
        progress(1.0);
        Ok(Some(joined))
    }

    /// Encodes one piece into `dir`, reporting a chunk's progress to `report`.
    async fn piece(
        &self,
        piece: Piece,
        dir: &Path,
        report: &(dyn Fn(usize, f64) + Send + Sync),
    ) -> Result<(), MediaError> {
        let recipe = match piece {
            Piece::Video(i) => self.recipe.chunk(&self.plan.chunks[i], self.plan.rate),
            Piece::Audio => self.recipe.audio_piece(),
        };
        let output = self.piece_path(dir, piece);
        let run = (self.media, self.input, self.plan);
        run_piece(run, piece, recipe, &output, report).await
    }

    fn piece_path(&self, dir: &Path, piece: Piece) -> PathBuf {
        let extension = self.format.extension();
        match piece {
            Piece::Video(i) => dir.join(format!("chunk-{i}.{extension}")),
            Piece::Audio => dir.join(format!("audio.{}", self.recipe.audio_muxer())),
        }
    }
}

#[cfg(test)]
mod tests;
