//! What the worker asks of the edits queue, written once for both databases.

use crate::db::edit_queue::claim::{Bind, Claim, Fairness, JobRef};
use crate::db::error::DbError;
use crate::db::outputs::StoredOutput;
use async_trait::async_trait;
use serde_json::Value;
use std::time::Duration;

/// The queue operations a worker needs. Each database implements only [`claim`]
/// (its own locking) and [`fenced`] (its own placeholders); every write is written once,
/// here, as a fenced `SET` clause with `$1, $2, …` placeholders.
///
/// Every method that writes returns `Ok(false)` when the claim is no longer current
/// (the lease ran out and someone else claimed the edit): the caller must stop.
///
/// [`claim`]: JobQueue::claim
/// [`fenced`]: JobQueue::fenced
#[async_trait]
pub trait JobQueue: Send + Sync + 'static {
    /// Claims a claimable edit (queued and due, or processing with an expired lease),
    /// or `None` when there is none; fairly across organizations: an organization
    /// holding `per_org_cap` edits of the edit's lane on this node gets no more there,
    /// and among the rest the one holding fewest goes first (oldest first within it),
    /// so one organization's backlog cannot fill a node.
    async fn claim_fair(
        &self,
        lease: Duration,
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError>;

    /// [`JobQueue::claim_fair`] without a cap: the oldest claimable edit of the
    /// organization holding fewest.
    async fn claim(&self, lease: Duration) -> Result<Option<Claim>, DbError> {
        let fairness = Fairness {
            node: "",
            per_org_cap: u32::MAX,
        };
        self.claim_fair(lease, fairness).await
    }

    /// Runs `UPDATE edits SET {set}, updated_at = now WHERE id AND attempt match AND
    /// status = 'processing'`; `set` numbers its placeholders `$1, $2, …` in the order
    /// of `binds` and writes `{now}` for the database's clock in milliseconds. True
    /// when the row was changed.
    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError>;

    /// Extends the lease of a running claim.
    async fn heartbeat(&self, job: &JobRef, lease: Duration) -> Result<bool, DbError> {
        let lease = lease.as_millis() as i64;
        self.fenced("lease_until = {now} + $1", job, vec![Bind::Int(lease)])
            .await
    }

    /// Records progress (0.0–1.0, kept if lower than before) of a running claim, and
    /// the step it is on when given.
    async fn set_progress(
        &self,
        job: &JobRef,
        progress: f64,
        step: Option<&Value>,
    ) -> Result<bool, DbError> {
        // The CASE keeps progress monotonic even if a caller reports out of order (and
        // reads the same on both databases, unlike MAX/GREATEST).
        let set = "progress = CASE WHEN COALESCE(progress, 0) > $1 THEN progress ELSE $1 END";
        match step {
            None => self.fenced(set, job, vec![Bind::Real(progress)]).await,
            Some(step) => {
                let step = step.to_string();
                let binds = vec![Bind::Real(progress), Bind::Text(&step)];
                self.fenced(&format!("{set}, step = $2"), job, binds).await
            }
        }
    }

    /// Marks the edit `done` with its outputs; `cached` when every one of them came
    /// from the result cache.
    async fn complete(
        &self,
        job: &JobRef,
        outputs: &[StoredOutput],
        cached: bool,
    ) -> Result<bool, DbError> {
        let outputs =
            serde_json::to_string(outputs).map_err(|e| DbError::Corrupt(e.to_string()))?;
        let set = "status = 'done', outputs = $1, cached = $2, progress = 1.0, step = NULL, \
                   lease_until = NULL, error_code = NULL, error_detail = NULL";
        let binds = vec![Bind::Text(&outputs), Bind::Int(i64::from(cached))];
        self.fenced(set, job, binds).await
    }

    /// Marks the edit `failed`.
    async fn fail(&self, job: &JobRef, code: &str, detail: &str) -> Result<bool, DbError> {
        let set = "status = 'failed', error_code = $1, error_detail = $2, step = NULL, lease_until = NULL";
        self.fenced(set, job, vec![Bind::Text(code), Bind::Text(detail)])
            .await
    }

    /// Puts the edit back to `queued`, claimable again after `delay`, with the error
    /// that made it wait (shown as `lastError`).
    async fn retry_later(
        &self,
        job: &JobRef,
        delay: Duration,
        code: &str,
        detail: &str,
    ) -> Result<bool, DbError> {
        let delay = delay.as_millis() as i64;
        let set = "status = 'queued', failures = failures + 1, run_after = {now} + $1, \
                   lease_until = NULL, step = NULL, error_code = $2, error_detail = $3";
        let binds = vec![Bind::Int(delay), Bind::Text(code), Bind::Text(detail)];
        self.fenced(set, job, binds).await
    }

    /// Hands a claim back at once without counting a failure or a try (a node shutting
    /// down): the next claim still gets a new fencing token.
    async fn release(&self, job: &JobRef) -> Result<bool, DbError> {
        let set =
            "status = 'queued', handbacks = handbacks + 1, run_after = {now}, lease_until = NULL";
        self.fenced(set, job, vec![]).await
    }
}
