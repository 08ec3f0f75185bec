//! The edit's side of chunks across nodes: a step's chunked encode hands its chunks
//! to a [`StepFarm`], which puts the source in shared storage once (under the edit's
//! scratch folder, `edits/<id>/scratch/`), adds one claimable row per chunk, works
//! them on the step's own slot as long as any is left to claim (other nodes' chunk
//! workers take the rest, see `chunk_claims`), encodes the audio, then waits until
//! every chunk is done and fetches them for the join, which runs here.
//!
//! Why the join runs on the edit's node rather than on the node that finishes last:
//! that node holds the edit's lease and renews it all along, so the edit has one
//! owner, whose loss the edit lease already covers; and the join is a stream copy,
//! under 1 % of the work. If the edit's node dies, the edit is claimed again by the
//! normal lease expiry, its rows are found as they were left (same ids: the edit, the
//! step, and a digest of the source and the recipes), and the chunks already done
//! are reused, not encoded again.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::chunk_claims::{ChunkSpec, Chunks};
use super::context::WorkerContext;
use crate::db::edit_queue::Claim;
use crate::db::Db;
use crate::db::{ChunkSet, ChunkState};
use crate::media::lending::{BoxFuture, ChunkFarm, FarmJob};
use crate::media::MediaError;
use crate::storage::{ScratchKey, Storage, StorageError};

/// The farm of one step of one edit.
struct StepFarm {
    chunks: Arc<Chunks>,
    edit_id: String,
    org_id: String,
    /// Which encode of the edit: asset, command and file.
    step: String,
}

/// Deletes edit `edit_id`'s scratch objects, then forgets its chunks (pending ones are
/// given up): the edit ended. Best effort, and in that order, so that the sweep
/// ([`sweep_scratch`]) finds whatever a failure or a crash in between leaves.
pub async fn forget_scratch(ctx: &WorkerContext, edit_id: &str) {
    let Some(chunks) = &ctx.chunks else {
        return;
    };
    if let Err(e) = forget(&chunks.db, &chunks.storage, edit_id).await {
        tracing::warn!(error = %e, "deleting an edit's scratch objects failed; the sweep will");
    }
}

async fn forget(db: &Db, storage: &Storage, edit_id: &str) -> anyhow::Result<()> {
    storage.delete_prefix(&ScratchKey::of_edit(edit_id)).await?;
    db.forget_chunks(edit_id).await?;
    Ok(())
}

/// Deletes the scratch objects of ended edits whose node did not (it stopped between
/// the end and the clean-up, or the edit was canceled between two attempts); run by
/// the sweep on every node, whatever its flags. How many edits it cleaned.
pub async fn sweep_scratch(db: &Db, storage: &Storage) -> anyhow::Result<usize> {
    let ended = db.ended_edits_with_chunks(100).await?;
    for edit_id in &ended {
        forget(db, storage, edit_id).await?;
    }
    Ok(ended.len())
}

/// The farm of step `step` (asset, command and file) of `claim`, which runs its
/// chunked encodes' chunks through the queue, when `ctx` runs chunks across nodes.
pub(super) fn step_farm(
    ctx: &WorkerContext,
    claim: &Claim,
    step: String,
) -> Option<Arc<dyn ChunkFarm>> {
    let chunks = ctx.chunks.as_ref()?;
    Some(Arc::new(StepFarm {
        chunks: chunks.clone(),
        edit_id: claim.job.id.to_string(),
        org_id: claim.org_id.to_string(),
        step,
    }))
}

impl ChunkFarm for StepFarm {
    fn encode<'a>(
        &'a self,
        job: FarmJob<'a>,
        own: BoxFuture<'a, Result<(), MediaError>>,
    ) -> BoxFuture<'a, Result<bool, MediaError>> {
        Box::pin(self.run(job, own))
    }

    fn slots(&self) -> BoxFuture<'_, usize> {
        Box::pin(self.plan_slots())
    }
}

fn io(e: impl std::fmt::Display) -> MediaError {
    MediaError::Io(std::io::Error::other(e.to_string()))
}

impl StepFarm {
    /// The slots an earlier attempt at the edit planned this encode for (so the
    /// same chunks come out, and those done are reused), else the cluster's now.
    async fn plan_slots(&self) -> usize {
        let earlier = self
            .chunks
            .db
            .planned_slots(&self.edit_id, &self.step)
            .await;
        match earlier {
            Ok(Some(slots)) => slots,
            _ => self.chunks.cluster_slots().await,
        }
    }

