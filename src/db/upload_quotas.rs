//! What uploads an organization holds (its quotas), which parts are referenced (the
//! orphan sweep), and the claim of the one node that hashes a finished upload.

use std::collections::HashSet;

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};
use crate::db::uploads::UploadRow;

/// An organization's upload quotas (`--max-upload-bytes-per-org`,
/// `--max-open-uploads-per-org`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadQuota {
    /// Bytes of unexpired uploads at most: complete ones by their size, unfinished
    /// ones by their declared `Upload-Length` (or what they hold, when none).
    pub max_bytes: u64,
    /// Unexpired, unfinished uploads at most.
    pub max_open: u64,
}

/// What an organization's unexpired uploads hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UploadUsage {
    pub bytes: u64,
    pub open: u64,
}

/// Why an upload was not created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaRefusal {
    /// Its declared length would pass the byte quota; `usage` is what is held.
    Bytes(UploadUsage),
    /// The organization already has its maximum of unfinished uploads.
    Open(UploadUsage),
}

impl Db {
    /// Inserts new, empty upload `row` (created at `row.created_at`, which is "now")
    /// if its organization stays within `quota`, counting `row.length` if declared.
    /// The check and the insert are one statement (SQLite writes one at a time; on
    /// PostgreSQL a per-organization advisory lock orders concurrent creations), so
    /// concurrent requests cannot pass a quota together.
    pub async fn insert_upload_within(
        &self,
        row: &UploadRow,
        quota: UploadQuota,
    ) -> Result<Result<(), QuotaRefusal>, DbError> {
        let now = row.created_at;
        let max_open = quota.max_open.min(i64::MAX as u64) as i64;
        let max_bytes = quota.max_bytes.min(i64::MAX as u64) as i64;
        let inserted = with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            if matches!(self, Db::Postgres(_)) {
                sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
                    .bind(format!("uploads:{}", row.org_id))
                    .execute(&mut *tx)
                    .await?;
            }
            let done = sqlx::query(&sql(
                "INSERT INTO uploads (id, org_id, created_at, expires_at, length, received, sha256, metadata) \
                 SELECT $1, $2, $3, $4, $5, 0, NULL, $6 \
                 WHERE (SELECT COUNT(*) FROM uploads WHERE org_id = $2 AND expires_at > $3 AND sha256 IS NULL) < $7 \
                 AND (SELECT COALESCE(SUM(COALESCE(length, received)), 0) FROM uploads \
                      WHERE org_id = $2 AND expires_at > $3) + $8 <= $9",
            ))
            .bind(&row.id)
            .bind(&row.org_id)
            .bind(now)
            .bind(row.expires_at)
            .bind(row.length)
            .bind(&row.metadata)
            .bind(max_open)
            .bind(row.length.unwrap_or(0))
            .bind(max_bytes)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            tx.commit().await?;
            done == 1
        });
        if inserted {
            return Ok(Ok(()));
        }
        let usage = self.upload_usage(&row.org_id, now).await?;
        Ok(Err(if usage.open >= quota.max_open {
            QuotaRefusal::Open(usage)
        } else {
            QuotaRefusal::Bytes(usage)
        }))
    }

    /// What `org_id`'s uploads unexpired at `now_ms` hold.
    pub async fn upload_usage(&self, org_id: &str, now_ms: i64) -> Result<UploadUsage, DbError> {
        let (bytes, open): (i64, i64) = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT CAST(COALESCE(SUM(COALESCE(length, received)), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(CASE WHEN sha256 IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT) \
                 FROM uploads WHERE org_id = $1 AND expires_at > $2",
            ))
            .bind(org_id)
            .bind(now_ms)
            .fetch_one(pool)
            .await?
        });
        Ok(UploadUsage {
            bytes: bytes.max(0) as u64,
            open: open.max(0) as u64,
        })
    }

    /// Claims the hashing of upload `id`, whose every byte is in, until `until_ms`:
    /// true for the one caller that should hash it now; false while another holds
    /// the claim (a read then answers without hashing), or once it is complete.
    pub async fn claim_upload_finishing(
        &self,
        id: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<bool, DbError> {
        let claimed = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE uploads SET finishing_until = $2 WHERE id = $1 AND sha256 IS NULL \
                 AND length = received AND (finishing_until IS NULL OR finishing_until <= $3)",
            ))
            .bind(id)
            .bind(until_ms)
            .bind(now_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(claimed == 1)
    }

    /// Of the parts of uploads `ids`, the object keys a row references.
    pub async fn referenced_part_keys(&self, ids: &[String]) -> Result<HashSet<String>, DbError> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
        let text = format!(
            "SELECT object_key FROM upload_parts WHERE upload_id IN ({})",
            placeholders.join(", ")
        );
        let keys: Vec<String> = with_pool!(self, |pool, sql| {
            let statement = sql(&text);
            let mut query = sqlx::query_scalar::<_, String>(&statement);
            for id in ids {
                query = query.bind(id);
            }
            query.fetch_all(pool).await?
        });
        Ok(keys.into_iter().collect())
    }
}
