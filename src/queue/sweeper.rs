//! The sweep: deletes edits whose retention has run out (or that were deleted), with
//! every object stored for them, outputs of earlier attempts included; and uploads
//! past their expiry (or terminated), with their parts and the renders cached from
//! them; and idempotency keys older than their day. Every `ORPHANS_EVERY` it also
//! deletes upload parts that no row references (see `uploads::sweep_orphan_parts`):
//! listing every part costs more than the indexed query, and such parts are rare.
//!
//! Durable and safe with several nodes because every step is idempotent and the row
//! goes last: the objects under `edits/<id>/` are deleted, then the row (with the result
//! cache entries that point at them). A sweep cut short leaves the row, and the next
//! sweep, on any node, does it again. Cheap when there is nothing to do: one indexed
//! query per interval.

use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::db::{unix_ms, Db};
use crate::storage::Storage;
use crate::uploads::{sweep_orphan_parts, ORPHAN_GRACE};

/// Expired edits deleted per query.
const BATCH: u32 = 100;

/// How often the sweep looks for upload parts no row references.
const ORPHANS_EVERY: Duration = Duration::from_secs(10 * 60);

/// Sweeps every `interval` until `shutdown`.
pub fn run_sweeper(
    db: Db,
    storage: Storage,
    interval: Duration,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut orphans_due = tokio::time::Instant::now();
        loop {
            if tokio::time::Instant::now() >= orphans_due {
                orphans_due += ORPHANS_EVERY;
                match sweep_orphan_parts(&db, &storage, ORPHAN_GRACE).await {
                    Ok(0) => {}
                    Ok(swept) => tracing::info!(swept, "orphaned upload parts deleted"),
                    Err(e) => {
                        tracing::warn!(error = %e, "sweeping orphaned upload parts failed; trying again later")
                    }
                }
            }
            match super::chunk_farm::sweep_scratch(&db, &storage).await {
                Ok(0) => {}
                Ok(swept) => tracing::info!(swept, "scratch of ended edits deleted"),
                Err(e) => tracing::warn!(error = %e, "sweeping scratch failed; trying again later"),
            }
            match sweep_expired(&db, &storage).await {
                Ok(0) => {}
                Ok(swept) => tracing::info!(swept, "expired edits deleted"),
                Err(e) => {
                    tracing::warn!(error = %e, "sweeping expired edits failed; trying again later")
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = shutdown.cancelled() => return,
            }
        }
    })
}

/// Deletes every edit and upload expired by now, and their objects. Returns how many.
pub async fn sweep_expired(db: &Db, storage: &Storage) -> anyhow::Result<usize> {
    let mut swept = 0;
    loop {
        let now = unix_ms(SystemTime::now());
        let expired = db.expired_edits(now, BATCH).await?;
        for id in &expired {
            storage.delete_prefix(&format!("edits/{id}/")).await?;
            db.delete_expired_edit(id, now).await?;
        }
        let uploads = db.expired_uploads(now, BATCH).await?;
        for id in &uploads {
            crate::uploads::delete_objects(db, storage, id).await?;
            db.delete_expired_upload(id, now).await?;
        }
        swept += expired.len() + uploads.len();
        if expired.len() < BATCH as usize && uploads.len() < BATCH as usize {
            // Idempotency keys are rows only, and past their day worth nothing.
            db.delete_old_idempotency_keys(now).await?;
            return Ok(swept);
        }
    }
}
