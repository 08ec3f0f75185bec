//! Worker tasks: claim an edit, run it behind a panic boundary while renewing its
//! lease, and record the outcome (done, failed, or queued again after a backoff).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{pipeline, Claim, JobError, JobQueue, JobRef};
use crate::fetch::Fetcher;
use crate::media::Media;
use crate::storage::Storage;

/// What every worker shares.
pub struct WorkerContext {
    pub queue: Arc<dyn JobQueue>,
    pub media: Media,
    pub fetcher: Fetcher,
    pub storage: Storage,
    /// Where per-job temp dirs are made.
    pub tmp_root: PathBuf,
    /// Woken when an edit is created, so a worker need not wait for its next poll.
    pub wake: Arc<Notify>,
    pub poll: Duration,
    pub lease: Duration,
    /// Claims an edit gets before it fails for good.
    pub max_attempts: u32,
    /// Delay before the first retry; doubled for each further one.
    pub retry_base: Duration,
    /// Wall-clock limit for one attempt at an edit.
    pub job_timeout: Duration,
    /// Most files one edit may produce (`--max-outputs-per-edit`).
    pub max_outputs: u64,
    /// Most edits of one organization this node runs at once, per lane
    /// (`--max-running-per-org`).
    pub max_running_per_org: u32,
    /// This process's id among the nodes, recorded on the edits it claims.
    pub node_id: String,
    /// A fetch does not start with less free disk than this (`--min-free-disk-bytes`).
    pub min_free_disk_bytes: u64,
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

/// Starts `count` workers that run until `shutdown` is cancelled; each finishes the
/// edit it holds before it stops. The first `fast_only` of them take only fast-lane
/// edits (always at least one worker takes any edit).
pub fn run_workers(
    ctx: Arc<WorkerContext>,
    count: usize,
    fast_only: usize,
    shutdown: CancellationToken,
) -> JoinSet<()> {
    let fast_only = fast_only.min(count.saturating_sub(1));
    let mut set = JoinSet::new();
    for n in 0..count {
        let ctx = ctx.clone();
        let shutdown = shutdown.clone();
        let span = tracing::info_span!("worker", worker = n, fast_only = n < fast_only);
        set.spawn(worker_loop(ctx, n < fast_only, shutdown).instrument(span));
    }
    set
}

async fn worker_loop(ctx: Arc<WorkerContext>, fast_only: bool, shutdown: CancellationToken) {
    while !shutdown.is_cancelled() {
        // Register for a wake-up before looking, so an edit created between the
        // look and the wait is not missed.
        let notified = ctx.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();

        match ctx
            .queue
            .claim_fair(
                ctx.lease,
                fast_only,
                super::Fairness {
                    node: &ctx.node_id,
                    per_org_cap: ctx.max_running_per_org,
                },
            )
            .await
        {
            Ok(Some(claim)) => {
                let span = tracing::info_span!("edit", edit.id = %claim.job.id, org.id = %claim.org_id, attempt = claim.job.attempt);
                run_claim(&ctx, claim).instrument(span).await;
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "claiming an edit failed"),
        }
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep(ctx.poll) => {}
            _ = shutdown.cancelled() => {}
        }
    }
}

