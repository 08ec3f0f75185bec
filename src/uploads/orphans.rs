//! The sweep of upload parts that no row references. Every path that stores a part
//! records it or deletes it again, but a node can stop between the two (`kill -9`, a
//! lost database connection): this pass lists what is stored under `uploads/` and
//! deletes what no `upload_parts` row names. Only objects older than a grace period
//! are judged, so a part whose row is being written at this moment is left alone.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use futures::TryStreamExt;

use crate::db::Db;
use crate::storage::Storage;

/// How old an unreferenced part must be before the sweep deletes it: far longer than
/// the moment between a part's last byte and its row.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(15 * 60);

/// Objects whose references are looked up in one query.
const BATCH: usize = 500;

/// Deletes every object under `uploads/` older than `grace` that no part row
/// references, and (on local files) writes of parts that a stopped process left
/// unfinished. Returns how many objects and files were deleted.
pub async fn sweep_orphan_parts(
    db: &Db,
    storage: &Storage,
    grace: Duration,
) -> anyhow::Result<usize> {
    let cutoff = chrono::Utc::now() - chrono::Duration::from_std(grace)?;
    let mut listed = storage.list("uploads/");
    let mut batch = Vec::new();
    let mut deleted = 0;
    while let Some(meta) = listed.try_next().await? {
        if meta.last_modified <= cutoff {
            batch.push(meta.location.to_string());
        }
        if batch.len() >= BATCH {
            deleted += delete_unreferenced(db, storage, &mut batch).await?;
        }
    }
    deleted += delete_unreferenced(db, storage, &mut batch).await?;
    if let Some(root) = storage.local_root() {
        let uploads = root.join("uploads");
        deleted += tokio::task::spawn_blocking(move || stale_writes(&uploads, grace)).await?;
    }
    Ok(deleted)
}

/// Deletes the objects of `batch` that no part row references; empties `batch`.
async fn delete_unreferenced(
    db: &Db,
    storage: &Storage,
    batch: &mut Vec<String>,
) -> anyhow::Result<usize> {
    // `uploads/<id>/<start>-<unique>`: the upload is the second segment.
    let ids: BTreeSet<String> = batch
        .iter()
        .filter_map(|key| key.split('/').nth(1).map(str::to_string))
        .collect();
    let referenced = db
        .referenced_part_keys(&ids.into_iter().collect::<Vec<_>>())
        .await?;
    let mut deleted = 0;
    for key in batch.drain(..) {
        if !referenced.contains(&key) {
            storage.delete(&key).await?;
            tracing::info!(key, "deleted an upload part no upload references");
            deleted += 1;
        }
    }
    Ok(deleted)
}

/// Removes the staging files (`<key>#<n>`, which listings skip) of local writes older
/// than `grace` under `dir`: a process stopped mid-write leaves them behind.
fn stale_writes(dir: &std::path::Path, grace: Duration) -> usize {
    let Ok(uploads) = std::fs::read_dir(dir) else {
        return 0;
    };
    let cutoff = SystemTime::now() - grace;
    let mut removed = 0;
    for upload in uploads.flatten() {
        let Ok(files) = std::fs::read_dir(upload.path()) else {
            continue;
        };
        for file in files.flatten() {
            let staging = file.file_name().to_string_lossy().contains('#');
            let old = file
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t <= cutoff);
            if staging && old && std::fs::remove_file(file.path()).is_ok() {
                removed += 1;
            }
        }
        // Gone if it is empty now; kept (an error ignored) otherwise.
        let _ = std::fs::remove_dir(upload.path());
    }
    removed
}
