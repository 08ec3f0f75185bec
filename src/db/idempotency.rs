//! `Idempotency-Key` records of `POST /v1/edits` (docs/API.md), one row per
//! organization and key. The primary key makes the first request's claim atomic on
//! either database, so two nodes given the same key at once never both create.

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// How long a key is remembered, in ms.
pub const KEY_LIFETIME_MS: i64 = 24 * 3600 * 1000;
/// A first request still unanswered after this long (ms) is taken to be lost with its
/// node: the key may be taken over, keeping its edit id.
pub const IN_FLIGHT_MS: i64 = 60 * 1000;

/// What a request with a key may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyClaim {
    /// Go ahead and create edit `edit_id` (the id this key will always answer with).
    Create { edit_id: String },
    /// Answer what the first request answered.
    Replay {
        status: u16,
        response: String,
        edit_id: String,
    },
    /// The key was used with a different body.
    Reused,
    /// The first request with this key is still being handled.
    InUse,
}

impl Db {
    /// Claims `key` of `org_id` for a request whose canonical body hashes to `hash`;
    /// `edit_id` is the id to create if the key is new.
    pub async fn claim_idempotency_key(
        &self,
        org_id: &str,
        key: &str,
        hash: &str,
        edit_id: &str,
        now_ms: i64,
    ) -> Result<KeyClaim, DbError> {
        type Row = (String, String, i64, Option<i32>, Option<String>);
        let (inserted, row): (u64, Row) = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "DELETE FROM idempotency_keys WHERE org_id = $1 AND key = $2 AND created_at <= $3",
            ))
            .bind(org_id)
            .bind(key)
            .bind(now_ms - KEY_LIFETIME_MS)
            .execute(pool)
            .await?;
            let inserted = sqlx::query(&sql(
                "INSERT INTO idempotency_keys (org_id, key, request_hash, edit_id, created_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (org_id, key) DO NOTHING",
            ))
            .bind(org_id)
            .bind(key)
            .bind(hash)
            .bind(edit_id)
            .bind(now_ms)
            .execute(pool)
            .await?
            .rows_affected();
            let row = sqlx::query_as(&sql(
                "SELECT request_hash, edit_id, created_at, status, response \
                 FROM idempotency_keys WHERE org_id = $1 AND key = $2",
            ))
            .bind(org_id)
            .bind(key)
            .fetch_one(pool)
            .await?;
            (inserted, row)
        });
        let (stored_hash, stored_edit, created_at, status, response) = row;
        if inserted == 1 {
            return Ok(KeyClaim::Create {
                edit_id: stored_edit,
            });
        }
        if stored_hash != hash {
            return Ok(KeyClaim::Reused);
        }
        if let (Some(status), Some(response)) = (status, response) {
            return Ok(KeyClaim::Replay {
                status: status as u16,
                response,
                edit_id: stored_edit,
            });
        }
        if created_at > now_ms - IN_FLIGHT_MS {
            return Ok(KeyClaim::InUse);
        }
        // Abandoned: take it over, unless another request just did.
        let taken =
            with_pool!(self, |pool, sql| {
                sqlx::query(&sql("UPDATE idempotency_keys SET created_at = $3 \
                 WHERE org_id = $1 AND key = $2 AND created_at = $4 AND status IS NULL"))
                .bind(org_id)
                .bind(key)
                .bind(now_ms)
                .bind(created_at)
                .execute(pool)
                .await?
                .rows_affected()
            });
        Ok(match taken {
            1 => KeyClaim::Create {
                edit_id: stored_edit,
            },
            _ => KeyClaim::InUse,
        })
    }

    /// Records the answer to the request that claimed `key`.
    pub async fn answer_idempotency_key(
        &self,
        org_id: &str,
        key: &str,
        status: u16,
        response: &str,
    ) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE idempotency_keys SET status = $3, response = $4 WHERE org_id = $1 AND key = $2",
            ))
            .bind(org_id)
            .bind(key)
            .bind(i32::from(status))
            .bind(response)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Forgets `key` (its request failed on our side: a retry should run afresh).
    pub async fn forget_idempotency_key(&self, org_id: &str, key: &str) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "DELETE FROM idempotency_keys WHERE org_id = $1 AND key = $2",
            ))
            .bind(org_id)
            .bind(key)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Deletes keys older than their lifetime: the sweep's work.
    pub async fn delete_old_idempotency_keys(&self, now_ms: i64) -> Result<u64, DbError> {
        let deleted = with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM idempotency_keys WHERE created_at <= $1"))
                .bind(now_ms - KEY_LIFETIME_MS)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(deleted)
    }
}
