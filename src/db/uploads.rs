//! Upload rows and their parts. Appending a part and moving the offset are one
//! transaction, conditional on the offset the part starts at and on the upload being
//! unexpired: of two writers racing at one offset (two nodes, a retried PATCH), exactly
//! one wins, and no part is recorded for an upload deleted meanwhile. Creating an
//! upload is conditional on its organization's quotas, in the same statement.

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};
use crate::ids::{OrgId, UploadId};

/// An upload as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct UploadRow {
    pub id: String,
    pub org_id: String,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub expires_at: i64,
    /// Total bytes, when known.
    pub length: Option<i64>,
    /// Bytes stored so far (the tus offset).
    pub received: i64,
    /// Hex SHA-256 of the whole upload, once complete.
    pub sha256: Option<String>,
    /// `Upload-Metadata` as sent.
    pub metadata: Option<String>,
}

impl UploadRow {
    pub fn is_complete(&self) -> bool {
        self.sha256.is_some()
    }

    /// Every byte is in but the upload is not yet marked complete (its hash not
    /// yet taken, e.g. the node stopped right after the last part).
    pub fn needs_finishing(&self) -> bool {
        self.sha256.is_none() && self.length == Some(self.received)
    }
}

/// One stored part.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct UploadPart {
    pub start: i64,
    pub length: i64,
    pub object_key: String,
}

const UPLOAD_COLUMNS: &str =
    "id, org_id, created_at, expires_at, length, received, sha256, metadata";

impl Db {
    /// Inserts a new, empty upload.
    pub async fn insert_upload(&self, row: &UploadRow) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(&format!(
                "INSERT INTO uploads ({UPLOAD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, 0, NULL, $6)"
            )))
            .bind(&row.id)
            .bind(&row.org_id)
            .bind(row.created_at)
            .bind(row.expires_at)
            .bind(row.length)
            .bind(&row.metadata)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Upload `id` of `org_id`, unless it expired by `now_ms`.
    pub async fn get_upload(
        &self,
        org_id: &OrgId,
        id: &UploadId,
        now_ms: i64,
    ) -> Result<Option<UploadRow>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "SELECT {UPLOAD_COLUMNS} FROM uploads WHERE id = $1 AND org_id = $2 AND expires_at > $3"
            )))
            .bind(id.as_str())
            .bind(org_id.as_str())
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Records part `part` of upload `id`, which must start at the current offset.
    /// False (and nothing written) when the offset moved on in the meantime, or the
    /// upload expired or was deleted by `now_ms`: the caller deletes the part's object.
    pub async fn append_upload_part(
        &self,
        id: &str,
        part: &UploadPart,
        now_ms: i64,
    ) -> Result<bool, DbError> {
        with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            let moved = sqlx::query(&sql(
                "UPDATE uploads SET received = received + $2 WHERE id = $1 AND received = $3 \
                 AND (length IS NULL OR received + $2 <= length) AND expires_at > $4",
            ))
            .bind(id)
            .bind(part.length)
            .bind(part.start)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if moved != 1 {
                return Ok(false);
            }
            sqlx::query(&sql(
                "INSERT INTO upload_parts (upload_id, start, length, object_key) VALUES ($1, $2, $3, $4)",
            ))
            .bind(id)
            .bind(part.start)
            .bind(part.length)
            .bind(&part.object_key)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(true)
    }

    /// The parts of upload `id`, in order.
    pub async fn upload_parts(&self, id: &str) -> Result<Vec<UploadPart>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT start, length, object_key FROM upload_parts WHERE upload_id = $1 ORDER BY start",
            ))
            .bind(id)
            .fetch_all(pool)
            .await?
        }))
    }

    /// Marks upload `id` complete with its `length` and hash, once every byte is in.
    pub async fn complete_upload(
        &self,
        id: &str,
        length: i64,
        sha256: &str,
    ) -> Result<bool, DbError> {
        let done = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE uploads SET length = $2, sha256 = $3 WHERE id = $1 AND received = $2",
            ))
            .bind(id)
            .bind(length)
            .bind(sha256)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Expires upload `id` of `org_id` now (tus termination): it reads as gone, and
    /// the sweep deletes its parts. False when there is no such upload.
    pub async fn expire_upload(
        &self,
        org_id: &str,
        id: &str,
        now_ms: i64,
    ) -> Result<bool, DbError> {
        let done = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE uploads SET expires_at = 0 WHERE id = $1 AND org_id = $2 AND expires_at > $3",
            ))
            .bind(id)
            .bind(org_id)
            .bind(now_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Up to `limit` uploads expired by `now_ms`: the sweep's work.
    pub async fn expired_uploads(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, DbError> {
        self.expired_in("uploads", now_ms, limit).await
    }

    /// Deletes the rows of expired upload `id`, its parts' and the render cache's
    /// entries rendered from it (their objects are already gone).
    pub async fn delete_expired_upload(&self, id: &str, now_ms: i64) -> Result<(), DbError> {
        let dependents = [("upload_parts", "upload_id"), ("render_cache", "upload_id")];
        self.delete_expired_in("uploads", &dependents, id, now_ms)
            .await
    }
}
