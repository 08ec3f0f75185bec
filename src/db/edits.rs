//! Edit rows: inserted by the API, read by the API, advanced by the queue.

use crate::db::clock::{PG_NOW_MS, SQLITE_NOW_MS};
use crate::db::error::DbError;
use crate::db::outputs::StoredOutput;
use crate::db::pool::{with_pool, Db};
use crate::ids::{EditId, OrgId};
use serde_json::Value;

/// Processing status of an edit (docs/API.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditStatus {
    Queued,
    Processing,
    Done,
    Failed,
    Canceled,
}

impl EditStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EditStatus::Queued => "queued",
            EditStatus::Processing => "processing",
            EditStatus::Done => "done",
            EditStatus::Failed => "failed",
            EditStatus::Canceled => "canceled",
        }
    }

    /// Every status, in the order of an edit's life.
    pub const ALL: [EditStatus; 5] = [
        EditStatus::Queued,
        EditStatus::Processing,
        EditStatus::Done,
        EditStatus::Failed,
        EditStatus::Canceled,
    ];

    /// `done`, `failed` or `canceled`: nothing more happens to the edit unless it is
    /// retried.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            EditStatus::Done | EditStatus::Failed | EditStatus::Canceled
        )
    }

    pub fn parse(s: &str) -> Result<EditStatus, DbError> {
        EditStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| DbError::Corrupt(format!("unknown edit status {s:?}")))
    }
}

/// Which workers may take an edit: every worker takes `Fast` edits, and some workers
/// take only those, so short image edits never wait behind long video edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Only in-process image steps (resize-image, image-to-webp).
    Fast,
    /// Anything that runs ffmpeg.
    Slow,
}

impl Lane {
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Fast => "fast",
            Lane::Slow => "slow",
        }
    }
}

/// What a new edit stores: the request as sent (echoed back as it came), the typed
/// plan validated from it (what a worker runs, see `edits::EditJob`) and its lane.
#[derive(Debug, Clone, Copy)]
pub struct StoredRequest<'a> {
    pub request: &'a Value,
    pub plan: &'a Value,
    pub lane: Lane,
}

/// An edit as stored.
#[derive(Debug, Clone)]
pub struct EditRow {
    pub id: String,
    pub org_id: String,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub updated_at: i64,
    pub status: EditStatus,
    /// The request as sent: `{"assets", "commands", "options"?}`.
    pub request: Value,
    /// The outputs, in `downloadUrls` order, when done.
    pub outputs: Vec<StoredOutput>,
    /// `(code, detail)` when failed, and the last error while a retry waits.
    pub error: Option<(String, String)>,
    /// Attempts that counted so far (claims, less those handed back at shutdown).
    pub attempts: u32,
    /// Unix ms after which the edit is gone.
    pub expires_at: i64,
    pub progress: Option<f64>,
    /// The step a processing edit is on (`{"asset","command"?,"name"}`), when known.
    pub step: Option<Value>,
    /// A done edit whose every output came from the result cache.
    pub cached: bool,
}

pub(crate) const EDIT_COLUMNS: &str =
    "id, org_id, created_at, updated_at, status, request, outputs, error_code, error_detail, \
     progress, step, cached, attempt, handbacks, expires_at";

/// The stored columns of an edit, as either database returns them.
#[derive(sqlx::FromRow)]
pub(crate) struct StoredEdit {
    id: String,
    org_id: String,
    created_at: i64,
    updated_at: i64,
    status: String,
    request: String,
    outputs: Option<String>,
    error_code: Option<String>,
    error_detail: Option<String>,
    progress: Option<f64>,
    step: Option<String>,
    cached: i64,
    attempt: i64,
    handbacks: i64,
    expires_at: i64,
}

impl TryFrom<StoredEdit> for EditRow {
    type Error = DbError;

