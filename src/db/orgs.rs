//! Organizations and their API tokens.

use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::{unix_ms, with_pool, Db, DbError};

/// SHA-256 of a token, hex encoded: the only form in which tokens are stored.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Organization ids are 1–64 letters, digits, `-` or `_`, so they are safe in paths.
pub fn valid_org_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Db {
    /// Creates `org` if needed and stores a new token for it (by hash).
    pub async fn create_token(&self, org: &str, token: &str) -> Result<(), DbError> {
        let now = unix_ms(SystemTime::now());
        let hash = hash_token(token);
        with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            sqlx::query(&sql(
                "INSERT INTO organizations (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            ))
            .bind(org)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query(&sql(
                "INSERT INTO api_tokens (token_hash, org_id, created_at) VALUES ($1, $2, $3)",
            ))
            .bind(&hash)
            .bind(org)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// The organization a token belongs to, if the token is known.
    pub async fn org_for_token(&self, token: &str) -> Result<Option<String>, DbError> {
        self.org_for_token_hash(&hash_token(token)).await
    }

    /// The organization of the token whose [`hash_token`] is `hash`, if it is known.
    pub async fn org_for_token_hash(&self, hash: &str) -> Result<Option<String>, DbError> {
        let org = with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql("SELECT org_id FROM api_tokens WHERE token_hash = $1"))
                .bind(hash)
                .fetch_optional(pool)
                .await?
        });
        Ok(org)
    }

    /// Deletes a token; `false` if it was not known. Nodes that cached it accept it
    /// until their cache entry expires (`--auth-cache-ttl-secs`).
    pub async fn revoke_token(&self, token: &str) -> Result<bool, DbError> {
        let hash = hash_token(token);
        let deleted = with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM api_tokens WHERE token_hash = $1"))
                .bind(&hash)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(deleted > 0)
    }
}
