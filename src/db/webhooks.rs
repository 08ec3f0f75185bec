//! Webhook events, their deliveries and each organization's signing secrets
//! (docs/API.md). Events are written by a trigger in the same statement that ends
//! an edit (migrations `…_notifications.sql`); here they are claimed as edits are, by
//! the one claim, lease and fence of `db::lease` (the attempt number the fencing
//! token), so a restart or a lost node loses none, and two nodes never send the same
//! attempt.

use super::lease;
use crate::db::clock::{PG_NOW_MS, SQLITE_NOW_MS};
use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// A claimed event: what one attempt sends, and the attempt that fences its writes.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct WebhookEvent {
    /// The `webhook-id`, the same on every attempt.
    pub id: String,
    pub edit_id: String,
    pub org_id: String,
    pub url: String,
    /// `edit.done`, `edit.failed` or `edit.canceled`.
    #[sqlx(rename = "type")]
    pub kind: String,
    /// When the edit ended, unix ms.
    pub created_at: i64,
    /// The body, fixed at the first attempt.
    pub payload: Option<String>,
    /// This attempt's number, from 1.
    #[sqlx(rename = "attempts")]
    pub attempt: i32,
}

/// One attempt, as `GET /v1/edits/{id}/deliveries` lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub event_id: String,
    #[sqlx(rename = "type")]
    pub kind: String,
    pub attempt: i32,
    /// Unix ms.
    pub at: i64,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i64,
}

/// What becomes of an event after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    Delivered,
    /// Tried again at this time (unix ms).
    RetryAt(i64),
    /// No attempts left (or nothing left to send).
    GiveUp,
}

/// An organization's signing secrets: the current one, and during the overlap after a
/// rotation the one before it (with the rotation's time, unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSecrets {
    pub current: String,
    pub previous: Option<(String, i64)>,
}

impl Db {
    /// Claims the oldest due event of an organization not in `passed_over` for
    /// `lease_ms`, counting the attempt; `None` when none is due. `passed_over` names
    /// the organizations whose share of this node's deliveries is taken up: their
    /// events stay queued without holding back anyone else's.
    pub async fn claim_webhook_event(
        &self,
        lease_ms: i64,
        passed_over: &[String],
    ) -> Result<Option<WebhookEvent>, DbError> {
        let (now, lock) = match self {
            Db::Sqlite(_) => (SQLITE_NOW_MS, ""),
            Db::Postgres(_) => (PG_NOW_MS, "FOR UPDATE SKIP LOCKED"),
        };
        let events = lease::WEBHOOK_EVENTS;
        // $1 is the lease; the organizations passed over are $2, $3, …
        let others = match passed_over.len() {
            0 => String::new(),
            n => {
                let params: Vec<String> = (2..n + 2).map(|i| format!("${i}")).collect();
                format!(" AND org_id NOT IN ({})", params.join(", "))
            }
        };
        let event = with_pool!(self, |pool, sql| {
            let oldest_due = format!(
                "(SELECT id FROM webhook_events e WHERE {}{others} ORDER BY next_at LIMIT 1 {lock})",
                events.claimable("e", now)
            );
            let text = sql(&events.claim_sql(
                now,
                &oldest_due,
                "",
                "id, edit_id, org_id, url, type, created_at, payload, attempts",
            ));
            let mut query = sqlx::query_as(&text).bind(lease_ms);
            for org in passed_over {
                query = query.bind(org);
            }
            query.fetch_optional(pool).await?
        });
        Ok(event)
    }

    /// Fixes the body of `event` (its first attempt); false when the claim is stale.
    pub async fn set_webhook_payload(
        &self,
        event: &WebhookEvent,
        payload: &str,
    ) -> Result<bool, DbError> {
        let done = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(&lease::WEBHOOK_EVENTS.fenced_sql(
                "",
                "payload = $1",
                2,
                3,
            )))
            .bind(payload)
            .bind(&event.id)
            .bind(event.attempt)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Records an attempt at `event` and what becomes of it, fenced on the attempt: a
    /// stale claim records nothing (false).
    pub async fn record_webhook_attempt(
        &self,
        event: &WebhookEvent,
        delivery: &DeliveryRow,
        after: AfterAttempt,
    ) -> Result<bool, DbError> {
        let (state, next_at) = match after {
            AfterAttempt::Delivered => ("delivered", delivery.at),
            AfterAttempt::RetryAt(at) => ("pending", at),
            AfterAttempt::GiveUp => ("failed", delivery.at),
        };
        let recorded = with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            let set = "state = $1, next_at = $2, lease_until = NULL";
            let fenced = sqlx::query(&sql(&lease::WEBHOOK_EVENTS.fenced_sql("", set, 3, 4)))
                .bind(state)
                .bind(next_at)
                .bind(&event.id)
                .bind(event.attempt)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if fenced == 1 {
                sqlx::query(&sql("INSERT INTO webhook_deliveries \
                         (event_id, edit_id, type, attempt, at, status, error, duration_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (event_id, attempt) DO NOTHING"))
                .bind(&event.id)
                .bind(&event.edit_id)
                .bind(&event.kind)
                .bind(event.attempt)
                .bind(delivery.at)
                .bind(delivery.status)
                .bind(&delivery.error)
                .bind(delivery.duration_ms)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            fenced == 1
        });
        Ok(recorded)
    }

    /// Every attempt at the events of edit `edit_id`, oldest first.
    pub async fn webhook_deliveries(&self, edit_id: &str) -> Result<Vec<DeliveryRow>, DbError> {
        let rows = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT event_id, type, attempt, at, status, error, duration_ms \
                 FROM webhook_deliveries WHERE edit_id = $1 ORDER BY at, attempt",
            ))
            .bind(edit_id)
            .fetch_all(pool)
            .await?
        });
        Ok(rows)
    }

    /// The secrets of `org_id`, made (from `fresh`) if it has none yet; several nodes
    /// asking at once all read back the one that was stored first.
    pub async fn webhook_secrets(
        &self,
        org_id: &str,
        fresh: &str,
    ) -> Result<WebhookSecrets, DbError> {
        let row: (String, Option<String>, Option<i64>) = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "INSERT INTO webhook_secrets (org_id, secret) VALUES ($1, $2) \
                 ON CONFLICT (org_id) DO NOTHING",
            ))
            .bind(org_id)
            .bind(fresh)
            .execute(pool)
            .await?;
            sqlx::query_as(&sql(
                "SELECT secret, previous, rotated_at FROM webhook_secrets WHERE org_id = $1",
            ))
            .bind(org_id)
            .fetch_one(pool)
            .await?
        });
        Ok(WebhookSecrets {
            current: row.0,
            previous: row.1.zip(row.2),
        })
    }

    /// Makes `fresh` the current secret of `org_id`; the old one keeps signing during
    /// the overlap.
    pub async fn rotate_webhook_secret(
        &self,
        org_id: &str,
        fresh: &str,
        now_ms: i64,
    ) -> Result<WebhookSecrets, DbError> {
        self.webhook_secrets(org_id, fresh).await?;
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "UPDATE webhook_secrets SET previous = secret, secret = $2, rotated_at = $3 \
                 WHERE org_id = $1 AND secret <> $2",
            ))
            .bind(org_id)
            .bind(fresh)
            .bind(now_ms)
            .execute(pool)
            .await?;
        });
        self.webhook_secrets(org_id, fresh).await
    }
}
