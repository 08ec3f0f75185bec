//! Cores beyond the one slot a step holds, lent by whoever runs the step.
//!
//! A chunked encode runs its first chunk on the step's own CPU slot and each further
//! chunk only on a slot it borrows, so its chunks count like any other work: they wait
//! their organization's turn behind other organizations' work, and alone on a node
//! they spread over every idle core. The engine lends its CPU slots for the run of a
//! step by handing the step a [`Media`] that carries them ([`Media::lending`]); a run
//! on a plain `Media` (the media layer's own tests, a tool) uses every core of the
//! machine.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::remote::ChunkFarm;
use crate::media::Media;

/// A slot held for one chunk; given back when dropped.
pub type Borrowed = Box<dyn Send>;

/// Lends CPU slots to the step that runs in its scope.
pub trait CoreLender: Send + Sync {
    /// Waits for one more slot for the running step, in turn with all other work
    /// waiting for one. Cancel-safe: a wait dropped before its turn takes nothing.
    fn borrow(&self) -> Pin<Box<dyn Future<Output = Borrowed> + Send + '_>>;
}

/// What the engine lends the one step a [`Media`] is handed to: further CPU slots,
/// and where its chunks run across nodes (see `remote`). A plain `Media` lends none.
#[derive(Clone, Default)]
pub struct Lent {
    lender: Option<Arc<dyn CoreLender>>,
    farm: Option<Arc<dyn ChunkFarm>>,
}

impl Media {
    /// This media layer for one step, with `lender` lending it CPU slots and, when
    /// chunks run across nodes, `farm` running its chunked encodes' chunks.
    pub fn lending(&self, lender: Arc<dyn CoreLender>, farm: Option<Arc<dyn ChunkFarm>>) -> Media {
        let mut media = self.clone();
        media.lent = Lent {
            lender: Some(lender),
            farm,
        };
        media
    }

    /// The lender of the step this `Media` was handed to, if any.
    pub(super) fn lender(&self) -> Option<&dyn CoreLender> {
        self.lent.lender.as_deref()
    }

    /// The farm of the step this `Media` was handed to, if any.
    pub(super) fn farm(&self) -> Option<&Arc<dyn ChunkFarm>> {
        self.lent.farm.as_ref()
    }
}
