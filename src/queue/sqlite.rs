//! The queue on SQLite: a conditional `UPDATE … RETURNING` claims atomically, since
//! SQLite runs one writer at a time.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;

use super::{fenced_sql, now_ms, run_fenced, Bind, Claim, JobQueue, JobRef, StoredClaim};
use crate::db::DbError;

pub struct SqliteQueue {
    pool: SqlitePool,
}

impl SqliteQueue {
    pub fn new(pool: SqlitePool) -> Self {
        SqliteQueue { pool }
    }
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

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        // SQLite reads `?NNN` where PostgreSQL reads `$NNN`.
        let sql = fenced_sql(set, binds.len()).replace('$', "?");
        run_fenced!(&self.pool, &sql, binds, job)
    }
}
