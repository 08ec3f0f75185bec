//! Edit rows: inserted by the API, read by the API, advanced by the queue.

use super::{with_pool, Db, DbError, PG_NOW_MS, SQLITE_NOW_MS};
use serde_json::Value;

/// Processing status of an edit (decisions.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditStatus {
    Queued,
    Processing,
    Done,
    Failed,
}

impl EditStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EditStatus::Queued => "queued",
            EditStatus::Processing => "processing",
            EditStatus::Done => "done",
            EditStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Result<EditStatus, DbError> {
        Ok(match s {
            "queued" => EditStatus::Queued,
            "processing" => EditStatus::Processing,
            "done" => EditStatus::Done,
            "failed" => EditStatus::Failed,
            other => return Err(DbError::Corrupt(format!("unknown edit status {other:?}"))),
        })
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
    /// Storage keys of the outputs, in `downloadUrls` order, when done.
    pub outputs: Vec<String>,
    /// `(code, detail)` when failed.
    pub error: Option<(String, String)>,
    pub progress: Option<f64>,
    /// The step a processing edit is on (`{"asset","command"?,"name"}`), when known.
    pub step: Option<Value>,
    /// A done edit whose every output came from the result cache.
    pub cached: bool,
}

pub(crate) const EDIT_COLUMNS: &str =
    "id, org_id, created_at, updated_at, status, request, outputs, error_code, error_detail, progress, step, cached";

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
        })
    }
}

impl Db {
    /// Inserts a queued edit; being a row of `edits`, it is enqueued by the same insert.
    /// Returns the row as inserted: a worker may already have claimed it by the time
    /// the caller renders it, and the create response must say `queued`.
    pub async fn insert_edit(
        &self,
        id: &str,
        org_id: &str,
        request: &Value,
        lane: Lane,
        now_ms: i64,
    ) -> Result<EditRow, DbError> {
        let request_text = request.to_string();
        match self {
            Db::Sqlite(pool) => {
                // Due at once by the database's clock, which claims compare against.
                sqlx::query(&format!(
                    "INSERT INTO edits (id, org_id, created_at, updated_at, status, request, run_after, lane)
                     VALUES (?, ?, ?, ?, 'queued', ?, {SQLITE_NOW_MS}, ?)"
                ))
                .bind(id)
                .bind(org_id)
                .bind(now_ms)
                .bind(now_ms)
                .bind(request_text)
                .bind(lane.as_str())
                .execute(pool)
                .await?;
            }
            Db::Postgres(pool) => {
                // One statement, so one transaction: the notification goes out when the
                // row commits and wakes idle workers on every node that listens
                // (`queue::listen_for_new_edits`).
                sqlx::query(&format!(
                    "WITH inserted AS (
                         INSERT INTO edits (id, org_id, created_at, updated_at, status, request, run_after, lane)
                         VALUES ($1, $2, $3, $3, 'queued', $4, {PG_NOW_MS}, $5)
                         RETURNING lane)
                     SELECT pg_notify('mediaedit_edits', lane) FROM inserted"
                ))
                .bind(id)
                .bind(org_id)
                .bind(now_ms)
                .bind(request_text)
                .bind(lane.as_str())
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
        })
    }

    /// The edit `id` if it belongs to `org_id`; another organization's edit is `None`.
    pub async fn get_edit(&self, org_id: &str, id: &str) -> Result<Option<EditRow>, DbError> {
        let row: Option<StoredEdit> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "SELECT {EDIT_COLUMNS} FROM edits WHERE id = $1 AND org_id = $2"
            )))
            .bind(id)
            .bind(org_id)
            .fetch_optional(pool)
            .await?
        });
        row.map(EditRow::try_from).transpose()
    }
}
