//! Edit rows: inserted by the API, read by the API, advanced by the queue.

use serde_json::Value;
use sqlx::Row;

use super::{Db, DbError};

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
}

pub(crate) const EDIT_COLUMNS: &str =
    "id, org_id, created_at, updated_at, status, request, outputs, error_code, error_detail, progress, step";

impl EditRow {
    pub(crate) fn from_row(row: &sqlx::sqlite::SqliteRow) -> Result<EditRow, DbError> {
        let corrupt = |e: serde_json::Error| DbError::Corrupt(e.to_string());
        let request: String = row.try_get("request")?;
        let outputs: Option<String> = row.try_get("outputs")?;
        let code: Option<String> = row.try_get("error_code")?;
        let detail: Option<String> = row.try_get("error_detail")?;
        let step: Option<String> = row.try_get("step")?;
        Ok(EditRow {
            id: row.try_get("id")?,
            org_id: row.try_get("org_id")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            status: EditStatus::parse(row.try_get("status")?)?,
            request: serde_json::from_str(&request).map_err(corrupt)?,
            outputs: match outputs {
                Some(o) => serde_json::from_str(&o).map_err(corrupt)?,
                None => Vec::new(),
            },
            error: code.map(|c| (c, detail.unwrap_or_default())),
            progress: row.try_get("progress")?,
            step: step
                .map(|s| serde_json::from_str(&s))
                .transpose()
                .map_err(corrupt)?,
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
        sqlx::query(
            "INSERT INTO edits (id, org_id, created_at, updated_at, status, request, run_after, lane)
             VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)",
        )
        .bind(id)
        .bind(org_id)
        .bind(now_ms)
        .bind(now_ms)
        .bind(request.to_string())
        .bind(now_ms)
        .bind(lane.as_str())
        .execute(&self.pool)
        .await?;
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
        })
    }

    /// The edit `id` if it belongs to `org_id`; another organization's edit is `None`.
    pub async fn get_edit(&self, org_id: &str, id: &str) -> Result<Option<EditRow>, DbError> {
        let row = sqlx::query(&format!(
            "SELECT {EDIT_COLUMNS} FROM edits WHERE id = ? AND org_id = ?"
        ))
        .bind(id)
        .bind(org_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(EditRow::from_row).transpose()
    }
}
