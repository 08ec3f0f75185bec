//! The render cache: rendered images and the sources fetched for them, stored as
//! objects under `render/` in the service's storage (local files or S3), so every node
//! of a cluster shares them, and indexed in the database (`render_cache`: size, ETag,
//! last use). Past `--render-cache-bytes`, the least recently used entries are deleted,
//! objects first.
//!
//! Each node also remembers the entries it has seen, so a hit costs no database read;
//! the last use is written back at most every [`TOUCH_EVERY`] per entry, which is all
//! the precision least-recently-used eviction needs. An entry another node evicted, or
//! deleted with the upload it was rendered from, is found missing when its object is
//! read; it is then forgotten (and made again, or refused for the upload gone).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::db::{unix_ms, Db, DbError, RenderCacheRow};
use crate::storage::{Storage, StorageError};

/// How often a node writes an entry's last use back to the database.
const TOUCH_EVERY: Duration = Duration::from_secs(30);
/// Entries a node remembers at most (past it, it starts afresh from the database).
const MAX_KNOWN: usize = 100_000;
/// Entries deleted per round of an eviction.
const EVICT_BATCH: i64 = 64;

/// One cached object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub object_key: String,
    pub bytes: u64,
    /// The stored file's extension (`jpg`, `webp`, …), `bin` for a source.
    pub format: String,
    /// The strong ETag, quoted.
    pub etag: String,
}

/// See the module docs.
pub struct RenderCache {
    db: Db,
    storage: Storage,
    max_bytes: u64,
    known: Mutex<HashMap<String, (Entry, Instant)>>,
    /// Held by the one eviction running on this node.
    evicting: tokio::sync::Mutex<()>,
}

impl RenderCache {
    pub fn new(db: Db, storage: Storage, max_bytes: u64) -> RenderCache {
        RenderCache {
            db,
            storage,
            max_bytes,
            known: Mutex::new(HashMap::new()),
            evicting: tokio::sync::Mutex::new(()),
        }
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The entry stored under `object_key`, if the index has it; marks it used.
    pub async fn lookup(&self, object_key: &str) -> Result<Option<Entry>, DbError> {
        let now = Instant::now();
        let remembered = {
            let mut known = self.lock();
            known.get_mut(object_key).map(|(entry, touched)| {
                let stale = now.duration_since(*touched) >= TOUCH_EVERY;
                if stale {
                    *touched = now;
                }
                (entry.clone(), stale)
            })
        };
        if let Some((entry, stale)) = remembered {
            if stale {
                let (db, key) = (self.db.clone(), object_key.to_string());
                tokio::spawn(async move {
                    if let Err(e) = db.touch_render_cache_entry(&key, now_ms()).await {
                        tracing::warn!(error = %e, "marking a render cache entry used failed");
                    }
                });
            }
            return Ok(Some(entry));
        }
        let Some(row) = self.db.render_cache_entry(object_key).await? else {
            return Ok(None);
        };
        self.db
            .touch_render_cache_entry(object_key, now_ms())
            .await?;
        let entry = Entry {
            object_key: row.object_key,
            bytes: row.bytes.max(0) as u64,
            format: row.format,
            etag: row.etag,
        };
        self.remember(entry.clone());
        Ok(Some(entry))
    }

    /// Records `entry`, whose object is stored, then evicts down to the budget.
    /// `upload` is the upload it was rendered from, whose delete deletes it.
    pub async fn insert(&self, entry: Entry, upload: Option<&str>) -> Result<(), DbError> {
        self.db
            .put_render_cache_entry(&RenderCacheRow {
                object_key: entry.object_key.clone(),
                bytes: entry.bytes as i64,
                format: entry.format.clone(),
                etag: entry.etag.clone(),
                last_used: now_ms(),
                upload_id: upload.map(str::to_string),
            })
            .await?;
        self.remember(entry);
        self.evict().await
    }

    /// Forgets an entry whose object turned out to be gone (another node evicted it).
    pub async fn forget(&self, object_key: &str) {
        self.lock().remove(object_key);
        if let Err(e) = self.db.delete_render_cache_entry(object_key).await {
            tracing::warn!(error = %e, "forgetting a render cache entry failed");
        }
    }

    /// Deletes an entry that must not be served (rendered from an upload deleted
    /// meanwhile): its object, then its row.
    pub async fn delete(&self, object_key: &str) -> Result<(), StorageError> {
        self.lock().remove(object_key);
        self.storage.delete(object_key).await?;
        self.forget(object_key).await;
        Ok(())
    }

    /// Forgets on this node the entries under `object_keys`, whose objects and rows
    /// were deleted (with their upload); other nodes find the objects gone.
    pub fn forget_here(&self, object_keys: &[String]) {
        let mut known = self.lock();
        for key in object_keys {
            known.remove(key);
        }
    }

    /// Whether the object of `entry` is still stored.
    pub async fn stored(&self, entry: &Entry) -> Result<bool, StorageError> {
        match self.storage.head(&entry.object_key).await {
            Ok(_) => Ok(true),
            Err(StorageError::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Deletes the least recently used entries until the cache holds at most
    /// `--render-cache-bytes`. One eviction at a time per node; a second one arriving
    /// meanwhile leaves it to the first.
    async fn evict(&self) -> Result<(), DbError> {
        let Ok(_evicting) = self.evicting.try_lock() else {
            return Ok(());
        };
        let mut total = self.db.render_cache_bytes().await?.max(0) as u64;
        while total > self.max_bytes {
            let oldest = self.db.oldest_render_cache_entries(EVICT_BATCH).await?;
            if oldest.is_empty() {
                break;
            }
            for row in oldest {
                if total <= self.max_bytes {
                    break;
                }
                match self.storage.delete(&row.object_key).await {
                    Ok(()) | Err(StorageError::NotFound) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "deleting a render cache object failed");
                        return Ok(());
                    }
                }
                self.db.delete_render_cache_entry(&row.object_key).await?;
                self.lock().remove(&row.object_key);
                total = total.saturating_sub(row.bytes.max(0) as u64);
            }
        }
        Ok(())
    }

    fn remember(&self, entry: Entry) {
        let mut known = self.lock();
        if known.len() >= MAX_KNOWN {
            known.clear();
        }
        known.insert(entry.object_key.clone(), (entry, Instant::now()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Entry, Instant)>> {
        // One insert or remove per update: a poisoned map is still consistent.
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}
