//! The life of an edit after its creation (docs/API.md): listing, cancel, retry,
//! delete and the sweep of expired edits. Every statement is conditional on the state
//! it changes, so two requests (or two nodes) racing each other cannot both win.

use super::channels::{CANCELS_CHANNEL, NEW_EDITS_CHANNEL};
use super::edits::{StoredEdit, EDIT_COLUMNS};
use crate::db::edits::{EditRow, EditStatus, Lane};
use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};
use crate::ids::{EditId, OrgId};

/// Where a page of edits starts: after the edit created at `created_at` with id `id`
/// (newest first, ties broken by id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCursor {
    pub created_at: i64,
    pub id: String,
}

impl PageCursor {
    /// The opaque text of a cursor: `<created_at>.<id>`, base64url.
    pub fn encode(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(format!("{}.{}", self.created_at, self.id))
    }

    /// `None` for anything [`PageCursor::encode`] did not make.
    pub fn decode(text: &str) -> Option<PageCursor> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (created_at, id) = text.split_once('.')?;
        let valid_id = !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_graphic());
        let created_at = created_at.parse().ok()?;
        valid_id.then(|| PageCursor {
            created_at,
            id: id.to_string(),
        })
    }
}

/// One page of an organization's edits, and where the next starts.
#[derive(Debug)]
pub struct EditPage {
    pub edits: Vec<EditRow>,
    pub next: Option<PageCursor>,
}

/// What a cancel found.
#[derive(Debug)]
pub enum Cancel {
    /// Canceled now; the row as it is after.
    Canceled(Box<EditRow>),
    /// Already `done`, `failed` or `canceled`.
    Finished,
    NotFound,
}

/// What a retry found.
#[derive(Debug)]
pub enum Retry {
    /// Queued again; the row as it is after, and its lane (to wake workers).
    Queued(Box<EditRow>, Lane),
    /// Neither `failed` nor `canceled`.
    NotRetryable,
    NotFound,
}

/// The statuses an edit can be canceled from.
const ACTIVE: &str = "('queued', 'processing')";

