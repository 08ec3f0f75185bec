//! Chunks across nodes (`--chunk-across-nodes`): every node's chunk worker claims the
//! chunks of chunked encodes from the queue (`db::chunks`) and encodes them on its
//! CPU slots, in the chunk's organization's turn like any other work.
//!
//! A chunk claim works like an edit's: leased, renewed while it runs, fenced on its
//! attempt. The source is read from shared storage (where the edit's node put it,
//! see `chunk_farm`), and the chunk is stored under a key naming its attempt, then
//! recorded with a fenced write: a node that lost its lease (and whose chunk another
//! node took) records nothing, and its file is deleted and never joined. A node that
//! dies loses only the chunks it held; their leases run out and another node claims
//! them again.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::chunk_sources::{SourceCache, KEEP_IDLE};
use super::claim_loop::{claim_until_stopped, renew_until_lost, ClaimKind, Looked, Renewal};
use super::slots::{Class, FairSlots, SlotPermit};
use crate::db::{ChunkClaim, Db};
use crate::media::lending::FarmedChunk;
use crate::media::video::chunked::encode_chunk;
use crate::media::{Media, MediaFile, MediaFormat, ProgressFn};
use crate::storage::{ScratchKey, Storage};

/// What a chunk row's `spec` holds: the recipe, and the formats of the source and
/// of the chunk (where both are stored follows from the row, see [`scratch_of`]).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ChunkSpec {
    pub chunk: FarmedChunk,
    pub source_format: MediaFormat,
    pub format: MediaFormat,
}

/// The scratch folder of `claim`'s encode.
fn scratch_of(claim: &ChunkClaim) -> ScratchKey<'_> {
    ScratchKey {
        edit_id: &claim.edit_id,
        step: &claim.step,
        plan: &claim.plan,
    }
}

/// What the chunk workers of a node share; `Some` in the worker context with
/// `--chunk-across-nodes`.
pub struct Chunks {
    pub db: Db,
    pub storage: Storage,
    pub media: Media,
    pub node_id: String,
    pub lease: Duration,
    pub poll: Duration,
    /// Claims of one chunk before it is given up (`--max-attempts`).
    pub max_attempts: u32,
    pub cpu: Arc<FairSlots>,
    pub tmp_root: std::path::PathBuf,
    /// Woken when chunks are added or finish (`CHUNKS_CHANNEL` on PostgreSQL).
    pub wake: Arc<Notify>,
    /// Cancelled when running work must stop now: held chunks are handed back.
    pub stop_now: CancellationToken,
    /// Sources this node has on disk, by their storage key (see [`Chunks::local_source`]).
    pub sources: Mutex<HashMap<String, MediaFile>>,
    /// This node's CPU slots (`--workers`), written to `chunk_nodes` for the others.
    pub slots: usize,
    /// The sources of other nodes' encodes, downloaded once for all their chunks.
    pub downloaded: SourceCache,
}

/// A source read from this node's disk while it lives.
pub(super) struct LocalSource<'a> {
    chunks: &'a Chunks,
    key: String,
}

impl Drop for LocalSource<'_> {
    fn drop(&mut self) {
        let mut sources = self
            .chunks
            .sources
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        sources.remove(&self.key);
    }
}

/// How a chunk claim ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ran {
    Done,
    Failed,
    /// Handed back, or its lease was lost: someone else finishes it.
    NotMine,
}

impl Chunks {
    fn lease_ms(&self) -> i64 {
        self.lease.as_millis() as i64
    }

    /// How many chunks the cluster runs at once: the slots of the nodes seen within
    /// [`NODE_GONE_AFTER`], and never fewer than this node's own (also when the
    /// database cannot say).
    pub(super) async fn cluster_slots(&self) -> usize {
        let within = NODE_GONE_AFTER.as_millis() as i64;
        match self.db.chunk_node_slots(within).await {
            Ok(slots) => slots.max(self.slots),
            Err(e) => {
                tracing::warn!(error = %e, "reading the cluster's slots failed; planning on this node's");
                self.slots
            }
        }
    }

