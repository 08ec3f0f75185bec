//! Stopping a running edit at once when it is canceled or deleted.
//!
//! The database is the authority: a cancel moves the edit out of `processing`, so the
//! worker's next fenced write (its heartbeat at the latest) fails and it stops. That
//! takes up to a third of a lease; this registry makes it immediate. The API cancels
//! the edit's token here when the edit runs on this node, and on PostgreSQL announces
//! the cancel with `NOTIFY` so that the node running it does the same
//! (`postgres::listen`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// The edits this node runs, each with the token that stops it.
#[derive(Debug, Default)]
pub struct RunningEdits {
    /// Per edit id: which registration it is, and its token.
    tokens: Mutex<HashMap<String, (u64, CancellationToken)>>,
    serial: AtomicU64,
}

impl RunningEdits {
    pub fn new() -> Arc<RunningEdits> {
        Arc::default()
    }

    /// Registers edit `id` as running here until the returned guard is dropped; the
    /// token is cancelled by [`RunningEdits::cancel`].
    pub fn register(self: &Arc<Self>, id: &str) -> Running {
        let token = CancellationToken::new();
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id.to_string(), (serial, token.clone()));
        Running {
            edits: self.clone(),
            id: id.to_string(),
            serial,
            token,
        }
    }

    /// Stops edit `id` if it runs here; true when it did.
    pub fn cancel(&self, id: &str) -> bool {
        match self.lock().get(id) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, CancellationToken)>> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One registered running edit; unregisters on drop.
pub struct Running {
    edits: Arc<RunningEdits>,
    id: String,
    serial: u64,
    pub token: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut tokens = self.edits.lock();
        // A later claim of the same edit on this node may have replaced the entry.
        if tokens
            .get(&self.id)
            .is_some_and(|(serial, _)| *serial == self.serial)
        {
            tokens.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_the_running_edit_and_nothing_once_it_ended() {
        let edits = RunningEdits::new();
        let running = edits.register("e1");
        assert!(!edits.cancel("e2"));
        assert!(edits.cancel("e1"));
        assert!(running.token.is_cancelled());
        drop(running);
        assert!(!edits.cancel("e1"));
    }
}