/// Runs one claim to its outcome.
async fn run_claim(ctx: &Arc<WorkerContext>, claim: Claim) {
    let job = claim.job.clone();
    if claim.tries > ctx.max_attempts {
        let e = JobError::new(
            "attempts_exhausted",
            format!(
                "Processing was interrupted {} times; the edit was given up.",
                ctx.max_attempts
            ),
            false,
        );
        record(ctx, &job, &claim, Err(e)).await;
        return;
    }
    tracing::info!("processing edit");
    let started = std::time::Instant::now();

    let runner = {
        let ctx = ctx.clone();
        let claim = claim.clone();
        // A spawned task is the panic boundary: a panic surfaces as a JoinError.
        tokio::spawn(async move {
            let tmp = tempfile::Builder::new()
                .prefix(&format!("{}-{}-", claim.job.id, claim.job.attempt))
                .tempdir_in(&ctx.tmp_root)
                .map_err(|e| {
                    tracing::error!(error = %e, "creating a job temp dir failed");
                    JobError::internal(true)
                })?;
            pipeline::run_edit(&ctx, &claim, tmp.path()).await
        })
    };
    let outcome = match hold_lease(ctx, &job, runner).await {
        Held::Finished(Ok(result)) => result,
        Held::Finished(Err(join_error)) => {
            tracing::error!(error = %join_error, "processing panicked");
            Err(JobError::internal(false))
        }
        Held::TimedOut => Err(JobError::new(
            "job_timeout",
            format!(
                "Processing took longer than the limit of {} s.",
                ctx.job_timeout.as_secs()
            ),
            false,
        )),
        Held::LeaseLost => {
            tracing::warn!("lease lost; another worker owns this edit now");
            return;
        }
        Held::Stopped => {
            match ctx.queue.release(&job).await {
                Ok(_) => tracing::info!("shutting down: edit handed back to the queue"),
                Err(e) => {
                    tracing::warn!(error = %e, "handing the edit back failed; it is claimable after its lease")
                }
            }
            return;
        }
    };
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        ok = outcome.is_ok(),
        "edit processed"
    );
    record(ctx, &job, &claim, outcome).await;
}

/// How holding a claim ended.
enum Held<T> {
    /// The runner finished (or panicked).
    Finished(Result<T, tokio::task::JoinError>),
    /// The lease was lost; the runner was aborted.
    LeaseLost,
    /// The job timeout passed; the runner was aborted.
    TimedOut,
    /// The node must stop now; the runner was aborted.
    Stopped,
}

/// Waits for `runner` while renewing the lease; aborts it when the lease is lost, the
/// job times out or the node must stop now. (Aborting drops the job's future: its temp
/// dir is removed and its ffmpeg children are killed.)
async fn hold_lease<T>(
    ctx: &WorkerContext,
    job: &JobRef,
    mut runner: tokio::task::JoinHandle<T>,
) -> Held<T> {
    let mut beat = tokio::time::interval(ctx.lease / 3);
    beat.tick().await;
    let deadline = tokio::time::sleep(ctx.job_timeout);
    tokio::pin!(deadline);
    let held = loop {
        tokio::select! {
            result = &mut runner => return Held::Finished(result),
            _ = &mut deadline => break Held::TimedOut,
            _ = ctx.stop_now.cancelled() => break Held::Stopped,
            _ = beat.tick() => match ctx.queue.heartbeat(job, ctx.lease).await {
                Ok(true) => {}
                Ok(false) => break Held::LeaseLost,
                // A transient database error: keep working; the next beat tries again.
                Err(e) => tracing::warn!(error = %e, "renewing the lease failed"),
            },
        }
    };
    runner.abort();
    held
}

/// Writes the outcome, fenced on the claim.
async fn record(
    ctx: &WorkerContext,
    job: &JobRef,
    claim: &Claim,
    outcome: Result<Vec<String>, JobError>,
) {
    let written = match outcome {
        Ok(keys) => ctx.queue.complete(job, &keys).await,
        Err(e) if e.may_retry(claim.failures) && claim.tries < ctx.max_attempts => {
            let delay = ctx.retry_base.saturating_mul(1 << claim.failures.min(16));
            tracing::warn!(code = e.code, detail = %e.detail, delay_ms = delay.as_millis() as u64, "retrying later");
            ctx.queue.retry_later(job, delay).await
        }
        Err(e) => {
            tracing::info!(code = e.code, detail = %e.detail, "edit failed");
            ctx.queue.fail(job, e.code, &e.detail).await
        }
    };
    match written {
        Ok(true) => {}
        Ok(false) => tracing::warn!("outcome not recorded: the claim is no longer current"),
        Err(e) => {
            tracing::error!(error = %e, "recording the outcome failed; the lease will expire and the edit will run again")
        }
    }
}