    /// Makes the source stored under `key` read from `file` on this node, rather than
    /// downloaded, until the guard is dropped: the edit's node has it on disk.
    pub(super) fn local_source(&self, key: &str, file: &MediaFile) -> LocalSource<'_> {
        let mut sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        sources.insert(key.to_string(), file.clone());
        LocalSource {
            chunks: self,
            key: key.to_string(),
        }
    }

    /// Runs the claimed chunk `claim` to its end (the caller holds a CPU slot for
    /// it), reporting its progress to `progress`.
    pub(super) async fn run_claimed(&self, claim: &ChunkClaim, progress: ProgressFn<'_>) -> Ran {
        let spec: ChunkSpec = match serde_json::from_str(&claim.spec) {
            Ok(spec) => spec,
            Err(e) => return self.fail(claim, &format!("unreadable chunk: {e}")).await,
        };
        let local = {
            let sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            sources.get(&scratch_of(claim).source()).cloned()
        };
        if claim.attempts as u32 > self.max_attempts {
            let detail = format!("the chunk was interrupted {} times", self.max_attempts);
            return self.fail(claim, &detail).await;
        }
        // Named after the claim, and kept until the claim ends: a look at a node's
        // temp dir tells which chunks it holds (the cluster test's kill relies on it).
        let name = format!("chunk-{}-{}-", claim.id.replace('/', "_"), claim.attempts);
        let tmp = match tempfile::Builder::new()
            .prefix(&name)
            .tempdir_in(&self.tmp_root)
        {
            Ok(tmp) => tmp,
            Err(e) => {
                tracing::warn!(error = %e, "a chunk's temp dir could not be made");
                let _ = self.db.release_chunk(claim).await;
                return Ran::NotMine;
            }
        };
        let work = self.encode_and_store(claim, &spec, local, tmp.path(), progress);
        let stored = tokio::select! {
            stored = work => stored,
            lost = self.hold(claim) => {
                tracing::warn!(lost, "chunk abandoned: its lease was lost or the node stops");
                if !lost {
                    let _ = self.db.release_chunk(claim).await;
                }
                return Ran::NotMine;
            }
        };
        match stored {
            Ok(key) => match self.db.finish_chunk(claim, &key).await {
                Ok(true) => Ran::Done,
                Ok(false) | Err(_) => {
                    // Not recorded: nothing will ever read this attempt's file.
                    let _ = self.storage.delete(&key).await;
                    tracing::warn!("chunk not recorded: its claim is no longer current");
                    Ran::NotMine
                }
            },
            Err(Failure::Media(detail)) => self.fail(claim, &detail).await,
            Err(Failure::Transient(detail)) => {
                tracing::warn!(%detail, "a chunk could not be run; handing it back");
                let _ = self.db.release_chunk(claim).await;
                Ran::NotMine
            }
        }
    }

    async fn fail(&self, claim: &ChunkClaim, detail: &str) -> Ran {
        tracing::warn!(%detail, chunk = %claim.id, "chunk failed");
        match self.db.fail_chunk(claim, detail).await {
            Ok(true) => Ran::Failed,
            _ => Ran::NotMine,
        }
    }

    /// Renews `claim`'s lease until it is lost (`true`) or the node must stop now
    /// (`false`); never ends otherwise.
    async fn hold(&self, claim: &ChunkClaim) -> bool {
        let renew = || self.db.renew_chunk(claim, self.lease_ms());
        renew_until_lost(self.lease, &self.stop_now, renew).await == Renewal::Lost
    }

    /// Encodes the chunk and stores it; its key.
    async fn encode_and_store(
        &self,
        claim: &ChunkClaim,
        spec: &ChunkSpec,
        local: Option<MediaFile>,
        tmp: &std::path::Path,
        progress: ProgressFn<'_>,
    ) -> Result<String, Failure> {
        let mut _downloaded = None;
        let source = match local {
            Some(file) => file,
            None => {
                let key = scratch_of(claim).source();
                let keys = vec![key.clone()];
                let download = |path: std::path::PathBuf| async move {
                    self.storage.concatenate_into(keys, &path).await.map(drop)
                };
                let cached = self.downloaded.get(&key, download).await;
                let cached = cached.map_err(Failure::transient)?;
                let path = cached.path().to_path_buf();
                _downloaded = Some(cached);
                MediaFile {
                    path,
                    format: spec.source_format,
                }
            }
        };
        let output = tmp.join(format!("chunk.{}", spec.format.extension()));
        let recipe = (spec.chunk.options.as_slice(), spec.chunk.tail.clone());
        let seconds = spec.chunk.seconds;
        encode_chunk(&self.media, &source, recipe, seconds, &output, progress)
            .await
            .map_err(|e| match e.is_retryable() {
                true => Failure::transient(e),
                false => Failure::Media(e.to_string()),
            })?;
        let key = scratch_of(claim).chunk(claim.idx, claim.attempts, spec.format);
        self.storage
            .put_file(&key, &output)
            .await
            .map_err(Failure::transient)?;
        Ok(key)
    }
}

