//! How the pieces of a chunked encode (chunks of video, the audio) are worked (each
//! on a CPU slot, `lending::run_pieces`) and how their progress adds up. Shared by
//! every chunked encode (one file, `super`; the HLS ladder, `super::ladder`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::plan::Plan;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::file::MediaFile;

/// A piece of work of a chunked encode: a chunk of the video, or the whole audio.
#[derive(Debug, Clone, Copy)]
pub(super) enum Piece {
    Video(usize),
    Audio,
}

impl Piece {
    /// The pieces of `chunks` video chunks (and the audio, `with_audio`) in the order
    /// they are handed out: longest first, as a list schedule should be. A chunk decodes
    /// the source from the keyframe before its cut, so the later it starts the more it
    /// costs (all of it before the cut, for the common source with one keyframe in
    /// 10 s); the audio goes last: short beside a chunk, it evens out the end.
    pub fn longest_first(chunks: usize, with_audio: bool) -> Vec<Piece> {
        let audio = with_audio.then_some(Piece::Audio);
        (0..chunks).rev().map(Piece::Video).chain(audio).collect()
    }
}

/// Encodes `piece` of `input` (cut by `plan`) with its recipe, the options before the
/// input and the arguments after it, into `output`; a chunk reports its progress, as a
/// fraction of its own length, to `report`.
pub(super) async fn run_piece(
    (media, input, plan): (&Media, &MediaFile, &Plan),
    piece: Piece,
    (options, tail): (Vec<String>, Vec<String>),
    output: &Path,
    report: &(dyn Fn(usize, f64) + Send + Sync),
) -> Result<(), MediaError> {
    let seconds = match piece {
        Piece::Video(i) => Some(plan.seconds(&plan.chunks[i])),
        Piece::Audio => None,
    };
    let on_progress = |fraction: f64| {
        if let Piece::Video(i) = piece {
            report(i, fraction);
        }
    };
    let recipe = (options.as_slice(), tail);
    crate::media::video::chunked::farm::encode_chunk(
        media,
        input,
        recipe,
        seconds,
        output,
        &on_progress,
    )
    .await
}

/// The progress of a chunked encode: the frames done in every chunk over the whole
/// video's, the join left for the last hundredth.
pub(super) struct ChunkProgress<'a> {
    plan: &'a Plan,
    done: Mutex<Vec<f64>>,
    progress: ProgressFn<'a>,
}

impl<'a> ChunkProgress<'a> {
    pub fn new(plan: &'a Plan, progress: ProgressFn<'a>) -> ChunkProgress<'a> {
        let done = Mutex::new(vec![0.0; plan.chunks.len()]);
        ChunkProgress {
            plan,
            done,
            progress,
        }
    }

    /// Chunk `index` is `fraction` done.
    pub fn report(&self, index: usize, fraction: f64) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        done[index] = fraction * self.plan.chunks[index].count as f64;
        let frames: f64 = done.iter().sum();
        (self.progress)((frames / self.plan.frames as f64 * 0.99).min(0.99));
    }
}

/// A directory removed with everything in it when dropped.
pub(super) struct ScratchDir(pub PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: what is left is under the job's temp dir, removed after the job.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
