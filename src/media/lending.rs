//! What the engine lends the one step it hands a [`Media`](crate::media::Media) to:
//! CPU slots beyond the one the step holds, and where a chunked encode's chunks run
//! when they run across nodes. The traits are the engine's to implement (`queue`); a
//! step reads them from its `Media` (`Media::lending`), so the dependency is in the
//! signature, not in a task-local.
//!
//! A chunked encode runs its first chunk on the step's own CPU slot and each further
//! chunk only on a slot it borrows, so its chunks count like any other work: they wait
//! their organization's turn behind other organizations' work, and alone on a node
//! they spread over every idle core. A plain `Media` (the media layer's own tests, a
//! tool) lends nothing, and a chunked encode then uses every core of the machine.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::format::MediaFormat;
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
