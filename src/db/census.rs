//! What `/metrics` reads from the database at scrape time.

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// Edits by status, and the queue.
#[derive(Debug, Clone, Default)]
pub struct Census {
    pub by_status: Vec<(String, i64)>,
    pub queued: i64,
    /// `created_at` of the oldest queued edit (unix ms).
    pub oldest_queued: Option<i64>,
}

impl Db {
    /// Counts unexpired edits by status at `now_ms`.
    pub async fn census(&self, now_ms: i64) -> Result<Census, DbError> {
        let (by_status, oldest): (Vec<(String, i64)>, Option<i64>) =
            with_pool!(self, |pool, sql| {
                let by_status = sqlx::query_as(&sql(
                    "SELECT status, COUNT(*) FROM edits WHERE expires_at > $1 GROUP BY status",
                ))
                .bind(now_ms)
                .fetch_all(pool)
                .await?;
                let oldest = sqlx::query_scalar(&sql(
                    "SELECT MIN(created_at) FROM edits WHERE status = 'queued' AND expires_at > $1",
                ))
                .bind(now_ms)
                .fetch_one(pool)
                .await?;
                (by_status, oldest)
            });
        let queued = by_status
            .iter()
            .find(|(status, _)| status == "queued")
            .map_or(0, |(_, n)| *n);
        Ok(Census {
            by_status,
            queued,
            oldest_queued: oldest,
        })
    }
}
