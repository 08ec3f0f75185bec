//! The durable job queue and the workers that execute edits.
//!
//! The edit row is the job. A worker claims a claimable edit atomically, which moves
//! it to `processing`, bumps its `attempt` (the fencing token) and gives it a lease.
//! While working, the worker renews the lease; every write it makes is conditional on
//! `(id, attempt)` still being current, so a worker whose lease ran out and whose edit
//! was claimed again can no longer change it. An edit whose lease expired (its worker
//! crashed) is claimable again.

mod error;
mod pipeline;
mod postgres;
mod sqlite;
mod worker;

pub use error::JobError;
pub use postgres::{listen_for_new_edits, PgQueue, NEW_EDITS_CHANNEL};
pub use sqlite::SqliteQueue;
pub use worker::{run_workers, WorkerContext};

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::db::{Db, DbError};

/// The queue over `db`'s backend.
pub fn for_db(db: &Db) -> Arc<dyn JobQueue> {
    match db {
        Db::Sqlite(pool) => Arc::new(SqliteQueue::new(pool.clone())),
        Db::Postgres(pool) => Arc::new(PgQueue::new(pool.clone())),
    }
}

/// A claimed edit: what a worker needs to run it, and the fencing token for writes.
#[derive(Debug, Clone)]
pub struct Claim {
    pub job: JobRef,
    pub org_id: String,
    /// Retryable failures so far (drives the backoff).
    pub failures: u32,
    /// The request as sent.
    pub request: Value,
}

/// The row a claim returns, as either database returns it.
#[derive(sqlx::FromRow)]
struct StoredClaim {
    id: String,
    org_id: String,
    attempt: i64,
    failures: i64,
    request: String,
}

impl TryFrom<StoredClaim> for Claim {
    type Error = DbError;

    fn try_from(row: StoredClaim) -> Result<Claim, DbError> {
        Ok(Claim {
            job: JobRef {
                id: row.id,
                attempt: row.attempt as u32,
            },
            org_id: row.org_id,
            failures: row.failures as u32,
            request: serde_json::from_str(&row.request)
                .map_err(|e| DbError::Corrupt(e.to_string()))?,
        })
    }
}

/// Identifies one claim of one edit. Writes with a stale `attempt` change nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRef {
    pub id: String,
    pub attempt: u32,
}

/// The queue operations a worker needs; one implementation per database.
///
/// Every method that writes returns `Ok(false)` when the claim is no longer current
/// (the lease ran out and someone else claimed the edit): the caller must stop.
#[async_trait]
pub trait JobQueue: Send + Sync + 'static {
    /// Claims the oldest claimable edit (queued and due, or processing with an expired
    /// lease), only from the fast lane when `fast_only`, or `None` when there is none.
    async fn claim(&self, lease: Duration, fast_only: bool) -> Result<Option<Claim>, DbError>;
    /// Extends the lease of a running claim.
    async fn heartbeat(&self, job: &JobRef, lease: Duration) -> Result<bool, DbError>;
    /// Records progress (0.0–1.0, kept if lower than before) of a running claim, and
    /// the step it is on when given.
    async fn set_progress(
        &self,
        job: &JobRef,
        progress: f64,
        step: Option<&Value>,
    ) -> Result<bool, DbError>;
    /// Marks the edit `done` with its outputs' storage keys.
    async fn complete(&self, job: &JobRef, outputs: &[String]) -> Result<bool, DbError>;
    /// Marks the edit `failed`.
    async fn fail(&self, job: &JobRef, code: &str, detail: &str) -> Result<bool, DbError>;
    /// Puts the edit back to `queued`, claimable again after `delay`.
    async fn retry_later(&self, job: &JobRef, delay: Duration) -> Result<bool, DbError>;
    /// Hands a claim back at once without counting a failure (a node shutting down).
    async fn release(&self, job: &JobRef) -> Result<bool, DbError>;
}
