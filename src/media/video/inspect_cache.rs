//! The probe results of the last files inspected (see [`InfoCache`]).

use std::path::Path;

use crate::media::video::info::VideoInfo;

/// What the probes found for the last files inspected, so that the engine's cost
/// estimate and the command that runs next probe a file once between them. Keyed by
/// path, length and modification time: a file written again is probed again.
#[derive(Default)]
pub(crate) struct InfoCache {
    entries: std::sync::Mutex<std::collections::HashMap<InfoKey, VideoInfo>>,
}

type InfoKey = (std::path::PathBuf, u64, std::time::SystemTime);

/// Entries kept at most; past it the cache starts again empty (files are probed once
/// or twice in a row, so recency matters more than a perfect eviction order).
const INFO_CACHE_ENTRIES: usize = 256;

impl InfoCache {
    pub(super) async fn key(path: &Path) -> Option<InfoKey> {
        let meta = tokio::fs::metadata(path).await.ok()?;
        Some((path.to_path_buf(), meta.len(), meta.modified().ok()?))
    }

    pub(super) fn get(&self, key: &InfoKey) -> Option<VideoInfo> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.get(key).cloned()
    }

    pub(super) fn put(&self, key: InfoKey, info: VideoInfo) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= INFO_CACHE_ENTRIES {
            entries.clear();
        }
        entries.insert(key, info);
    }
}
