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
//! size. The joined file's frames are counted before it is handed on; a count that
//! differs from the source's (a source whose timestamps defeat the exact seek) falls
//! back to the single-process encode. Where splitting does not pay (see `plan`), the
//! single-process recipe runs as before; docs/PERFORMANCE.md has the threshold and
//! the measurements.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use crate::media::ffmpeg::input::file_url;
use crate::media::ffmpeg::transcode::{self, map_args};
use crate::media::video::info::VideoInfo;
use crate::media::video::probe;
use crate::media::{cores, output_path, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

mod lend;
pub(crate) mod plan;
mod remote;
mod sizes;

pub use lend::{with_lender, Borrowed, CoreLender};
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
}

impl SplitRecipe {
    /// The single-process recipe: both streams in one run.
    pub fn whole(&self) -> Vec<String> {
        let mut args = map_args(!self.audio.is_empty());
        args.extend(["-vf".to_string(), self.filter.clone()]);
        args.extend(self.video.iter().cloned());
        args.extend(self.audio.iter().cloned());
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        args
    }

    /// The options before `-i` and the recipe after it of `chunk`'s video.
    fn chunk(&self, chunk: &Chunk, rate: f64) -> (Vec<String>, Vec<String>) {
        let seek = chunk
            .seek(rate)
            .map(|s| vec!["-ss".to_string(), format!("{s:.6}")]);
        // The seek leaves the first kept frame at its source time: restarted at zero,
        // the chunk's frames fall on the output rate's grid as the whole video's do.
        let filter = format!("setpts=PTS-STARTPTS,{}", self.filter);
        let mut args: Vec<String> = ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf"]
            .map(String::from)
            .into();
        args.push(filter);
        if !chunk.last {
            args.extend(["-frames:v".to_string(), chunk.count.to_string()]);
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
        args.extend(["-f".to_string(), self.muxer.to_string()]);
        args
    }
}

/// Probes `input` (one of `accepted`), checks its limits and encodes it with the
/// recipe `recipe` makes of it into a file of `format`: in chunks where that pays,
/// in one process otherwise. Errors as [`transcode::convert`]'s.
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
    let min_work = media.config().min_chunk_work;
    let interval = recipe.keyframe_interval;
    let plan = |costs: &FrameCosts| plan::plan(&info, min_work, cores(), interval, costs);
    // Where it splits at all, the frames are weighed by their bytes in the source.
    let mut split = plan(&FrameCosts::uniform(recipe.decode_weight));
    if let (Some(_), Some(frames)) = (&split, info.frames) {
        if let Some(bytes) = sizes::frame_bytes(media, input, frames).await {
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
            recipe: &recipe,
            plan: &plan,
            format,
        };
        if let Some(file) = chunked.run(out_dir, progress).await? {
            return Ok(file);
        }
    }
    let tail = recipe.whole();
    transcode::run_to_file(media, input, tail, format, info.duration, out_dir, progress).await
}

/// One chunked encode.
struct Chunked<'a> {
    media: &'a Media,
    input: &'a MediaFile,
    recipe: &'a SplitRecipe,
    plan: &'a Plan,
    format: MediaFormat,
}