    async fn run(
        &self,
        job: FarmJob<'_>,
        own: BoxFuture<'_, Result<(), MediaError>>,
    ) -> Result<bool, MediaError> {
        let chunks = &self.chunks;
        let plan = plan_digest(&job).await?;
        let set = ChunkSet {
            edit_id: &self.edit_id,
            org_id: &self.org_id,
            step: &self.step,
            plan: &plan,
        };
        let source_key = ScratchKey {
            edit_id: &self.edit_id,
            step: &self.step,
            plan: &plan,
        }
        .source();
        // Once: an earlier attempt at the edit may have put it there already.
        match chunks.storage.head(&source_key).await {
            Ok(_) => {}
            Err(StorageError::NotFound) => {
                chunks
                    .storage
                    .put_file(&source_key, &job.source.path)
                    .await
                    .map_err(io)?;
            }
            Err(e) => return Err(io(e)),
        }
        // This node's chunk worker reads it from here, as the step's own slot does.
        let _local = chunks.local_source(&source_key, job.source);
        let specs = job
            .chunks
            .iter()
            .map(|chunk| {
                serde_json::to_string(&ChunkSpec {
                    chunk: chunk.clone(),
                    source_format: job.source.format,
                    format: job.format,
                })
                .map_err(io)
            })
            .collect::<Result<Vec<_>, _>>()?;
        chunks
            .db
            .add_chunks(set, &specs, job.slots)
            .await
            .map_err(io)?;
        let Some(states) = self.work(set, &job, own).await? else {
            chunks.db.drop_chunks(set).await.map_err(io)?;
            return Ok(false);
        };
        for state in states {
            let key = state.output_key.unwrap_or_default();
            let dest = &job.outputs[state.idx as usize];
            chunks
                .storage
                .concatenate_into(vec![key], dest)
                .await
                .map_err(io)?;
        }
        Ok(true)
    }

    /// Works the chunks of `set` on the step's own slot while any is left to claim
    /// (one a lost node held included, once its lease runs out: so an encode never
    /// waits for a slot of another node while holding its own), `own` (the audio)
    /// once none is, and waits for the others' chunks. The chunks' states once every
    /// one is done; `None` when one failed.
    async fn work(
        &self,
        set: ChunkSet<'_>,
        job: &FarmJob<'_>,
        own: BoxFuture<'_, Result<(), MediaError>>,
    ) -> Result<Option<Vec<ChunkState>>, MediaError> {
        let chunks = &self.chunks;
        let mut own = Some(own);
        loop {
            let notified = chunks.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let lease = chunks.lease.as_millis() as i64;
            let claim = chunks
                .db
                .claim_chunk(lease, &chunks.node_id, None, Some(set));
            if let Some(claim) = claim.await.map_err(io)? {
                let span =
                    tracing::info_span!("chunk", chunk = %claim.id, attempt = claim.attempts);
                let progress = |fraction: f64| (job.report)(claim.idx as usize, fraction);
                chunks.run_claimed(&claim, &progress).instrument(span).await;
                continue;
            }
            if let Some(own) = own.take() {
                own.await?;
                continue;
            }
            let states = chunks.db.chunk_states(set).await.map_err(io)?;
            if states.len() != job.chunks.len()
                || states
                    .iter()
                    .any(|s| s.state != "pending" && s.state != "done")
            {
                tracing::warn!(?states, "a chunk failed; encoding in one process");
                return Ok(None);
            }
            for state in states.iter().filter(|s| s.state == "done") {
                (job.report)(state.idx as usize, 1.0);
            }
            if states.iter().all(|s| s.state == "done") {
                return Ok(Some(states));
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep(chunks.poll) => {}
            }
        }
    }
}

/// A digest of the source's bytes and every chunk's recipe: the same encode of the
/// same source gets the same rows on every attempt at the edit, any other a new set.
async fn plan_digest(job: &FarmJob<'_>) -> Result<String, MediaError> {
    let path = job.source.path.clone();
    let source = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let mut hash = Sha256::new();
        std::io::copy(&mut std::fs::File::open(path)?, &mut hash)?;
        Ok(hash.finalize().to_vec())
    })
    .await
    .map_err(io)??;
    let mut hash = Sha256::new();
    hash.update(&source);
    hash.update(serde_json::to_vec(&job.chunks).map_err(io)?);
    hash.update(job.format.extension());
    Ok(hex::encode(&hash.finalize()[..8]))
}
