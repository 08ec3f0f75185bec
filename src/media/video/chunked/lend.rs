//! Cores beyond the one slot a step holds, lent by whoever runs the step.
//!
//! A chunked encode runs its first chunk on the step's own CPU slot and each further
//! chunk only on a slot it borrows, so its chunks count like any other work: they wait
//! their organization's turn behind other organizations' work, and alone on a node
//! they spread over every idle core. The engine lends its CPU slots for the run of a
//! step ([`with_lender`]); a run without a lender (the media layer's own tests, a tool)
//! uses every core of the machine.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A slot held for one chunk; given back when dropped.
pub type Borrowed = Box<dyn Send>;

/// Lends CPU slots to the step that runs in its scope.
pub trait CoreLender: Send + Sync {
    /// Waits for one more slot for the running step, in turn with all other work
    /// waiting for one. Cancel-safe: a wait dropped before its turn takes nothing.
    fn borrow(&self) -> Pin<Box<dyn Future<Output = Borrowed> + Send + '_>>;
}

tokio::task_local! {
    static LENDER: Arc<dyn CoreLender>;
}

/// Runs `work` (one step) with `lender` lending it slots.
pub async fn with_lender<F: Future>(lender: Arc<dyn CoreLender>, work: F) -> F::Output {
    LENDER.scope(lender, work).await
}

/// The lender of the step running now, if any.
pub(super) fn lender() -> Option<Arc<dyn CoreLender>> {
    LENDER.try_with(Arc::clone).ok()
}
