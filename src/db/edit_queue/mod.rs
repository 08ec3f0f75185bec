//! The edits table as a queue (`queue` runs it): a claim takes a claimable edit
//! atomically, moving it to `processing`, bumping its `attempt` (the fencing token)
//! and leasing it; every later write of the claim is fenced on `(id, attempt)` still
//! being current. The claim and the writes are written once here, over `db::lease`'s
//! template; each database adds only its locking ([`PgQueue`]) or its placeholders
//! ([`SqliteQueue`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::db::lease;
use crate::db::outputs::StoredOutput;
use crate::db::Db;
use crate::db::DbError;

mod postgres;
mod sqlite;

pub use postgres::PgQueue;
pub use sqlite::SqliteQueue;

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
    /// Claims that count against `--max-attempts`, this one included: every claim but
    /// those handed back at shutdown (a rolling restart spends no attempt).
    pub tries: u32,
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
    handbacks: i64,
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
            tries: (row.attempt - row.handbacks).max(1) as u32,
            request: serde_json::from_str(&row.request)
                .map_err(|e| DbError::Corrupt(e.to_string()))?,
        })
    }
}

/// Who claims, and how many of its claims one organization may hold.
#[derive(Debug, Clone, Copy)]
pub struct Fairness<'a> {
    /// This node's id, recorded on the edits it claims.
    pub node: &'a str,
    /// Edits of one organization this node holds at once, per lane.
    pub per_org_cap: u32,
}

/// Identifies one claim of one edit. Writes with a stale `attempt` change nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRef {
    pub id: String,
    pub attempt: u32,
}

/// A value bound to a placeholder of a fenced write.
pub enum Bind<'a> {
    Int(i64),
    Real(f64),
    Text(&'a str),
}

/// SQL counting the edits of `e.org_id` in `e.lane` (the candidate row of a claim) that
/// run now on the claiming node (placeholder `node`): processing under a live lease.
/// Per lane, so an organization's cheap image edits never wait behind its own long
/// videos; per node, because the cap is a share of this node's workers, and a
/// cluster of N nodes gives one organization N shares.
fn running_of_org(now_sql: &str, node: &str) -> String {
    format!(
        "(SELECT COUNT(*) FROM edits r WHERE r.org_id = e.org_id AND r.lane = e.lane \
          AND r.claimed_by = {node} AND r.status = 'processing' AND r.lease_until >= {now_sql})"
    )
}

/// The claim statement of both databases, with `$1` the lease in milliseconds, `$2`
/// the per-organization cap and `$3` the node; `lock` is what the inner `SELECT` adds
/// on PostgreSQL (`FOR UPDATE SKIP LOCKED`). Leases and due times by the database's
/// clock (`now_sql`, see `crate::db::PG_NOW_MS`); the claim itself is the one every
/// leased row shares (`db::lease`).
fn claim_sql(now_sql: &str, lock: &str) -> String {
    let candidate = format!("({})", candidate_sql(now_sql, lock));
    lease::EDITS.claim_sql(now_sql, &candidate, CLAIM_SET, CLAIM_RETURNING)
}

/// The id of the edit a claim takes (same placeholders as [`claim_sql`]): claimable
/// (queued and due, or processing under an expired lease), of an organization under
/// its cap on this node, the organization holding fewest first. Within an
/// organization, image-only edits go first: they are short, and the CPU stage classes
/// the work by its measured cost once the sources are in.
fn candidate_sql(now_sql: &str, lock: &str) -> String {
    let running = running_of_org(now_sql, "$3");
    format!(
        "SELECT e.id FROM edits e
          WHERE {} AND {running} < $2
          ORDER BY {running}, CASE WHEN e.lane = 'fast' THEN 0 ELSE 1 END,
                   e.run_after, e.created_at
          LIMIT 1 {lock}",
        lease::EDITS.claimable("e", now_sql)
    )
}

/// The claim of the one edit `$4` if it is still claimable (same placeholders as
/// [`claim_sql`] otherwise): SQLite picks the candidate with a read, which never
/// waits for nor holds up its single writer, then takes it with this cheap write.
fn claim_by_id_sql(now_sql: &str) -> String {
    lease::EDITS.claim_sql(now_sql, "$4", CLAIM_SET, CLAIM_RETURNING)
}

/// What a claim of an edit sets besides the attempt and the lease.
const CLAIM_SET: &str = "status = 'processing', updated_at = {now}, claimed_by = $3";

const CLAIM_RETURNING: &str = "id, org_id, attempt, failures, handbacks, request";

/// The fenced `UPDATE` of [`JobQueue::fenced`], with `$1, $2, …` placeholders: `set`
/// uses the first `binds`, then come `id` and `attempt`. `{now}` in `set` and
/// `updated_at` read the database's clock (`now_sql`).
fn fenced_sql(set: &str, binds: usize, now_sql: &str) -> String {
    let set = format!("{set}, updated_at = {{now}}");
    lease::EDITS.fenced_sql(now_sql, &set, binds + 1, binds + 2)
}

/// Runs a fenced `UPDATE` (from [`fenced_sql`]) on `$pool` with `$binds` and the
/// claim `$job`; a macro because the two databases' query types differ. Evaluates to
/// `Ok(true)` when the row was changed.
macro_rules! run_fenced {
    ($pool:expr, $sql:expr, $binds:expr, $job:expr) => {{
        let mut query = sqlx::query($sql);
        for bind in $binds {
            query = match bind {
                Bind::Int(v) => query.bind(v),
                Bind::Real(v) => query.bind(v),
                Bind::Text(v) => query.bind(v),
            };
        }
        let done = query
            .bind(&$job.id)
            .bind($job.attempt as i64)
            .execute($pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }};
}
use run_fenced;

/// Runs the claim statement of [`claim_sql`] (placeholders already in the database's
/// spelling) on `$pool`; a macro for the same reason as [`run_fenced`].
macro_rules! run_claim {
    ($pool:expr, $sql:expr, $lease:expr, $fairness:expr) => {{
        let row: Option<StoredClaim> = sqlx::query_as($sql)
            .bind($lease.as_millis() as i64)
            .bind(i64::from($fairness.per_org_cap))
            .bind($fairness.node)
            .fetch_optional($pool)
            .await?;
        row.map(Claim::try_from).transpose()
    }};
}
use run_claim;

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
