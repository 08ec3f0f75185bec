//! Telling whoever waits on an edit that it ended (`done`, `failed`, `canceled`): the
//! long poll `GET /v1/edits/{id}?wait=S` and the webhook dispatcher.
//!
//! On this node the writer of the ending says so directly ([`FinishedEdits::finished`]);
//! on PostgreSQL a trigger on the edits table announces every ending with `NOTIFY`
//! (migration 0007), which each node's listener (`postgres::listen`) passes on here,
//! so a waiter on any node wakes whichever node ended the edit. Only ids someone waits
//! for are kept, and the map holds one entry per waited-on edit whatever the number
//! of waiters.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

/// Edits waited on, each with what wakes its waiters.
#[derive(Debug, Default)]
pub struct FinishedEdits {
    waited: Mutex<HashMap<String, Arc<Notify>>>,
    /// Woken on every ending (the webhook dispatcher).
    any: Notify,
}

impl FinishedEdits {
    pub fn new() -> Arc<FinishedEdits> {
        Arc::default()
    }

    /// Starts waiting for edit `id` to end. Call before reading the edit, then await
    /// [`Waiter::ended`]: an ending between the read and the await is not missed.
    pub fn wait_for(self: &Arc<Self>, id: &str) -> Waiter {
        let notify = self.lock().entry(id.to_string()).or_default().clone();
        Waiter {
            edits: self.clone(),
            id: id.to_string(),
            notify,
        }
    }

    /// Edit `id` ended: wakes its waiters and the dispatcher.
    pub fn finished(&self, id: &str) {
        if let Some(notify) = self.lock().get(id) {
            notify.notify_waiters();
        }
        self.any.notify_waiters();
    }

    /// Wakes every waiter to look again (announcements may have been lost while the
    /// listener was reconnecting).
    pub fn look_again(&self) {
        for notify in self.lock().values() {
            notify.notify_waiters();
        }
        self.any.notify_waiters();
    }

    /// Resolves at the next ending of any edit.
    pub fn any_ended(&self) -> Notified<'_> {
        self.any.notified()
    }

    /// What every ending wakes (the webhook dispatcher's claim loop).
    pub fn any(&self) -> &Notify {
        &self.any
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.waited.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One waiter on one edit; forgets the edit when its last waiter goes.
pub struct Waiter {
    edits: Arc<FinishedEdits>,
    id: String,
    notify: Arc<Notify>,
}

impl Waiter {
    /// Resolves when the edit is announced ended (or the waiter is told to look
    /// again). Enable the future before reading the edit.
    pub fn ended(&self) -> Notified<'_> {
        self.notify.notified()
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut waited = self.edits.lock();
        // Two references: the map's and this waiter's.
        if Arc::strong_count(&self.notify) == 2 {
            waited.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiter_wakes_when_its_edit_ends_and_only_then() {
        let edits = FinishedEdits::new();
        let waiter = edits.wait_for("e1");
        let mut ended = std::pin::pin!(waiter.ended());
        ended.as_mut().enable();
        edits.finished("e2");
        let early = tokio::time::timeout(Duration::from_millis(50), ended.as_mut()).await;
        assert!(early.is_err(), "another edit's ending wakes nobody here");
        edits.finished("e1");
        tokio::time::timeout(Duration::from_secs(1), ended)
            .await
            .expect("woken by its own edit");
    }

    #[test]
    fn the_last_waiter_to_go_forgets_the_edit() {
        let edits = FinishedEdits::new();
        let first = edits.wait_for("e1");
        let second = edits.wait_for("e1");
        assert_eq!(edits.lock().len(), 1, "one entry however many wait");
        drop(first);
        assert_eq!(edits.lock().len(), 1);
        drop(second);
        assert!(edits.lock().is_empty());
    }
}
