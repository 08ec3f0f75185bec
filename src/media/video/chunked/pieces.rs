//! How the pieces of a chunked encode (chunks of video, the audio) are worked: the
//! first on the step's own CPU slot, each further one on a slot borrowed from the
//! engine (see `lend`), and how their progress adds up. Shared by every chunked
//! encode (one file, `super`; the HLS ladder, `super::ladder`); `video::scenes` runs
//! the parts of its analysis with [`run_pieces`] too.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use super::plan::Plan;
use crate::media::cores;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::file::MediaFile;
use crate::media::lending::CoreLender;

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

/// Runs pieces `0..count` with `run`, in order, until all are done or one fails: the
/// first on the step's own slot, each further one while it holds a slot borrowed from
/// the step's `lender`, or, run without one, on one helper per further core.
pub(crate) async fn run_pieces<F, Fut>(
    lender: Option<&dyn CoreLender>,
    count: usize,
    run: F,
) -> Result<(), MediaError>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), MediaError>>,
{
    let queue = Queue::new(count);
    let own = queue.work(None, &run);
    // Without a lender, one helper per further core; with one, a helper per further
    // piece, each working only while it holds a borrowed slot.
    let further = count.saturating_sub(1);
    let helpers = match lender {
        Some(_) => further,
        None => (cores() - 1).min(further),
    };
    let helpers = (0..helpers).map(|_| queue.work(lender, &run));
    futures::try_join!(own, futures::future::try_join_all(helpers))?;
    Ok(())
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
pub(super) struct ScratchDir(pub PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: what is left is under the job's temp dir, removed after the job.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
