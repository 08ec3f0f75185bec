//! The nodes that run chunks across nodes (`--chunk-across-nodes`) and their CPU
//! slots: each node writes its row every few seconds (`queue::chunk_claims`), and a
//! chunked encode is cut into as many chunks as the nodes seen lately have slots
//! together, so one long edit runs on the whole cluster rather than on the cores of
//! the node that claimed it. Times come from the database's clock, as leases' do.

use crate::db::clock::{PG_NOW_MS, SQLITE_NOW_MS};
use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

impl Db {
    fn now_ms_sql(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => SQLITE_NOW_MS,
            Db::Postgres(_) => PG_NOW_MS,
        }
    }

    /// Records that node `node_id`, with `slots` CPU slots, is running now.
    pub async fn chunk_node_seen(&self, node_id: &str, slots: usize) -> Result<(), DbError> {
        let now = self.now_ms_sql();
        let text = format!(
            "INSERT INTO chunk_nodes (node_id, slots, seen_at) VALUES ($1, $2, {now}) \
             ON CONFLICT (node_id) DO UPDATE SET slots = excluded.slots, seen_at = excluded.seen_at"
        );
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql(&text))
                .bind(node_id)
                .bind(slots as i64)
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// The CPU slots of every node seen within the last `within_ms` milliseconds.
    pub async fn chunk_node_slots(&self, within_ms: i64) -> Result<usize, DbError> {
        let now = self.now_ms_sql();
        let text = format!(
            "SELECT CAST(COALESCE(SUM(slots), 0) AS BIGINT) FROM chunk_nodes WHERE seen_at >= {now} - $1"
        );
        let slots: i64 = with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(&text))
                .bind(within_ms)
                .fetch_one(pool)
                .await?
        });
        Ok(slots.max(0) as usize)
    }

    /// How many slots the chunks of step `step` of edit `edit_id` were planned for by
    /// an earlier attempt at the edit, if one added any.
    pub async fn planned_slots(&self, edit_id: &str, step: &str) -> Result<Option<usize>, DbError> {
        let text =
            "SELECT CAST(MAX(slots) AS BIGINT) FROM edit_chunks WHERE edit_id = $1 AND step = $2";
        let slots: Option<i64> = with_pool!(self, |pool, sql| {
            sqlx::query_scalar(&sql(text))
                .bind(edit_id)
                .bind(step)
                .fetch_one(pool)
                .await?
        });
        Ok(slots.map(|s| s.max(1) as usize))
    }

    /// Forgets node `node_id`: it stops, and its slots are no longer planned on.
    pub async fn chunk_node_gone(&self, node_id: &str) -> Result<(), DbError> {
        with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM chunk_nodes WHERE node_id = $1"))
                .bind(node_id)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}
