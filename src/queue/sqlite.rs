//! The queue on SQLite: a conditional `UPDATE … RETURNING` claims atomically, since
//! SQLite runs one writer at a time.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::Value;
use sqlx::SqlitePool;

use super::{Claim, JobQueue, JobRef, StoredClaim};
use crate::db::{unix_ms, DbError};

pub struct SqliteQueue {
    pool: SqlitePool,
}

impl SqliteQueue {
    pub fn new(pool: SqlitePool) -> Self {
        SqliteQueue { pool }
    }

    /// Runs a write fenced on `(id, attempt)` and a `processing` status.
    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        let sql = format!(
            "UPDATE edits SET {set}, updated_at = ? WHERE id = ? AND attempt = ? AND status = 'processing'"
        );
        let mut query = sqlx::query(&sql);
        for bind in binds {
            query = match bind {
                Bind::Int(v) => query.bind(v),
                Bind::Real(v) => query.bind(v),
                Bind::Text(v) => query.bind(v),
            };
        }
        let done = query
            .bind(now_ms())
            .bind(&job.id)
            .bind(job.attempt as i64)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

pub(super) enum Bind<'a> {
    Int(i64),
    Real(f64),
    Text(&'a str),
}

pub(super) fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}

#[async_trait]
impl JobQueue for SqliteQueue {
    async fn claim(&self, lease: Duration, fast_only: bool) -> Result<Option<Claim>, DbError> {
        let now = now_ms();
        let row: Option<StoredClaim> = sqlx::query_as(
            "UPDATE edits
                SET status = 'processing', attempt = attempt + 1, lease_until = ?1 + ?2, updated_at = ?1
              WHERE id = (SELECT id FROM edits
                           WHERE ((status = 'queued' AND run_after <= ?1)
                                  OR (status = 'processing' AND lease_until < ?1))
                             AND (?3 = 0 OR lane = 'fast')
                           ORDER BY run_after, created_at
                           LIMIT 1)
          RETURNING id, org_id, attempt, failures, request",
        )
        .bind(now)
        .bind(lease.as_millis() as i64)
        .bind(fast_only)
        .fetch_optional(&self.pool)
        .await?;
        row.map(Claim::try_from).transpose()
    }

    async fn heartbeat(&self, job: &JobRef, lease: Duration) -> Result<bool, DbError> {
        let until = now_ms() + lease.as_millis() as i64;
        self.fenced("lease_until = ?", job, vec![Bind::Int(until)])
            .await
    }

    async fn set_progress(
        &self,
        job: &JobRef,
        progress: f64,
        step: Option<&Value>,
    ) -> Result<bool, DbError> {
        // MAX keeps progress monotonic even if a caller reports out of order.
        let set = "progress = MAX(COALESCE(progress, 0), ?)";
        match step {
            None => self.fenced(set, job, vec![Bind::Real(progress)]).await,
            Some(step) => {
                let step = step.to_string();
                self.fenced(
                    &format!("{set}, step = ?"),
                    job,
                    vec![Bind::Real(progress), Bind::Text(&step)],
                )
                .await
            }
        }
    }

    async fn complete(&self, job: &JobRef, outputs: &[String]) -> Result<bool, DbError> {
        let outputs =
            serde_json::to_string(outputs).map_err(|e| DbError::Corrupt(e.to_string()))?;
        self.fenced(
            "status = 'done', outputs = ?, progress = 1.0, step = NULL, lease_until = NULL",
            job,
            vec![Bind::Text(&outputs)],
        )
        .await
    }

    async fn fail(&self, job: &JobRef, code: &str, detail: &str) -> Result<bool, DbError> {
        self.fenced(
            "status = 'failed', error_code = ?, error_detail = ?, step = NULL, lease_until = NULL",
            job,
            vec![Bind::Text(code), Bind::Text(detail)],
        )
        .await
    }

    async fn retry_later(&self, job: &JobRef, delay: Duration) -> Result<bool, DbError> {
        let run_after = now_ms() + delay.as_millis() as i64;
        self.fenced(
            "status = 'queued', failures = failures + 1, run_after = ?, lease_until = NULL",
            job,
            vec![Bind::Int(run_after)],
        )
        .await
    }

    async fn release(&self, job: &JobRef) -> Result<bool, DbError> {
        self.fenced(
            "status = 'queued', run_after = ?, lease_until = NULL",
            job,
            vec![Bind::Int(now_ms())],
        )
        .await
    }
}
