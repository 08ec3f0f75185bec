//! The dispatcher: claims edits while this node has room for them, and runs each
//! claim behind a panic boundary while renewing its lease, then records the outcome
//! (done, failed, queued again after a backoff, or handed back at shutdown).
//!
//! A node holds up to `workers + fetch concurrency` claims: enough that every CPU
//! slot has an edit ready when it frees while the others wait on the network. What
//! runs when is decided by the stages' fair slots (see `pipeline` and `slots`), not
//! by the order of claims.

use std::sync::Arc;
use std::time::Duration;

use std::future::Future;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::cache::ResultCache;
use super::chunk_farm::forget_scratch;
use super::claim_loop::{claim_until_stopped, renew_until_lost, ClaimKind, Looked, Renewal};
use super::clock::WorkClock;
use super::context::WorkerContext;
use super::pipeline;
use super::pipeline::EditOutputs;
use crate::commands::Command;
use crate::db::edit_queue::{Claim, JobRef};
use crate::edits::EditJob;
use crate::error_code::Code;
use crate::queue::error::JobError;

/// Starts the dispatcher, which claims edits until `ctx.stopping` is cancelled and
/// then waits for the claims it holds: each finishes, or is handed back.
pub fn run_workers(ctx: Arc<WorkerContext>) -> JoinSet<()> {
    let mut set = JoinSet::new();
    super::chunk_claims::run_chunk_workers(ctx.chunks.clone(), &ctx.stopping, &mut set);
    let stopping = ctx.stopping.clone();
    let edits = Arc::new(Edits {
        room: Arc::new(Semaphore::new(ctx.claim_capacity.max(1))),
        ctx,
    });
    let claiming = claim_until_stopped(edits, stopping);
    set.spawn(claiming.instrument(tracing::info_span!("dispatcher")));
    set
}

/// Edits as the claim loop takes them: a place among the node's claims, then the
/// fair claim (`claim_fair`), run behind a panic boundary while the lease is renewed.
struct Edits {
    ctx: Arc<WorkerContext>,
    /// The node's claims: `workers + fetch concurrency` (see the module's doc).
    room: Arc<Semaphore>,
}

impl ClaimKind for Edits {
    type Claim = (Claim, OwnedSemaphorePermit);

    fn wakes(&self) -> Vec<&Notify> {
        vec![&*self.ctx.wake]
    }

    fn poll(&self) -> Duration {
        self.ctx.poll
    }

    async fn look(&self, stopping: &CancellationToken) -> Looked<Self::Claim> {
        let permit = tokio::select! {
            permit = self.room.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            _ = stopping.cancelled() => return Looked::Stopping,
        };
        let fairness = crate::db::edit_queue::Fairness {
            node: &self.ctx.node_id,
            per_org_cap: self.ctx.claims_per_org,
        };
        match self.ctx.queue.claim_fair(self.ctx.lease, fairness).await {
            Ok(Some(claim)) => Looked::Claimed((claim, permit)),
            Ok(None) => Looked::Nothing,
            Err(e) => {
                tracing::error!(error = %e, "claiming an edit failed");
                Looked::Nothing
            }
        }
    }

    fn run(
        self: Arc<Self>,
        (claim, permit): Self::Claim,
    ) -> impl Future<Output = ()> + Send + 'static {
        let span = tracing::info_span!("edit", edit_id = %claim.job.id, org = %claim.org_id, attempt = claim.job.attempt);
        async move {
            run_claim(&self.ctx, claim, permit).await;
            // However it ended, its organization's share has room again: an edit that
            // waited for it can be claimed now.
            self.ctx.wake.notify_waiters();
        }
        .instrument(span)
    }
}

/// Runs one claim to its outcome; `_room` is its place among the node's claims.
async fn run_claim(ctx: &Arc<WorkerContext>, claim: Claim, _room: OwnedSemaphorePermit) {
    let job = claim.job.clone();
    let edit = match EditJob::from_stored(claim.plan.as_ref(), &claim.request) {
        Ok(edit) => Arc::new(edit),
        Err(e) => {
            tracing::error!(error = %e, "a stored edit no longer reads as a job");
            let e = Err(JobError::internal(false));
            record(ctx, &job, &claim, &[], e, Duration::ZERO).await;
            return;
        }
    };
    if claim.tries > ctx.max_attempts {
        let e = JobError::new(
            Code::AttemptsExhausted,
            format!(
                "Processing was interrupted {} times; the edit was given up.",
                ctx.max_attempts
            ),
            false,
        );
        record(ctx, &job, &claim, &edit.commands, Err(e), Duration::ZERO).await;
        return;
    }
    tracing::info!("processing edit");
    let started = std::time::Instant::now();
    let registered = ctx.running.register(&job.id);
    let clock = WorkClock::start();

    let runner = {
        let ctx = ctx.clone();
        let claim = claim.clone();
        let clock = clock.clone();
        let edit = edit.clone();
        // A spawned task is the panic boundary: a panic surfaces as a JoinError.
        tokio::spawn(async move {
            let tmp = tempfile::Builder::new()
                .prefix(&format!("{}-{}-", claim.job.id, claim.job.attempt))
                .tempdir_in(&ctx.tmp_root)
                .map_err(|e| {
                    tracing::error!(error = %e, "creating a job temp dir failed");
                    JobError::internal(true)
                })?;
            pipeline::run_edit(&ctx, &claim, &edit, tmp.path(), &clock).await
        })
    };
    let outcome = match hold_lease(ctx, &job, runner, &clock, &registered.token).await {
        Held::Finished(Ok(Err(e))) if e.hand_back => {
            hand_back(ctx, &job).await;
            return;
        }
        Held::Finished(Ok(result)) => result,
        Held::Finished(Err(join_error)) => {
            tracing::error!(error = %join_error, "processing panicked");
            Err(JobError::internal(false))
        }
        Held::TimedOut => Err(JobError::new(
            Code::JobTimeout,
            format!(
                "Processing took longer than the limit of {} s.",
                ctx.job_timeout.as_secs()
            ),
            false,
        )),
        Held::LeaseLost => {
            tracing::warn!("lease lost: the edit was canceled, deleted or claimed again");
            discard_outputs(ctx, &job).await;
            return;
        }
        Held::Canceled => {
            tracing::info!("edit canceled while running");
            discard_outputs(ctx, &job).await;
            forget_scratch(ctx, &job.id).await;
            return;
        }
        Held::Stopped => {
            hand_back(ctx, &job).await;
            return;
        }
    };
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        ok = outcome.is_ok(),
        "edit processed"
    );
    let took = started.elapsed();
    record(ctx, &job, &claim, &edit.commands, outcome, took).await;
}

