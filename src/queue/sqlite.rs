//! The queue on SQLite: a conditional `UPDATE … RETURNING` claims atomically, since
//! SQLite runs one writer at a time.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;

use super::{fenced_sql, run_fenced, Bind, Claim, Fairness, JobQueue, JobRef, StoredClaim};
use crate::db::{DbError, SQLITE_NOW_MS};

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
    async fn claim_fair(
        &self,
        lease: Duration,
        fast_only: bool,
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError> {
        // Leases and due times by the database's clock (see `crate::db::SQLITE_NOW_MS`).
        let row: Option<StoredClaim> = sqlx::query_as(&format!(
            "UPDATE edits
                SET status = 'processing', attempt = attempt + 1, lease_until = {now} + ?1, updated_at = {now}, claimed_by = ?4
              WHERE id = (SELECT e.id FROM edits e
                           WHERE ((e.status = 'queued' AND e.run_after <= {now})
                                  OR (e.status = 'processing' AND e.lease_until < {now}))
                             AND (?2 = 0 OR e.lane = 'fast')
                             AND {running} < ?3
                           ORDER BY {running}, e.run_after, e.created_at
                           LIMIT 1)
          RETURNING id, org_id, attempt, failures, handbacks, request",
            now = SQLITE_NOW_MS,
            running = super::running_of_org(SQLITE_NOW_MS, "?4"),
        ))
        .bind(lease.as_millis() as i64)
        .bind(fast_only)
        .bind(i64::from(fairness.per_org_cap))
        .bind(fairness.node)
        .fetch_optional(&self.pool)
        .await?;
        row.map(Claim::try_from).transpose()
    }

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        // SQLite reads `?NNN` where PostgreSQL reads `$NNN`.
        let sql = fenced_sql(set, binds.len(), SQLITE_NOW_MS).replace('$', "?");
        run_fenced!(&self.pool, &sql, binds, job)
    }
}