/// Why a chunk was not stored.
enum Failure {
    /// ffmpeg refused it: the edit's node encodes in one process instead.
    Media(String),
    /// Storage, disk or database trouble: another claim may fare better.
    Transient(String),
}

impl Failure {
    fn transient(e: impl std::fmt::Display) -> Failure {
        Failure::Transient(e.to_string())
    }
}

/// Starts this node's chunk worker in `set` (none without `chunks`, the worker
/// context's): until the node starts stopping, it takes
/// the organization whose chunk goes next (`Db::next_chunk_org`), waits for a CPU slot in that
/// organization's turn, then claims one of its chunks and runs it on that slot. It
/// claims only with a slot in hand, so no chunk waits on a busy node while another
/// node idles.
pub fn run_chunk_workers(
    chunks: Option<Arc<Chunks>>,
    stopping: &CancellationToken,
    set: &mut JoinSet<()>,
) {
    let Some(chunks) = chunks else {
        return;
    };
    set.spawn(run_node_beat(chunks.clone(), stopping.clone()));
    let claiming = claim_until_stopped(chunks, stopping.clone());
    set.spawn(claiming.instrument(tracing::info_span!("chunk worker")));
}

impl ClaimKind for Chunks {
    /// The claim, the CPU slot it runs on and its organization.
    type Claim = (ChunkClaim, SlotPermit, String);

    fn wakes(&self) -> Vec<&Notify> {
        vec![&self.wake]
    }

    fn poll(&self) -> Duration {
        self.poll
    }

    async fn look(&self, stopping: &CancellationToken) -> Looked<Self::Claim> {
        let org = match self.db.next_chunk_org().await {
            Ok(Some(org)) => org,
            Ok(None) => return Looked::Nothing,
            Err(e) => {
                tracing::warn!(error = %e, "looking for chunks failed");
                return Looked::Nothing;
            }
        };
        let slot = tokio::select! {
            slot = self.cpu.acquire(&org, Class::Heavy) => slot,
            _ = stopping.cancelled() => return Looked::Stopping,
        };
        match self
            .db
            .claim_chunk(self.lease_ms(), &self.node_id, Some(&org), None)
            .await
        {
            Ok(Some(claim)) => Looked::Claimed((claim, slot, org)),
            // Another node took it meanwhile: the next organization's turn.
            Ok(None) => Looked::Again,
            Err(e) => {
                tracing::warn!(error = %e, "claiming a chunk failed");
                Looked::Nothing
            }
        }
    }

    fn run(
        self: Arc<Self>,
        (claim, slot, org): Self::Claim,
    ) -> impl Future<Output = ()> + Send + 'static {
        let span =
            tracing::info_span!("chunk", chunk = %claim.id, org = %org, attempt = claim.attempts);
        async move {
            let ran = self.run_claimed(&claim, &|_| {}).await;
            drop(slot);
            tracing::info!(?ran, "chunk claim ended");
        }
        .instrument(span)
    }
}

/// How often a node writes its row in `chunk_nodes`.
const NODE_BEAT: Duration = Duration::from_secs(2);
/// A node not seen for this long is gone: its slots are no longer planned on.
const NODE_GONE_AFTER: Duration = Duration::from_secs(10);

/// Until the node starts stopping: writes this node's slots to `chunk_nodes` every
/// [`NODE_BEAT`] and deletes the downloaded sources no chunk used lately; then
/// removes the row, so that a node stopped on purpose is not
/// planned on while its row would still count.
async fn run_node_beat(chunks: Arc<Chunks>, stopping: CancellationToken) {
    while !stopping.is_cancelled() {
        let seen = chunks.db.chunk_node_seen(&chunks.node_id, chunks.slots);
        if let Err(e) = seen.await {
            tracing::warn!(error = %e, "recording this node's slots failed");
        }
        chunks.downloaded.evict_idle(KEEP_IDLE).await;
        tokio::select! {
            _ = tokio::time::sleep(NODE_BEAT) => {}
            _ = stopping.cancelled() => {}
        }
    }
    if let Err(e) = chunks.db.chunk_node_gone(&chunks.node_id).await {
        tracing::warn!(error = %e, "removing this node's slots failed; they lapse");
    }
    chunks.downloaded.evict_idle(Duration::ZERO).await;
}
