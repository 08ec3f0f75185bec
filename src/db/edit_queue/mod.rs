//! The edits table as a queue (`queue` runs it): a claim takes a claimable edit
//! atomically, moving it to `processing`, bumping its `attempt` (the fencing token)
//! and leasing it; every later write of the claim is fenced on `(id, attempt)` still
//! being current. The claim and the writes are written once (`sql`), over `db::lease`'s
//! template; each database adds only its locking ([`PgQueue`]) or its placeholders
//! ([`SqliteQueue`]).

use std::sync::Arc;

use crate::db::pool::Db;

mod postgres;
mod sqlite;

pub use postgres::PgQueue;
pub use sqlite::SqliteQueue;

mod claim;
pub use claim::{Bind, Claim, Fairness, JobRef};

mod sql;

mod job_queue;
pub use job_queue::JobQueue;

/// The queue over `db`'s backend.
pub fn for_db(db: &Db) -> Arc<dyn JobQueue> {
    match db {
        Db::Sqlite(pool) => Arc::new(SqliteQueue::new(pool.clone())),
        Db::Postgres(pool) => Arc::new(PgQueue::new(pool.clone())),
    }
}
