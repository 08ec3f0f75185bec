//! `GET /v1/edits/{id}/deliveries`: every attempt at delivering the edit's webhook
//! events (docs/API.md), oldest first.

use std::time::SystemTime;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::auth::Organization;
use super::error::ApiError;
use crate::api::state::AppState;
use crate::db::unix_ms;
use crate::edits::timestamp;
use crate::ids::EditId;

#[utoipa::path(get, path = "/v1/edits/{id}/deliveries", operation_id = "listDeliveries", tag = "webhooks",
    params(("id" = String, Path, description = "The edit's id")),
    responses(
        (status = 200, description = "Every webhook attempt, oldest first", body = crate::api::schemas::Deliveries),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn list(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    if state.db.get_edit(&org.id, &id, now).await?.is_none() {
        return Err(ApiError::no_edit(&id));
    }
    let data: Vec<_> = state
        .db
        .webhook_deliveries(&id)
        .await?
        .into_iter()
        .map(|d| {
            json!({
                "eventId": d.event_id,
                "type": d.kind,
                "attempt": d.attempt,
                "at": timestamp(d.at),
                "status": d.status,
                "error": d.error,
                "durationMs": d.duration_ms,
            })
        })
        .collect();
    Ok(Json(json!({ "data": data })).into_response())
}
