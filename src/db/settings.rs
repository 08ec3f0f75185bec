//! Settings every node of an installation shares (one `settings` row each).

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

impl Db {
    /// The value of setting `name`, storing `initial` first if the setting does not
    /// exist yet. Nodes starting at once each offer their own `initial`; the first
    /// insert wins (`ON CONFLICT DO NOTHING`) and every node reads back that one value.
    pub async fn setting_or_insert(&self, name: &str, initial: &str) -> Result<String, DbError> {
        let value = with_pool!(self, |pool, sql| {
            sqlx::query(&sql(
                "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            ))
            .bind(name)
            .bind(initial)
            .execute(pool)
            .await?;
            sqlx::query_scalar(&sql("SELECT value FROM settings WHERE name = $1"))
                .bind(name)
                .fetch_one(pool)
                .await?
        });
        Ok(value)
    }
}
