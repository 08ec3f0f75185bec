//! The result cache: an asset whose source (by content), pipeline, options and recipes
//! equal those of an asset of an earlier done edit of the same organization is not
//! processed again; that asset's outputs are copied under the new edit's keys.
//!
//! Copies, not shared references: the store copies inside itself (a hard link on a
//! local disk, `CopyObject` on S3), so deleting either edit's outputs never breaks the
//! other, and nothing needs reference counting. An entry whose objects are gone is
//! forgotten and the asset runs as if it had never been cached.
//!
//! The key is a SHA-256 over [`RECIPES`] (bumped with every release, so a changed
//! recipe never serves an old result), the asset's type, the commands, the options
//! (as parsed, so `2` and `2.0` are the same; a fetched file such as `watermark`'s
//! overlay by its bytes' SHA-256, never its URL) and the source's SHA-256. Every
//! fetched input is keyed by its bytes, so the same URLs serving new files never
//! answer with the old result. Entries are
//! written only once the edit is recorded `done`. Sources are fetched again each time
//! (a URL's content may change), with a conditional request when the last answer had
//! validators: a `304` then finds the entry without downloading anything.

use sha2::{Digest, Sha256};

use crate::commands::Options;
use crate::db::{Db, SourceValidators, StoredOutput};
use crate::edits::EditJob;
use crate::media::MediaFormat;
use crate::storage::{companions_of, OutputKey, Storage};

use super::context::WorkerContext;
use crate::db::edit_queue::JobRef;

/// What outputs depend on besides the request and the source: the recipes, which may
/// change with any release.
const RECIPES: &str = concat!("mediaedit ", env!("CARGO_PKG_VERSION"));

/// The cache key of asset `i` of `edit` when its source's SHA-256 is `source_sha256`
/// and its options, with the files they name fetched, are `options`.
pub(super) fn asset_key(
    edit: &EditJob,
    options: &Options,
    i: usize,
    source_sha256: &str,
) -> String {
    let mut hash = Sha256::new();
    let commands: Vec<&str> = edit.commands.iter().map(|c| c.name()).collect();
    let specs = edit
        .commands
        .iter()
        .flat_map(|c| c.options().iter().copied());
    for part in [
        RECIPES,
        edit.assets[i].kind.as_str(),
        &commands.join(","),
        &options.key(specs),
        source_sha256,
    ] {
        // Length-prefixed, so no two different lists of parts hash alike.
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    hex::encode(hash.finalize())
}

/// One asset's outputs, to be remembered under its key once the edit is done.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    pub key: String,
    pub outputs: Vec<StoredOutput>,
}

/// The cache of one organization, on one database and store.
pub(super) struct ResultCache<'a> {
    db: &'a Db,
    storage: &'a Storage,
    org: &'a str,
}

