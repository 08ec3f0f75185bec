//! The sources of other nodes' encodes, as this node's chunk workers read them: each
//! downloaded from storage once per node, not once per chunk. An encode of a long
//! video cut for a whole cluster hands a node several of its chunks, often at once;
//! without this each one fetched the whole source again (a 1 GB upload, sixteen
//! chunks, sixteen downloads). A source is kept while a chunk uses it and for
//! [`KEEP_IDLE`] after, then deleted, so the disk holds only what runs now.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

/// How long a downloaded source is kept once no chunk uses it: the chunks of one
/// encode are claimed within moments of each other, and a later one is cheaper to
/// wait for on disk than to fetch again.
pub(super) const KEEP_IDLE: Duration = Duration::from_secs(30);

/// The downloaded sources of one node, by storage key.
pub struct SourceCache {
    dir: PathBuf,
    entries: Mutex<HashMap<String, Arc<Entry>>>,
}

struct Entry {
    path: PathBuf,
    /// Set once the download succeeded; a failed one leaves it empty for a retry.
    ready: OnceCell<()>,
    last_used: Mutex<Instant>,
}

/// A source on this node's disk, kept while this lives.
pub(super) struct CachedSource {
    entry: Arc<Entry>,
}

impl CachedSource {
    pub fn path(&self) -> &Path {
        &self.entry.path
    }
}

impl Drop for CachedSource {
    fn drop(&mut self) {
        *self
            .entry
            .last_used
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

impl SourceCache {
    /// Sources are downloaded into `dir`.
    pub fn new(dir: PathBuf) -> SourceCache {
        SourceCache {
            dir,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The source stored under `key`, downloaded into the given path by `download`
    /// unless this node has it already (or is downloading it: then this waits for
    /// that download rather than starting another).
    pub(super) async fn get<F, Fut, E>(&self, key: &str, download: F) -> Result<CachedSource, E>
    where
        F: FnOnce(PathBuf) -> Fut,
        Fut: Future<Output = Result<(), E>>,
    {
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries
                .entry(key.to_string())
                .or_insert_with(|| {
                    let name = hex::encode(Sha256::digest(key.as_bytes()));
                    Arc::new(Entry {
                        path: self.dir.join(name),
                        ready: OnceCell::new(),
                        last_used: Mutex::new(Instant::now()),
                    })
                })
                .clone()
        };
        entry
            .ready
            .get_or_try_init(|| async {
                tokio::fs::create_dir_all(&self.dir).await.ok();
                download(entry.path.clone()).await
            })
            .await?;
        Ok(CachedSource { entry })
    }

    /// Deletes the sources no chunk has used for `idle`; how many.
    pub(super) async fn evict_idle(&self, idle: Duration) -> usize {
        let gone: Vec<Arc<Entry>> = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let idle_keys: Vec<String> = entries
                .iter()
                .filter(|(_, entry)| {
                    // Only the map holds it: no chunk uses it, none is downloading it.
                    Arc::strong_count(entry) == 1
                        && entry
                            .last_used
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .elapsed()
                            >= idle
                })
                .map(|(key, _)| key.clone())
                .collect();
            idle_keys
                .iter()
                .filter_map(|key| entries.remove(key))
                .collect()
        };
        for entry in &gone {
            let _ = tokio::fs::remove_file(&entry.path).await;
        }
        gone.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    async fn write(path: PathBuf, downloads: &AtomicUsize) -> Result<(), String> {
        downloads.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        tokio::fs::write(&path, b"source")
            .await
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn chunks_of_one_source_on_one_node_download_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SourceCache::new(dir.path().join("sources"));
        let downloads = AtomicUsize::new(0);
        let get = || cache.get("edits/a/scratch/s/source", |p| write(p, &downloads));
        let (a, b) = tokio::join!(get(), get());
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.path(), b.path());
        assert_eq!(std::fs::read(a.path()).unwrap(), b"source");
        drop((a, b));
        let c = get().await.unwrap();
        assert_eq!(downloads.load(Ordering::SeqCst), 1, "downloaded once");
        let other = cache.get("edits/b/scratch/s/source", |p| write(p, &downloads));
        assert_ne!(other.await.unwrap().path(), c.path());
        assert_eq!(downloads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_failed_download_is_tried_again_by_the_next_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SourceCache::new(dir.path().to_path_buf());
        let failed = cache
            .get("k", |_| async { Err::<(), _>("storage unreachable") })
            .await;
        assert!(failed.is_err());
        let downloads = AtomicUsize::new(0);
        let got = cache.get("k", |p| write(p, &downloads)).await.unwrap();
        assert_eq!(std::fs::read(got.path()).unwrap(), b"source");
    }

    #[tokio::test]
    async fn only_sources_no_chunk_uses_are_deleted_once_idle() {
        let dir = tempfile::tempdir().unwrap();
        let cache = SourceCache::new(dir.path().to_path_buf());
        let downloads = AtomicUsize::new(0);
        let used = cache.get("used", |p| write(p, &downloads)).await.unwrap();
        let idle = cache.get("idle", |p| write(p, &downloads)).await.unwrap();
        let idle_path = idle.path().to_path_buf();
        drop(idle);
        assert_eq!(
            cache.evict_idle(Duration::from_secs(60)).await,
            0,
            "not idle long enough"
        );
        assert_eq!(cache.evict_idle(Duration::ZERO).await, 1);
        assert!(!idle_path.exists(), "its file is deleted");
        assert!(used.path().exists(), "a source in use stays");
        drop(used);
        assert_eq!(cache.evict_idle(Duration::ZERO).await, 1);
        let again = cache.get("idle", |p| write(p, &downloads)).await.unwrap();
        assert!(again.path().exists());
        assert_eq!(
            downloads.load(Ordering::SeqCst),
            3,
            "an evicted source is fetched again"
        );
    }
}
