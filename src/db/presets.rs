//! Named presets (docs/API.md, "Presets"): one row per organization and name, the
//! preset's `{"commands", "options"}` as validated JSON text. An edit made from a preset
//! copies what it resolves to, so a later change here changes no existing edit.

use crate::db::error::DbError;
use crate::db::pool::{with_pool, Db};

/// One stored preset.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetRow {
    pub name: String,
    /// `{"commands": […], "options": {…}}`.
    pub body: serde_json::Value,
    pub created_at: i64,
    pub updated_at: i64,
}

type Row = (String, String, i64, i64);

fn preset(row: Row) -> Result<PresetRow, DbError> {
    let (name, body, created_at, updated_at) = row;
    let body =
        serde_json::from_str(&body).map_err(|e| DbError::Corrupt(format!("preset {name}: {e}")))?;
    Ok(PresetRow {
        name,
        body,
        created_at,
        updated_at,
    })
}

impl Db {
    /// Stores preset `name` of `org_id`, replacing one of that name. True when it is new.
    pub async fn put_preset(
        &self,
        org_id: &str,
        name: &str,
        body: &serde_json::Value,
        now_ms: i64,
    ) -> Result<bool, DbError> {
        let text = body.to_string();
        let existed: Option<i64> = with_pool!(self, |pool, sql| {
            let existed = sqlx::query_scalar(&sql(
                "SELECT created_at FROM presets WHERE org_id = $1 AND name = $2",
            ))
            .bind(org_id)
            .bind(name)
            .fetch_optional(pool)
            .await?;
            sqlx::query(&sql(
                "INSERT INTO presets (org_id, name, body, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $4) ON CONFLICT (org_id, name) \
                 DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
            ))
            .bind(org_id)
            .bind(name)
            .bind(&text)
            .bind(now_ms)
            .execute(pool)
            .await?;
            existed
        });
        Ok(existed.is_none())
    }

    /// Preset `name` of `org_id`, if it exists.
    pub async fn get_preset(&self, org_id: &str, name: &str) -> Result<Option<PresetRow>, DbError> {
        let row: Option<Row> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT name, body, created_at, updated_at FROM presets \
                 WHERE org_id = $1 AND name = $2",
            ))
            .bind(org_id)
            .bind(name)
            .fetch_optional(pool)
            .await?
        });
        row.map(preset).transpose()
    }

    /// Every preset of `org_id`, by name.
    pub async fn list_presets(&self, org_id: &str) -> Result<Vec<PresetRow>, DbError> {
        let rows: Vec<Row> = with_pool!(self, |pool, sql| {
            sqlx::query_as(&sql(
                "SELECT name, body, created_at, updated_at FROM presets \
                 WHERE org_id = $1 ORDER BY name",
            ))
            .bind(org_id)
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(preset).collect()
    }

    /// Deletes preset `name` of `org_id`; true when there was one.
    pub async fn delete_preset(&self, org_id: &str, name: &str) -> Result<bool, DbError> {
        let deleted = with_pool!(self, |pool, sql| {
            sqlx::query(&sql("DELETE FROM presets WHERE org_id = $1 AND name = $2"))
                .bind(org_id)
                .bind(name)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(deleted > 0)
    }
}
