//! The upload bodies this node is streaming, so that terminating an upload stops them.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// The bodies this node is streaming, by upload, so that terminating an upload stops
/// them at once (their parts are then never written; on another node, the part is
/// deleted when its row cannot be recorded).
#[derive(Default)]
pub struct InFlightUploads {
    pub(super) streams: Mutex<HashMap<String, (CancellationToken, usize)>>,
}

impl InFlightUploads {
    /// Registers a body of upload `id`; the guard's token is cancelled by [`Self::stop`].
    pub(super) fn enter(self: &std::sync::Arc<Self>, id: &str) -> InFlight {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let (token, count) = streams
            .entry(id.to_string())
            .or_insert_with(|| (CancellationToken::new(), 0));
        *count += 1;
        InFlight {
            uploads: self.clone(),
            id: id.to_string(),
            token: token.clone(),
        }
    }

    /// Stops every body of upload `id` streaming on this node.
    pub fn stop(&self, id: &str) {
        let streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((token, _)) = streams.get(id) {
            token.cancel();
        }
    }
}

/// One registered body; leaves the registry when dropped.
pub(super) struct InFlight {
    pub(super) uploads: std::sync::Arc<InFlightUploads>,
    pub(super) id: String,
    pub(super) token: CancellationToken,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut streams = self
            .uploads
            .streams
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, count)) = streams.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                streams.remove(&self.id);
            }
        }
    }
}
