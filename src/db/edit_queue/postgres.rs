//! The queue on PostgreSQL: many nodes claim from one table at once. A claim is one
//! statement whose inner `SELECT … FOR UPDATE SKIP LOCKED` locks the oldest claimable
//! row and skips rows other claimers hold, so concurrent claims never block on each
//! other nor take the same edit. Leases and `(id, attempt)` fencing work exactly as on
//! SQLite; new edits are announced with `NOTIFY` (`queue::listen` hears them).

use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgPool;

use crate::db::clock::PG_NOW_MS;
use crate::db::edit_queue::claim::{Bind, Claim, Fairness, JobRef, StoredClaim};
use crate::db::edit_queue::job_queue::JobQueue;
use crate::db::edit_queue::sql::{fenced_sql, run_claim, run_fenced};
use crate::db::error::DbError;

/// The advisory lock claims take turns on (any constant; this one spells "mediaedt").
const CLAIM_LOCK: i64 = 0x6d65_6469_6165_6474;

pub struct PgQueue {
    pool: PgPool,
}

impl PgQueue {
    pub fn new(pool: PgPool) -> Self {
        PgQueue { pool }
    }
}

#[async_trait]
impl JobQueue for PgQueue {
    async fn claim_fair(
        &self,
        lease: Duration,
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError> {
        let sql = crate::db::edit_queue::sql::claim_sql(PG_NOW_MS, "FOR UPDATE SKIP LOCKED");
        let mut tx = self.pool.begin().await?;
        // Claims take turns (each is one short statement), so the per-organization
        // count one claim reads includes the claim committed just before it: two
        // nodes claiming at the same instant could otherwise both take an
        // organization's last share. SQLite's single writer gives this for free.
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(CLAIM_LOCK)
            .execute(&mut *tx)
            .await?;
        let claim = run_claim!(&mut *tx, &sql, lease, fairness);
        tx.commit().await?;
        claim
    }

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        let sql = fenced_sql(set, binds.len(), PG_NOW_MS);
        run_fenced!(&self.pool, &sql, binds, job)
    }
}
