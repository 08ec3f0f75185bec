//! What every claim run shares: the node's tools, limits and stages, handed to the
//! dispatcher and down through the pipeline. A leaf of the engine, so the stages that
//! read it do not depend on the dispatcher that made it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::cancels::RunningEdits;
use super::finished::FinishedEdits;
use super::slots::FairSlots;
use crate::db::edit_queue::{JobQueue, JobRef};
use crate::db::Db;
use crate::fetch::Fetcher;
use crate::media::Media;
use crate::metrics::Metrics;
use crate::storage::Storage;

/// What every claim run shares.
pub struct WorkerContext {
    pub queue: Arc<dyn JobQueue>,
    pub media: Media,
    pub fetcher: Fetcher,
    pub storage: Storage,
    /// The database, for what a claim reads besides its own row (uploads).
    pub db: Db,
    /// The result cache's database; `None` when the cache is off.
    pub cache: Option<Db>,
    /// `<public url>/v1/uploads/`: an asset `src` under it is an upload, read from storage.
    pub uploads_prefix: String,
    /// Where per-job temp dirs are made.
    pub tmp_root: PathBuf,
    /// Woken when an edit is created, so the dispatcher need not wait for its next poll.
    pub wake: Arc<Notify>,
    /// The edits this node runs, so a cancel stops one at once.
    pub running: Arc<RunningEdits>,
    /// Told when an edit ends here (long polls, the webhook dispatcher).
    pub finished: Arc<FinishedEdits>,
    pub metrics: Arc<Metrics>,
    pub poll: Duration,
    pub lease: Duration,
    /// Claims an edit gets before it fails for good.
    pub max_attempts: u32,
    /// Delay before the first retry; doubled for each further one.
    pub retry_base: Duration,
    /// Limit for one attempt at an edit, in working time (see `clock`).
    pub job_timeout: Duration,
    /// Most files one edit may produce (`--max-outputs-per-edit`).
    pub max_outputs: u64,
    /// Most pixels × frames one edit may work through (`--max-work-per-edit`).
    pub max_work: u64,
    /// Claims this node holds at most, and of one organization per lane.
    pub claim_capacity: usize,
    pub claims_per_org: u32,
    /// The CPU stage: one slot per command running (`--workers`).
    pub cpu: Arc<FairSlots>,
    /// The network stage: fetches and stores (`--fetch-concurrency`).
    pub network: Arc<FairSlots>,
    /// Files of one fan-out started at once at most (they still wait for CPU slots).
    pub parallel_steps: usize,
    /// This process's id among the nodes, recorded on the edits it claims.
    pub node_id: String,
    /// A fetch does not start with less free disk than this (`--min-free-disk-bytes`).
    pub min_free_disk_bytes: u64,
    /// The chunk workers' share with `--chunk-across-nodes`: chunked encodes run their
    /// chunks as claims in the queue (see `chunk_claims`); `None` runs them here.
    pub chunks: Option<Arc<crate::queue::chunk_claims::Chunks>>,
    /// Cancelled when the node starts stopping: no more claims, and edits that have
    /// not reached a CPU slot yet are handed back at once.
    pub stopping: CancellationToken,
    /// Cancelled when running edits must stop now (the shutdown grace ran out): they
    /// are handed back to the queue for another worker or the next start.
    pub stop_now: CancellationToken,
}

impl WorkerContext {
    /// Records progress; a failure to record it is logged and otherwise ignored on
    /// purpose, because progress is advisory and the heartbeat detects a lost lease.
    pub(crate) async fn report_progress(&self, job: &JobRef, progress: f64, step: Option<&Value>) {
        let progress = progress.clamp(0.0, 1.0);
        if let Err(e) = self.queue.set_progress(job, progress, step).await {
            tracing::warn!(error = %e, "recording progress failed");
        }
    }
}
