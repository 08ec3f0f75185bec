//! Stopping in-process image work whose job was given up.
//!
//! Image steps run on blocking threads, which an aborted task cannot stop: a job that
//! timed out, lost its lease or was handed back at shutdown would otherwise go on
//! decoding and encoding to the end. [`crate::media::blocking`] gives each closure a flag,
//! raised when the task awaiting it is dropped; the steps call [`checkpoint`] between
//! their phases (decode, resize, encode) and stop there with [`MediaError::Canceled`],
//! which nobody reads: the job is gone.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::media::error::MediaError;

thread_local! {
    /// The flag of the closure running on this blocking thread, if any.
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// `Canceled` when the job that started the work on this thread was given up.
pub(crate) fn checkpoint() -> Result<(), MediaError> {
    let raised = FLAG.with(|flag| {
        flag.borrow()
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    });
    if raised {
        Err(MediaError::Canceled)
    } else {
        Ok(())
    }
}

/// Raises its flag when dropped: held by the task that awaits the work.
pub(crate) struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A new flag: the guard for the awaiting task, and a wrapper that runs `f` on the
/// blocking thread with the flag installed for [`checkpoint`].
pub(crate) fn guarded<T>(
    f: impl FnOnce() -> T + Send + 'static,
) -> (CancelOnDrop, impl FnOnce() -> T + Send + 'static) {
    let flag = Arc::new(AtomicBool::new(false));
    let guard = CancelOnDrop(flag.clone());
    let run = move || {
        FLAG.with(|slot| *slot.borrow_mut() = Some(flag));
        let result = f();
        FLAG.with(|slot| *slot.borrow_mut() = None);
        result
    };
    (guard, run)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn work_on_a_blocking_thread_stops_at_its_next_checkpoint_once_its_task_is_dropped() {
        let stopped = Arc::new(AtomicBool::new(false));
        let work = {
            let stopped = stopped.clone();
            super::super::blocking(move || {
                let result: Result<(), MediaError> = loop {
                    if let Err(e) = checkpoint() {
                        break Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(2));
                };
                stopped.store(true, Ordering::SeqCst);
                result
            })
        };
        let gave_up = tokio::time::timeout(Duration::from_millis(50), work).await;
        assert!(gave_up.is_err(), "the work never ends on its own");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(stopped.load(Ordering::SeqCst), "it stopped at a checkpoint");
        assert!(checkpoint().is_ok(), "other threads carry no flag");
    }
}
