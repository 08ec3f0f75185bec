//! The result cache's rows: the outputs an asset of a done edit left, by cache key,
//! and the validators each source URL answered with last, per organization.

use std::time::SystemTime;

use crate::db::clock::unix_ms;
use crate::db::error::DbError;
use crate::db::outputs::StoredOutput;
use crate::db::pool::{with_pool, Db};

/// What a source answered last: the validators for a conditional request, and the
/// SHA-256 (hex) of the body they stand for.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SourceValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub sha256: String,
}

impl Db {
    /// The outputs a done edit of `org` left under `key`, if any.
    pub async fn cached_outputs(
        &self,
        org: &str,
        key: &str,
    ) -> Result<Option<Vec<StoredOutput>>, DbError> {
        let outputs: Option<String> = with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(
                "SELECT outputs FROM result_cache WHERE org_id = $1 AND cache_key = $2",
            ))
            .bind(org)
            .bind(key)
            .fetch_optional(pool)
            .await?
        });
        outputs
            .map(|o| serde_json::from_str(&o).map_err(|e| DbError::Corrupt(e.to_string())))
            .transpose()
    }

    /// Records that edit `edit_id` of `org` left `outputs` under `key` (the newest
    /// edit wins: its objects are the youngest).
    pub async fn remember_outputs(
        &self,
        org: &str,
        key: &str,
        edit_id: &str,
        outputs: &[StoredOutput],
    ) -> Result<(), DbError> {
        let outputs =
            serde_json::to_string(outputs).map_err(|e| DbError::Corrupt(e.to_string()))?;
        let now = unix_ms(SystemTime::now());
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "INSERT INTO result_cache (org_id, cache_key, edit_id, outputs, created_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id, cache_key) \
                 DO UPDATE SET edit_id = excluded.edit_id, outputs = excluded.outputs, \
                 created_at = excluded.created_at",
            ))
            .bind(org)
            .bind(key)
            .bind(edit_id)
            .bind(&outputs)
            .bind(now)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Forgets `key` of `org`: its outputs are gone from storage.
    pub async fn forget_outputs(&self, org: &str, key: &str) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "DELETE FROM result_cache WHERE org_id = $1 AND cache_key = $2",
            ))
            .bind(org)
            .bind(key)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// What `url` answered `org` last, if it sent validators.
    pub async fn source_validators(
        &self,
        org: &str,
        url: &str,
    ) -> Result<Option<SourceValidators>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT etag, last_modified, sha256 FROM source_validators \
                 WHERE org_id = $1 AND url = $2",
            ))
            .bind(org)
            .bind(url)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Records what `url` answered `org` with.
    pub async fn remember_validators(
        &self,
        org: &str,
        url: &str,
        validators: &SourceValidators,
    ) -> Result<(), DbError> {
        let now = unix_ms(SystemTime::now());
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "INSERT INTO source_validators (org_id, url, etag, last_modified, sha256, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (org_id, url) \
                 DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, \
                 sha256 = excluded.sha256, updated_at = excluded.updated_at",
            ))
            .bind(org)
            .bind(url)
            .bind(&validators.etag)
            .bind(&validators.last_modified)
            .bind(&validators.sha256)
            .bind(now)
            .execute(pool)
            .await?;
        });
        Ok(())
    }
}
