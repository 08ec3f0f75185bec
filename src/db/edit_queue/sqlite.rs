//! The queue on SQLite: a read picks the claim's candidate, and a conditional
//! `UPDATE … RETURNING` on its id takes it atomically (SQLite runs one writer at a
//! time), so the scan never holds up inserts.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;

use crate::db::edit_queue::claim::{Bind, Claim, Fairness, JobRef, StoredClaim};
use crate::db::edit_queue::job_queue::JobQueue;
use crate::db::edit_queue::sql::{fenced_sql, run_fenced};

/// Candidates a claim tries before it gives up until the next wake-up (each lost only
/// to a concurrent claimer, which is rare: one dispatcher per node).
const CLAIM_TRIES: usize = 4;
use crate::db::clock::SQLITE_NOW_MS;
use crate::db::error::DbError;

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
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError> {
        // A read picks the candidate and a conditional write takes it: the scan (which
        // grows with the queue) never holds the single writer that inserts wait for.
        // Another claimer may take the candidate in between; then look again.
        let pick = crate::db::edit_queue::sql::candidate_sql(SQLITE_NOW_MS, "").replace('$', "?");
        let take = crate::db::edit_queue::sql::claim_by_id_sql(SQLITE_NOW_MS).replace('$', "?");
        for _ in 0..CLAIM_TRIES {
            let candidate: Option<String> = sqlx::query_scalar(&pick)
                .bind(lease.as_millis() as i64)
                .bind(i64::from(fairness.per_org_cap))
                .bind(fairness.node)
                .fetch_optional(&self.pool)
                .await?;
            let Some(id) = candidate else {
                return Ok(None);
            };
            let row: Option<StoredClaim> = sqlx::query_as(&take)
                .bind(lease.as_millis() as i64)
                .bind(i64::from(fairness.per_org_cap))
                .bind(fairness.node)
                .bind(&id)
                .fetch_optional(&self.pool)
                .await?;
            if let Some(row) = row {
                return Claim::try_from(row).map(Some);
            }
        }
        Ok(None)
    }

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        // SQLite reads `?NNN` where PostgreSQL reads `$NNN`.
        let sql = fenced_sql(set, binds.len(), SQLITE_NOW_MS).replace('$', "?");
        run_fenced!(&self.pool, &sql, binds, job)
    }
}