    fn try_from(row: StoredEdit) -> Result<EditRow, DbError> {
        let corrupt = |e: serde_json::Error| DbError::Corrupt(e.to_string());
        Ok(EditRow {
            id: row.id,
            org_id: row.org_id,
            created_at: row.created_at,
            updated_at: row.updated_at,
            status: EditStatus::parse(&row.status)?,
            request: serde_json::from_str(&row.request).map_err(corrupt)?,
            outputs: match row.outputs {
                Some(o) => serde_json::from_str(&o).map_err(corrupt)?,
                None => Vec::new(),
            },
            error: row
                .error_code
                .map(|c| (c, row.error_detail.unwrap_or_default())),
            progress: row.progress,
            step: row
                .step
                .map(|s| serde_json::from_str(&s))
                .transpose()
                .map_err(corrupt)?,
            cached: row.cached != 0,
            attempts: (row.attempt - row.handbacks).max(0) as u32,
            expires_at: row.expires_at,
        })
    }
}

impl Db {
    /// Inserts a queued edit; being a row of `edits`, it is enqueued by the same insert.
    /// Returns the row as inserted: a worker may already have claimed it by the time
    /// the caller renders it, and the create response must say `queued`.
    pub async fn insert_edit(
        &self,
        id: &EditId,
        org_id: &OrgId,
        stored: StoredRequest<'_>,
        now_ms: i64,
        expires_at: i64,
    ) -> Result<EditRow, DbError> {
        let StoredRequest {
            request,
            plan,
            lane,
        } = stored;
        let request_text = request.to_string();
        let plan_text = plan.to_string();
        // Kept in a column of its own too: the trigger that records webhook events
        // (migrations …_notifications.sql) reads it.
        let webhook_url = request["webhook"]["url"].as_str();
        match self {
            Db::Sqlite(pool) => {
                // Due at once by the database's clock, which claims compare against.
                sqlx::query(&format!(
                    "INSERT INTO edits (id, org_id, created_at, updated_at, status, request, plan, run_after, lane, expires_at, webhook_url)
                     VALUES (?, ?, ?, ?, 'queued', ?, ?, {SQLITE_NOW_MS}, ?, ?, ?)"
                ))
                .bind(id.as_str())
                .bind(org_id.as_str())
                .bind(now_ms)
                .bind(now_ms)
                .bind(request_text)
                .bind(plan_text)
                .bind(lane.as_str())
                .bind(expires_at)
                .bind(webhook_url)
                .execute(pool)
                .await?;
            }
            Db::Postgres(pool) => {
                // One statement, so one transaction: the notification goes out when the
                // row commits and wakes idle workers on every node that listens
                // (`queue::listen`).
                sqlx::query(&format!(
                    "WITH inserted AS (
                         INSERT INTO edits (id, org_id, created_at, updated_at, status, request, plan, run_after, lane, expires_at, webhook_url)
                         VALUES ($1, $2, $3, $3, 'queued', $4, $5, {PG_NOW_MS}, $6, $7, $8)
                         RETURNING lane)
                     SELECT pg_notify('mediaedit_edits', lane) FROM inserted"
                ))
                .bind(id.as_str())
                .bind(org_id.as_str())
                .bind(now_ms)
                .bind(request_text)
                .bind(plan_text)
                .bind(lane.as_str())
                .bind(expires_at)
                .bind(webhook_url)
                .execute(pool)
                .await?;
            }
        }
        Ok(EditRow {
            id: id.to_string(),
            org_id: org_id.to_string(),
            created_at: now_ms,
            updated_at: now_ms,
            status: EditStatus::Queued,
            request: request.clone(),
            outputs: Vec::new(),
            error: None,
            progress: None,
            step: None,
            cached: false,
            attempts: 0,
            expires_at,
        })
    }

    /// The edit `id` if it belongs to `org_id` and has not expired (or been deleted) by
    /// `now_ms`; another organization's edit is `None`.
    pub async fn get_edit(
        &self,
        org_id: &OrgId,
        id: &EditId,
        now_ms: i64,
    ) -> Result<Option<EditRow>, DbError> {
        let row: Option<StoredEdit> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "SELECT {EDIT_COLUMNS} FROM edits WHERE id = $1 AND org_id = $2 AND expires_at > $3"
            )))
            .bind(id.as_str())
            .bind(org_id.as_str())
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        });
        row.map(EditRow::try_from).transpose()
    }
}
