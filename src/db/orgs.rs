//! Organizations and their API tokens.

use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::db::clock::unix_ms;
use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

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

/// Characters of a token kept in clear: `me_` and 8 hex digits (32 bits of the 256).
pub const TOKEN_PREFIX_LEN: usize = 11;

/// The part of `token` that `token list` shows and `token revoke` takes.
pub fn token_prefix(token: &str) -> &str {
    token.get(..TOKEN_PREFIX_LEN).unwrap_or(token)
}

/// One token as `token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TokenListing {
    /// `None` for tokens made before prefixes were kept.
    pub prefix: Option<String>,
    pub created_at: i64,
    /// The first characters of the token's hash, to tell prefix-less tokens apart.
    pub token_hash: String,
}

/// What `token revoke` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// The token of this organization is revoked.
    One {
        org: String,
    },
    NotFound,
    /// More than one token starts so; nothing is revoked.
    Ambiguous(usize),
}

impl Db {
    /// The tokens of `org`, oldest first.
    pub async fn list_tokens(&self, org: &str) -> Result<Vec<TokenListing>, DbError> {
        let rows = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT prefix, created_at, token_hash FROM api_tokens WHERE org_id = $1 \
                 ORDER BY created_at, token_hash",
            ))
            .bind(org)
            .fetch_all(pool)
            .await?
        });
        Ok(rows)
    }

    /// Revokes the one token that `given` names: the whole token, or the prefix `token
    /// list` shows (a longer string must be the whole token).
    pub async fn revoke_by_prefix(&self, given: &str) -> Result<Revoked, DbError> {
        let prefix = token_prefix(given);
        let rows: Vec<(String, String)> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT token_hash, org_id FROM api_tokens WHERE prefix = $1 OR token_hash = $2",
            ))
            .bind(prefix)
            .bind(hash_token(given))
            .fetch_all(pool)
            .await?
        });
        let named: Vec<_> = match given.len() > TOKEN_PREFIX_LEN {
            true => rows
                .into_iter()
                .filter(|(hash, _)| *hash == hash_token(given))
                .collect(),
            false => rows,
        };
        let [(hash, org)] = named.as_slice() else {
            return Ok(match named.len() {
                0 => Revoked::NotFound,
                n => Revoked::Ambiguous(n),
            });
        };
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM api_tokens WHERE token_hash = $1"))
                .bind(hash)
                .execute(pool)
                .await?;
        });
        Ok(Revoked::One { org: org.clone() })
    }

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
                "INSERT INTO api_tokens (token_hash, org_id, created_at, prefix) VALUES ($1, $2, $3, $4)",
            ))
            .bind(&hash)
            .bind(org)
            .bind(now)
            .bind(token_prefix(token))
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
