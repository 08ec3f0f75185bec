//! A claim of the edits queue: the row a claim returns, the edit it names, and the
//! fairness it is taken with.

use serde_json::Value;

use crate::db::error::DbError;
use crate::ids::{EditId, OrgId};

/// A claimed edit: what a worker needs to run it, and the fencing token for writes.
#[derive(Debug, Clone)]
pub struct Claim {
    pub job: JobRef,
    pub org_id: OrgId,
    /// Retryable failures so far (drives the backoff).
    pub failures: u32,
    /// Claims that count against `--max-attempts`, this one included: every claim but
    /// those handed back at shutdown (a rolling restart spends no attempt).
    pub tries: u32,
    /// The request as sent.
    pub request: Value,
    /// The typed plan validated from it (`edits::EditJob`); `None` for an edit
    /// created before plans were stored.
    pub plan: Option<Value>,
}

/// The row a claim returns, as either database returns it.
#[derive(sqlx::FromRow)]
pub(super) struct StoredClaim {
    pub(super) id: String,
    pub(super) org_id: String,
    pub(super) attempt: i64,
    pub(super) failures: i64,
    pub(super) handbacks: i64,
    pub(super) request: String,
    pub(super) plan: Option<String>,
}

impl TryFrom<StoredClaim> for Claim {
    type Error = DbError;

    fn try_from(row: StoredClaim) -> Result<Claim, DbError> {
        Ok(Claim {
            job: JobRef {
                id: row.id.into(),
                attempt: row.attempt as u32,
            },
            org_id: row.org_id.into(),
            failures: row.failures as u32,
            tries: (row.attempt - row.handbacks).max(1) as u32,
            request: serde_json::from_str(&row.request).map_err(corrupt)?,
            plan: row
                .plan
                .map(|plan| serde_json::from_str(&plan))
                .transpose()
                .map_err(corrupt)?,
        })
    }
}

fn corrupt(e: serde_json::Error) -> DbError {
    DbError::Corrupt(e.to_string())
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
    pub id: EditId,
    pub attempt: u32,
}

/// A value bound to a placeholder of a fenced write.
pub enum Bind<'a> {
    Int(i64),
    Real(f64),
    Text(&'a str),
}
