//! What the engine lends the one step it hands a [`Media`](crate::media::Media) to:
//! CPU slots beyond the one the step holds, and where a chunked encode's chunks run
//! when they run across nodes. The traits are the engine's to implement (`queue`); a
//! step reads them from its `Media` (`Media::lending`), so the dependency is in the
//! signature, not in a task-local.
//!
//! Work a step splits ([`run_pieces`]: a chunked encode's chunks, `video-scenes`'
//! analysis parts and poster runs) runs its first piece on the step's own CPU slot and
//! each further piece only on a slot it borrows, so its pieces count like any other
//! work: they wait their organization's turn behind other organizations' work, and
//! alone on a node they spread over every idle core. A plain `Media` (the media
//! layer's own tests, a tool) lends nothing, and the pieces then use every core of
//! the machine.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::format::MediaFormat;
use crate::media::cores;
use crate::media::error::MediaError;
use crate::media::file::MediaFile;

/// What the engine lends one step; a plain `Media` lends none.
#[derive(Clone, Default)]
pub struct Lent {
    pub(super) lender: Option<Arc<dyn CoreLender>>,
    pub(super) farm: Option<Arc<dyn ChunkFarm>>,
}

/// A slot held for one chunk; given back when dropped.
pub type Borrowed = Box<dyn Send>;

/// Lends CPU slots to the step that runs in its scope.
pub trait CoreLender: Send + Sync {
    /// Waits for one more slot for the running step, in turn with all other work
    /// waiting for one. Cancel-safe: a wait dropped before its turn takes nothing.
    fn borrow(&self) -> Pin<Box<dyn Future<Output = Borrowed> + Send + '_>>;
}

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

/// The pieces of a [`run_pieces`] call, handed out in order to whoever works next.
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