impl<'a> ResultCache<'a> {
    /// The cache of organization `org` on this node, when the cache is on.
    pub fn of(ctx: &'a WorkerContext, org: &'a str) -> Option<ResultCache<'a>> {
        Some(ResultCache {
            db: ctx.cache.as_ref()?,
            storage: &ctx.storage,
            org,
        })
    }

    /// Asset `asset` of `edit` whose source hashes to `source_sha256`, answered from
    /// the cache for `job`: `Ok` with the copied outputs on a hit, `Err` with the key
    /// to remember its outputs under on a miss. `options` are the edit's with the
    /// files they name fetched, which the key holds by their bytes.
    pub async fn answer(
        &self,
        (edit, options): (&EditJob, &Options),
        asset: usize,
        source_sha256: &str,
        job: &JobRef,
    ) -> Result<Vec<StoredOutput>, String> {
        let key = asset_key(edit, options, asset, source_sha256);
        self.reuse(&key, job, asset).await.ok_or(key)
    }

    /// What `url` answered last, for a conditional request (none if unknown or the
    /// database does not answer: the fetch is then simply unconditional).
    pub async fn validators(&self, url: &str) -> Option<SourceValidators> {
        match self.db.source_validators(self.org, url).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "reading a source's validators failed");
                None
            }
        }
    }

    /// Remembers what `url` answered, when it sent validators to ask with next time.
    pub async fn remember_validators(&self, url: &str, validators: &SourceValidators) {
        if validators.etag.is_none() && validators.last_modified.is_none() {
            return;
        }
        if let Err(e) = self.db.remember_validators(self.org, url, validators).await {
            tracing::warn!(error = %e, "recording a source's validators failed");
        }
    }

    /// The outputs cached under `key`, copied to asset `asset` of `job`; `None` when
    /// there are none, or they are gone (then the entry is forgotten).
    async fn reuse(&self, key: &str, job: &JobRef, asset: usize) -> Option<Vec<StoredOutput>> {
        let cached = match self.db.cached_outputs(self.org, key).await {
            Ok(cached) => cached?,
            Err(e) => {
                tracing::warn!(error = %e, "reading the result cache failed");
                return None;
            }
        };
        let mut copies = Vec::with_capacity(cached.len());
        for (index, output) in cached.into_iter().enumerate() {
            let from = &output.key;
            let format = from
                .rsplit_once('.')
                .and_then(|(_, ext)| MediaFormat::from_extension(ext));
            let Some(format) = format else {
                tracing::warn!(key = from, "a cached output has no known format");
                return None;
            };
            let to = OutputKey {
                edit_id: &job.id,
                attempt: job.attempt,
                asset,
                index,
                format,
            }
            .to_string();
            // A stream's companions (its playlists and segments) go with it.
            let companions = match format {
                MediaFormat::Hls => {
                    let (from, to) = (companions_of(from), companions_of(&to));
                    self.storage.copy_prefix(&from, &to).await
                }
                _ => Ok(()),
            };
            let copied = match companions {
                Ok(()) => self.storage.copy(from, &to).await,
                Err(e) => Err(e),
            };
            if let Err(e) = copied {
                tracing::info!(error = %e, "a cached output is gone; running the asset again");
                if let Err(e) = self.db.forget_outputs(self.org, key).await {
                    tracing::warn!(error = %e, "forgetting a cache entry failed");
                }
                return None;
            }
            copies.push(StoredOutput {
                key: to,
                asset,
                ..output
            });
        }
        Some(copies)
    }

    /// Records `entries` of the done edit `edit_id` (best effort: a miss next time is
    /// the only cost of a failure).
    pub async fn remember(&self, edit_id: &str, entries: &[CacheEntry]) {
        for entry in entries {
            let written = self
                .db
                .remember_outputs(self.org, &entry.key, edit_id, &entry.outputs)
                .await;
            if let Err(e) = written {
                tracing::warn!(error = %e, "recording a result cache entry failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(body: serde_json::Value) -> EditJob {
        EditJob::from_stored(None, &body).unwrap()
    }

    #[test]
    fn the_key_changes_with_the_source_the_commands_and_the_options_only() {
        let src = "https://example.com/a.mp4";
        let base =
            edit(json!({"assets": [{"type": "video", "src": src}], "commands": ["video-to-gif"]}));
        let same = edit(
            json!({"assets": [{"type": "video", "src": "https://example.com/b.mp4"}], "commands": ["video-to-gif"]}),
        );
        let other_command =
            edit(json!({"assets": [{"type": "video", "src": src}], "commands": ["video-to-webm"]}));
        let speed = |s: serde_json::Value| {
            edit(
                json!({"assets": [{"type": "video", "src": src}], "commands": ["modify-video-speed"], "options": {"speed": s}}),
            )
        };
        let key_of = |edit: &EditJob, sha256| asset_key(edit, &edit.options, 0, sha256);
        let key = key_of(&base, "aa");
        assert_eq!(key, key_of(&same, "aa"), "the URL is not the content");
        assert_ne!(key, key_of(&base, "ab"));
        assert_ne!(key, key_of(&other_command, "aa"));
        assert_eq!(
            key_of(&speed(json!(2)), "aa"),
            key_of(&speed(json!(2.0)), "aa")
        );
        assert_ne!(
            key_of(&speed(json!(2)), "aa"),
            key_of(&speed(json!(3)), "aa")
        );
    }
}
