//! The queue on SQLite: a conditional `UPDATE … RETURNING` claims atomically, since
//! SQLite runs one writer at a time.

use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;

use super::{
    fenced_sql, run_claim, run_fenced, Bind, Claim, Fairness, JobQueue, JobRef, StoredClaim,
};
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
        fairness: Fairness<'_>,
    ) -> Result<Option<Claim>, DbError> {
        let sql = super::claim_sql(SQLITE_NOW_MS, "").replace('$', "?");
        run_claim!(&self.pool, &sql, lease, fairness)
    }

    async fn fenced(&self, set: &str, job: &JobRef, binds: Vec<Bind<'_>>) -> Result<bool, DbError> {
        // SQLite reads `?NNN` where PostgreSQL reads `$NNN`.
        let sql = fenced_sql(set, binds.len(), SQLITE_NOW_MS).replace('$', "?");
        run_fenced!(&self.pool, &sql, binds, job)
    }
}
