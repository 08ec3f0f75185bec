//! `POST /v1/edits` and `GET /v1/edits/{id}`; `GET /v1/organizations/{id}`.

use std::time::SystemTime;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::Organization;
use super::error::ApiError;
use super::json::JsonBody;
use super::AppState;
use crate::db::{unix_ms, EditRow};
use crate::edits::{render_edit, NewEdit};

/// Validates the request, stores the edit (which enqueues it) and wakes a worker.
pub async fn create(
    State(state): State<AppState>,
    org: Organization,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let edit = NewEdit::parse(body, state.rules)?;
    let id = uuid::Uuid::new_v4().to_string();
    let now = unix_ms(SystemTime::now());
    let retention = edit.retention.unwrap_or(state.default_retention_secs);
    let expires_at = now.saturating_add((retention as i64).saturating_mul(1000));
    let row = state
        .db
        .insert_edit(&id, &org.id, &edit.echo, edit.lane(), now, expires_at)
        .await?;
    // Every idle worker looks: a fast-lane-only worker cannot take a slow edit.
    state.wake.notify_waiters();
    tracing::info!(edit.id = %id, org.id = %org.id, "edit created");
    let location = format!("/v1/edits/{id}");
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(render(&state, &row)),
    )
        .into_response())
}

/// Reads an edit of the caller's organization; any other id is 404.
pub async fn read(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = state
        .db
        .get_edit(&org.id, &id, unix_ms(SystemTime::now()))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("There is no edit with id \"{id}\".")))?;
    Ok(Json(render(&state, &row)).into_response())
}

/// Renders with freshly signed download URLs.
pub(super) fn render(state: &AppState, row: &EditRow) -> serde_json::Value {
    let now = SystemTime::now();
    let urls = row
        .outputs
        .iter()
        .map(|output| state.storage.download_url(&output.key, now))
        .collect();
    render_edit(row, urls)
}

/// `GET /v1/organizations/{id}`: the caller's own organization; any other id is 404.
pub async fn organization(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let created_at = match id == org.id {
        true => state.db.org_created_at(&id).await?,
        false => None,
    };
    let created_at = created_at.ok_or_else(|| {
        ApiError::not_found(format!("There is no organization with id \"{id}\"."))
    })?;
    Ok(Json(serde_json::json!({
        "type": "organization",
        "id": id,
        "attributes": { "createdAt": crate::edits::timestamp(created_at) },
    }))
    .into_response())
}