/// Deletes what this claim stored: its outcome was not recorded (the edit was
/// canceled, deleted or claimed again), so nothing refers to its objects. They live
/// under this attempt's own prefix, which no other claim writes to.
async fn discard_outputs(ctx: &WorkerContext, job: &JobRef) {
    let prefix = format!("edits/{}/{}/", job.id, job.attempt);
    if let Err(e) = ctx.storage.delete_prefix(&prefix).await {
        tracing::warn!(error = %e, "deleting the outputs of a dropped claim failed");
    }
}

/// Gives a claim back to the queue because this node is stopping: it costs the edit
/// no attempt.
async fn hand_back(ctx: &WorkerContext, job: &JobRef) {
    match ctx.queue.release(job).await {
        Ok(_) => tracing::info!("shutting down: edit handed back to the queue"),
        Err(e) => {
            tracing::warn!(error = %e, "handing the edit back failed; it is claimable after its lease")
        }
    }
}

/// How holding a claim ended.
enum Held<T> {
    /// The runner finished (or panicked).
    Finished(Result<T, tokio::task::JoinError>),
    /// The lease was lost; the runner was aborted.
    LeaseLost,
    /// The edit was canceled (or deleted); the runner was aborted.
    Canceled,
    /// The job timeout passed; the runner was aborted.
    TimedOut,
    /// The node must stop now; the runner was aborted.
    Stopped,
}

/// Waits for `runner` while renewing the lease; aborts it when the lease is lost, the
/// edit is canceled (`canceled`), the job times out (by `clock`: waiting for a slot is
/// not working) or the node must stop now. (Aborting drops the job's future: its temp
/// dir is removed and its ffmpeg children are killed.)
async fn hold_lease<T>(
    ctx: &WorkerContext,
    job: &JobRef,
    mut runner: tokio::task::JoinHandle<T>,
    clock: &WorkClock,
    canceled: &CancellationToken,
) -> Held<T> {
    let renewing = renew_until_lost(ctx.lease, &ctx.stop_now, || {
        ctx.queue.heartbeat(job, ctx.lease)
    });
    tokio::pin!(renewing);
    let deadline = tokio::time::sleep(ctx.job_timeout);
    tokio::pin!(deadline);
    let held = loop {
        tokio::select! {
            result = &mut runner => return Held::Finished(result),
            _ = &mut deadline => match ctx.job_timeout.checked_sub(clock.working()) {
                Some(left) if !left.is_zero() => deadline.as_mut().reset(Instant::now() + left),
                _ => break Held::TimedOut,
            },
            _ = canceled.cancelled() => break Held::Canceled,
            renewal = &mut renewing => break match renewal {
                Renewal::Lost => Held::LeaseLost,
                Renewal::Stopped => Held::Stopped,
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
    commands: &[Command],
    outcome: Result<EditOutputs, JobError>,
    took: Duration,
) {
    let status = if outcome.is_ok() { "done" } else { "failed" };
    // Whether the write ends the edit (a retry later does not).
    let ends = !matches!(&outcome, Err(e) if e.may_retry(claim.failures) && claim.tries < ctx.max_attempts);
    let written = match outcome {
        Ok(outputs) => {
            let done = ctx
                .queue
                .complete(job, &outputs.outputs, outputs.cached)
                .await;
            if let Ok(false) = done {
                // Canceled or deleted while its outputs were being stored.
                discard_outputs(ctx, job).await;
            }
            if let (Ok(true), Some(cache)) = (&done, ResultCache::of(ctx, &claim.org_id)) {
                cache.remember(&job.id, &outputs.entries).await;
            }
            done
        }
        Err(e) if !ends => {
            let delay = ctx.retry_base.saturating_mul(1 << claim.failures.min(16));
            tracing::warn!(code = e.code.as_str(), detail = %e.detail, delay_ms = delay.as_millis() as u64, "retrying later");
            let (code, detail) = (e.code.as_str(), e.detail.as_str());
            ctx.queue.retry_later(job, delay, code, detail).await
        }
        Err(e) => {
            tracing::info!(code = e.code.as_str(), detail = %e.detail, "edit failed");
            ctx.queue.fail(job, e.code.as_str(), &e.detail).await
        }
    };
    match written {
        Ok(true) if ends => {
            forget_scratch(ctx, &job.id).await;
            ctx.finished.finished(&job.id);
            ctx.metrics.edit_ended(commands, status, took);
        }
        Ok(true) => {}
        Ok(false) => tracing::warn!("outcome not recorded: the claim is no longer current"),
        Err(e) => {
            tracing::error!(error = %e, "recording the outcome failed; the lease will expire and the edit will run again")
        }
    }
}