/// A piece of work of a chunked encode: a chunk of the video, or the whole audio.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Video(usize),
    Audio,
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
        // Longest first, as a list schedule should be: a chunk decodes the source from
        // the keyframe before its cut, so the later it starts the more it costs (all
        // of it before the cut, for the common source with one keyframe in 10 s). The
        // audio goes last: short beside a chunk, it evens out the end.
        let mut pieces: Vec<Piece> = (0..self.plan.chunks.len())
            .rev()
            .map(Piece::Video)
            .collect();
        if !self.recipe.audio.is_empty() {
            pieces.push(Piece::Audio);
        }
        let done = Mutex::new(vec![0.0; self.plan.chunks.len()]);
        let report = |index: usize, fraction: f64| {
            let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
            done[index] = fraction * self.plan.chunks[index].count as f64;
            let frames: f64 = done.iter().sum();
            // The join is left for the last hundredth.
            progress((frames / self.plan.frames as f64 * 0.99).min(0.99));
        };
        // The seam: through the queue across nodes, or on this node's slots.
        if let Some(farm) = remote::farm() {
            if !self.farm_pieces(&*farm, &dir.0, &report).await? {
                return Ok(None);
            }
        } else {
            let queue = Queue::new(pieces.len());
            let run_piece = |i: usize| self.piece(pieces[i], &dir.0, &report);
            let own = queue.work(None, &run_piece);
            let lender = lend::lender();
            // Without a lender, one helper per further core; with one, a helper per further
            // piece, each working only while it holds a borrowed slot.
            let helpers = match &lender {
                Some(_) => pieces.len() - 1,
                None => (cores() - 1).min(pieces.len() - 1),
            };
            let helpers = (0..helpers).map(|_| queue.work(lender.as_deref(), &run_piece));
            futures::try_join!(own, futures::future::try_join_all(helpers))?;
        }
        let joined = self.join(&dir.0, out_dir).await?;
        let counted = probe::run(self.media, &joined.path, self.format, true).await?;
        let frames = counted.video().and_then(|v| v.nb_read_packets);
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
        let (options, tail, seconds) = match piece {
            Piece::Video(i) => {
                let chunk = &self.plan.chunks[i];
                let (options, tail) = self.recipe.chunk(chunk, self.plan.rate);
                (options, tail, Some(chunk.seconds(self.plan.rate)))
            }
            Piece::Audio => (Vec::new(), self.recipe.audio_only(), None),
        };
        let output = self.piece_path(dir, piece);
        let on_progress = |fraction: f64| {
            if let Piece::Video(i) = piece {
                report(i, fraction);
            }
        };
        let recipe = (options.as_slice(), tail);
        encode_chunk(
            self.media,
            self.input,
            recipe,
            seconds,
            &output,
            &on_progress,
        )
        .await
    }

    fn piece_path(&self, dir: &Path, piece: Piece) -> PathBuf {
        let extension = self.format.extension();
        match piece {
            Piece::Video(i) => dir.join(format!("chunk-{i}.{extension}")),
            Piece::Audio => dir.join(format!("audio.{extension}")),
        }
    }

    /// Joins the chunks in `dir` (and the audio) into one file in `out_dir`, copying
    /// every packet: the concat demuxer places each chunk at the sum of the durations
    /// before it, which the list states exactly.
    async fn join(&self, dir: &Path, out_dir: &Path) -> Result<MediaFile, MediaError> {
        let list = dir.join("chunks.txt");
        tokio::fs::write(&list, self.concat_list()).await?;
        let output = output_path(out_dir, self.format);
        let mut args: Vec<OsString> = [
            "-nostdin",
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostats",
            "-n",
            "-protocol_whitelist",
            "file",
            "-f",
            "concat",
            "-i",
        ]
        .map(OsString::from)
        .into();
        let with_audio = !self.recipe.audio.is_empty();
        if with_audio {
            if let Some(lead) = self.audio_lead(dir).await? {
                args.splice(8..8, ["-itsoffset".into(), format!("{lead:.6}").into()]);
            }
        }
        args.push(file_url(&list));
        if with_audio {
            args.extend(["-f", self.recipe.muxer, "-i"].map(OsString::from));
            args.push(file_url(&self.piece_path(dir, Piece::Audio)));
        }
        args.extend(["-map", "0:v:0"].map(OsString::from));
        if with_audio {
            args.extend(["-map", "1:a:0"].map(OsString::from));
        }
        args.extend(
            ["-c", "copy", "-map_metadata", "-1", "-f", self.recipe.muxer].map(OsString::from),
        );
        args.push(file_url(&output));
        let ffmpeg = &self.media.config().ffmpeg;
        if let Err(e) = self.media.runner().run(ffmpeg, args).await {
            let _ = tokio::fs::remove_file(&output).await;
            return Err(e);
        }
        Ok(MediaFile {
            path: output,
            format: self.format,
        })
    }

    /// How far the audio starts before zero (Opus's pre-skip), when it does. The
    /// single-process encode shifts both streams by that much so that none starts
    /// below zero; the video of the join is shifted the same, so that it keeps the
    /// same times, and the same sync, as the single-process encode.
    async fn audio_lead(&self, dir: &Path) -> Result<Option<f64>, MediaError> {
        let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "a:0"]
            .map(OsString::from)
            .into();
        args.extend(
            [
                "-show_entries",
                "packet=pts_time",
                "-read_intervals",
                "%+#1",
            ]
            .map(OsString::from),
        );
        args.extend(["-of", "csv=p=0", "-f", self.recipe.muxer].map(OsString::from));
        args.push(file_url(&self.piece_path(dir, Piece::Audio)));
        let out = self
            .media
            .runner()
            .run(&self.media.config().ffprobe, args)
            .await?;
        let first = String::from_utf8_lossy(&out.stdout);
        let first = first
            .lines()
            .next()
            .and_then(|l| l.trim().trim_end_matches(',').parse::<f64>().ok());
        Ok(first.filter(|t| *t < 0.0).map(|t| -t))
    }

    /// The concat demuxer's list: each chunk by its name beside the list, with its
    /// exact length (the last one's is whatever it holds).
    fn concat_list(&self) -> String {
        let extension = self.format.extension();
        let mut list = String::from("ffconcat version 1.0\n");
        for chunk in &self.plan.chunks {
            list.push_str(&format!("file chunk-{}.{extension}\n", chunk.index));
            if !chunk.last {
                list.push_str(&format!("duration {:.9}\n", chunk.seconds(self.plan.rate)));
            }
        }
        list
    }
}

/// The pieces of a chunked encode, handed out in order to whoever works next.
struct Queue {
    next: AtomicUsize,
    len: usize,
    /// Cancelled once the last piece is taken: helpers still waiting for a slot stop.
    all_taken: CancellationToken,
}

impl Queue {
    fn new(len: usize) -> Queue {
        Queue {
            next: AtomicUsize::new(0),
            len,
            all_taken: CancellationToken::new(),
        }
    }

    fn take(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i + 1 >= self.len {
            self.all_taken.cancel();
        }
        (i < self.len).then_some(i)
    }

    /// Works pieces until none is left: on the step's own slot (`lender` `None`), or
    /// each on a slot borrowed from `lender` for it.
    async fn work<F, Fut>(&self, lender: Option<&dyn CoreLender>, run: &F) -> Result<(), MediaError>
    where
        F: Fn(usize) -> Fut,
        Fut: std::future::Future<Output = Result<(), MediaError>>,
    {
        loop {
            let slot = match lender {
                Some(lender) => tokio::select! {
                    slot = lender.borrow() => Some(slot),
                    _ = self.all_taken.cancelled() => return Ok(()),
                },
                None => None,
            };
            let Some(i) = self.take() else {
                return Ok(());
            };
            run(i).await?;
            drop(slot);
        }
    }
}

/// A directory removed with everything in it when dropped.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: what is left is under the job's temp dir, removed after the job.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests;