impl Db {
    /// A page of `org_id`'s edits alive at `now_ms`, newest first, after `cursor`,
    /// only of `status` when given.
    pub async fn list_edits(
        &self,
        org_id: &str,
        now_ms: i64,
        status: Option<EditStatus>,
        cursor: Option<&PageCursor>,
        limit: u32,
    ) -> Result<EditPage, DbError> {
        let mut filter = String::from("org_id = $1 AND expires_at > $2");
        let mut n = 2;
        if status.is_some() {
            n += 1;
            filter += &format!(" AND status = ${n}");
        }
        if cursor.is_some() {
            filter += &format!(
                " AND (created_at < ${} OR (created_at = ${} AND id < ${}))",
                n + 1,
                n + 1,
                n + 2
            );
            n += 2;
        }
        let text = format!(
            "SELECT {EDIT_COLUMNS} FROM edits WHERE {filter} \
             ORDER BY created_at DESC, id DESC LIMIT ${}",
            n + 1
        );
        let rows: Vec<StoredEdit> = with_pool!(self, |pool, sql| {
            let text = sql(&text);
            let mut query = sqlx::query_as(&text).bind(org_id).bind(now_ms);
            if let Some(status) = status {
                query = query.bind(status.as_str());
            }
            if let Some(cursor) = cursor {
                query = query.bind(cursor.created_at).bind(cursor.id.as_str());
            }
            // One more than asked: whether there is a next page.
            query.bind(i64::from(limit) + 1).fetch_all(pool).await?
        });
        let mut edits = rows
            .into_iter()
            .map(EditRow::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        let next = (edits.len() > limit as usize).then(|| {
            edits.truncate(limit as usize);
            let last = edits.last().expect("limit is at least 1");
            PageCursor {
                created_at: last.created_at,
                id: last.id.clone(),
            }
        });
        Ok(EditPage { edits, next })
    }

    /// Cancels `id` of `org_id` when it is queued or processing. The worker running
    /// it, if any, sees its fenced writes fail (and is told at once, see
    /// `queue::cancels`); nothing it made is kept.
    pub async fn cancel_edit(
        &self,
        org_id: &OrgId,
        id: &EditId,
        now_ms: i64,
    ) -> Result<Cancel, DbError> {
        let row: Option<StoredEdit> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "UPDATE edits SET status = 'canceled', updated_at = $3, lease_until = NULL, \
                     step = NULL, error_code = NULL, error_detail = NULL \
                 WHERE id = $1 AND org_id = $2 AND expires_at > $3 AND status IN {ACTIVE} \
                 RETURNING {EDIT_COLUMNS}"
            )))
            .bind(id.as_str())
            .bind(org_id.as_str())
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        });
        match row {
            Some(row) => Ok(Cancel::Canceled(Box::new(row.try_into()?))),
            None if self.get_edit(org_id, id, now_ms).await?.is_some() => Ok(Cancel::Finished),
            None => Ok(Cancel::NotFound),
        }
    }

    /// Queues `id` of `org_id` again when it is failed or canceled, with its attempts
    /// counted afresh (the claims so far count as handed back) and its last outcome
    /// cleared.
    pub async fn retry_edit(
        &self,
        org_id: &OrgId,
        id: &EditId,
        now_ms: i64,
    ) -> Result<Retry, DbError> {
        #[derive(sqlx::FromRow)]
        struct Retried {
            #[sqlx(flatten)]
            edit: StoredEdit,
            lane: String,
        }
        let row: Option<Retried> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(&format!(
                "UPDATE edits SET status = 'queued', failures = 0, handbacks = attempt, \
                     run_after = $3, lease_until = NULL, outputs = NULL, error_code = NULL, \
                     error_detail = NULL, progress = NULL, step = NULL, cached = 0, updated_at = $3 \
                 WHERE id = $1 AND org_id = $2 AND expires_at > $3 \
                     AND status IN ('failed', 'canceled') \
                 RETURNING {EDIT_COLUMNS}, lane"
            )))
            .bind(id.as_str())
            .bind(org_id.as_str())
            .bind(now_ms)
            .fetch_optional(pool)
            .await?
        });
        match row {
            Some(row) => {
                let lane = if row.lane == "fast" {
                    Lane::Fast
                } else {
                    Lane::Slow
                };
                Ok(Retry::Queued(Box::new(row.edit.try_into()?), lane))
            }
            None if self.get_edit(org_id, id, now_ms).await?.is_some() => Ok(Retry::NotRetryable),
            None => Ok(Retry::NotFound),
        }
    }

    /// Expires `id` of `org_id` now (a running edit is canceled too): it reads as gone
    /// from here on, and the sweep deletes its row and objects. False when there is no
    /// such edit.
    pub async fn expire_edit(
        &self,
        org_id: &OrgId,
        id: &EditId,
        now_ms: i64,
    ) -> Result<bool, DbError> {
        let done = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(&format!(
                "UPDATE edits SET expires_at = 0, updated_at = $3, lease_until = NULL, \
                     status = CASE WHEN status IN {ACTIVE} THEN 'canceled' ELSE status END \
                 WHERE id = $1 AND org_id = $2 AND expires_at > $3"
            )))
            .bind(id.as_str())
            .bind(org_id.as_str())
            .bind(now_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Up to `limit` edits expired by `now_ms`, soonest expired first: the sweep's work.
    pub async fn expired_edits(&self, now_ms: i64, limit: u32) -> Result<Vec<String>, DbError> {
        self.expired_in("edits", now_ms, limit).await
    }

    /// Deletes the row of expired edit `id`, the result cache entries that point at
    /// its outputs, and its webhook events and deliveries (a deleted edit notifies no
    /// one). Run after its objects are gone: a crash in between leaves the row, and the
    /// next sweep deletes the objects (none by then) and the row again.
    pub async fn delete_expired_edit(&self, id: &str, now_ms: i64) -> Result<(), DbError> {
        let dependents = [
            ("result_cache", "edit_id"),
            ("webhook_events", "edit_id"),
            ("webhook_deliveries", "edit_id"),
            ("edit_chunks", "edit_id"),
        ];
        self.delete_expired_in("edits", &dependents, id, now_ms)
            .await
    }

    /// Up to `limit` ids of `table` (`edits` or `uploads`, both with `expires_at`)
    /// expired by `now_ms`, soonest expired first.
    pub(super) async fn expired_in(
        &self,
        table: &'static str,
        now_ms: i64,
        limit: u32,
    ) -> Result<Vec<String>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(&format!(
                "SELECT id FROM {table} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2"
            )))
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await?
        }))
    }

    /// Deletes row `id` of `table` if it expired by `now_ms`, and in one transaction
    /// the rows of `dependents` (table, column) that refer to it.
    pub(super) async fn delete_expired_in(
        &self,
        table: &'static str,
        dependents: &[(&'static str, &'static str)],
        id: &str,
        now_ms: i64,
    ) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            let mut tx = pool.begin().await?;
            for (dependent, column) in dependents {
                sqlx::query(&sql(&format!(
                    "DELETE FROM {dependent} WHERE {column} = $1"
                )))
                .bind(id)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(&sql(&format!(
                "DELETE FROM {table} WHERE id = $1 AND expires_at <= $2"
            )))
            .bind(id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// Tells every node that edit `id` was canceled, so the one running it stops at
    /// once (PostgreSQL `NOTIFY`; a SQLite database has one node, told directly).
    pub async fn announce_cancel(&self, id: &str) -> Result<(), DbError> {
        if let Db::Postgres(pool) = self {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CANCELS_CHANNEL)
                .bind(id)
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    /// Wakes idle workers on every node for a re-queued edit in `lane` (PostgreSQL
    /// `NOTIFY`, as an insert does).
    pub async fn announce_queued(&self, lane: Lane) -> Result<(), DbError> {
        if let Db::Postgres(pool) = self {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(NEW_EDITS_CHANNEL)
                .bind(lane.as_str())
                .execute(pool)
                .await?;
        }
        Ok(())
    }

    /// When organization `id` was created, if it exists.
    pub async fn org_created_at(&self, id: &str) -> Result<Option<i64>, DbError> {
        Ok(with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql("SELECT created_at FROM organizations WHERE id = $1"))
                .bind(id)
                .fetch_optional(pool)
                .await?
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_written_and_junk_is_no_cursor() {
        let cursor = PageCursor {
            created_at: 1_790_000_000_123,
            id: "0b9e-…".replace('…', "x"),
        };
        assert_eq!(PageCursor::decode(&cursor.encode()), Some(cursor));
        assert_eq!(PageCursor::decode("not a cursor"), None);
        assert_eq!(PageCursor::decode(""), None);
    }
}
