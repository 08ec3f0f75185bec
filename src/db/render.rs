//! Images by URL (docs/API.md, "Render"): each organization's render keys, and the
//! index of the render cache shared by every node (what is stored under `render/`,
//! how large, and when it was last used, so the least recently used goes first).

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// Characters of a render key shown by `render-key list`: `rk_` and 8 more.
pub const RENDER_KEY_PREFIX_LEN: usize = 11;

/// One render key of an organization.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RenderKeyRow {
    pub org_id: String,
    pub prefix: String,
    pub secret: String,
    pub created_at: i64,
}

/// One entry of the render cache's index.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RenderCacheRow {
    pub object_key: String,
    pub bytes: i64,
    pub format: String,
    pub etag: String,
    pub last_used: i64,
    /// The upload a result was rendered from: deleting the upload deletes the entry.
    pub upload_id: Option<String>,
}

const CACHE_COLUMNS: &str = "object_key, bytes, format, etag, last_used, upload_id";

impl Db {
    /// Stores `secret` as a render key of `org` (made if needed).
    pub async fn create_render_key(
        &self,
        org: &str,
        secret: &str,
        now_ms: i64,
    ) -> Result<(), DbError> {
        let prefix = secret.get(..RENDER_KEY_PREFIX_LEN).unwrap_or(secret);
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "INSERT INTO organizations (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            ))
            .bind(org)
            .bind(now_ms)
            .execute(pool)
            .await?;
            sqlx::query(&sql(
                "INSERT INTO render_keys (org_id, prefix, secret, created_at) VALUES ($1, $2, $3, $4)",
            ))
            .bind(org)
            .bind(prefix)
            .bind(secret)
            .bind(now_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Every render key of every organization (what a node checks signatures with).
    pub async fn all_render_keys(&self) -> Result<Vec<RenderKeyRow>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT org_id, prefix, secret, created_at FROM render_keys ORDER BY org_id, created_at",
            ))
            .fetch_all(pool)
            .await?
        }))
    }

    /// The render keys of `org`, oldest first.
    pub async fn list_render_keys(&self, org: &str) -> Result<Vec<RenderKeyRow>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT org_id, prefix, secret, created_at FROM render_keys WHERE org_id = $1 \
                 ORDER BY created_at, prefix",
            ))
            .bind(org)
            .fetch_all(pool)
            .await?
        }))
    }

    /// Deletes the render key of `org` named by `given` (its prefix or the whole key);
    /// true when there was one.
    pub async fn revoke_render_key(&self, org: &str, given: &str) -> Result<bool, DbError> {
        let prefix = given.get(..RENDER_KEY_PREFIX_LEN).unwrap_or(given);
        let deleted = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "DELETE FROM render_keys WHERE org_id = $1 AND prefix = $2",
            ))
            .bind(org)
            .bind(prefix)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(deleted > 0)
    }

    /// The index entry of `object_key`, if cached.
    pub async fn render_cache_entry(
        &self,
        object_key: &str,
    ) -> Result<Option<RenderCacheRow>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "SELECT {CACHE_COLUMNS} FROM render_cache WHERE object_key = $1"
            )))
            .bind(object_key)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Records (or refreshes) an entry; its object is already stored.
    pub async fn put_render_cache_entry(&self, row: &RenderCacheRow) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(&format!(
                "INSERT INTO render_cache ({CACHE_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (object_key) DO UPDATE SET \
                 bytes = excluded.bytes, format = excluded.format, etag = excluded.etag, \
                 last_used = excluded.last_used, upload_id = excluded.upload_id"
            )))
            .bind(&row.object_key)
            .bind(row.bytes)
            .bind(&row.format)
            .bind(&row.etag)
            .bind(row.last_used)
            .bind(&row.upload_id)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Marks an entry used at `now_ms`.
    pub async fn touch_render_cache_entry(
        &self,
        object_key: &str,
        now_ms: i64,
    ) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE render_cache SET last_used = $2 WHERE object_key = $1 AND last_used < $2",
            ))
            .bind(object_key)
            .bind(now_ms)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Bytes the cache's entries hold together.
    pub async fn render_cache_bytes(&self) -> Result<i64, DbError> {
        let total: Option<i64> = with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql("SELECT CAST(SUM(bytes) AS BIGINT) FROM render_cache"))
                .fetch_one(pool)
                .await?
        });
        Ok(total.unwrap_or(0))
    }

    /// The `limit` least recently used entries.
    pub async fn oldest_render_cache_entries(
        &self,
        limit: i64,
    ) -> Result<Vec<RenderCacheRow>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "SELECT {CACHE_COLUMNS} FROM render_cache ORDER BY last_used, object_key LIMIT $1"
            )))
            .bind(limit)
            .fetch_all(pool)
            .await?
        }))
    }

    /// Removes an entry from the index (its object is deleted by the caller).
    pub async fn delete_render_cache_entry(&self, object_key: &str) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM render_cache WHERE object_key = $1"))
                .bind(object_key)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// The object keys of the entries rendered from upload `upload_id`: what deleting
    /// the upload deletes (`Db::delete_expired_upload` removes the rows).
    pub async fn render_cache_keys_of_upload(
        &self,
        upload_id: &str,
    ) -> Result<Vec<String>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(
                "SELECT object_key FROM render_cache WHERE upload_id = $1 ORDER BY object_key",
            ))
            .bind(upload_id)
            .fetch_all(pool)
            .await?
        }))
    }
}
