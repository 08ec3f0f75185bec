//! `POST /v1/edits` and `GET /v1/edits/{id}`.

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
    let row = state
        .db
        .insert_edit(
            &id,
            &org.id,
            &edit.echo,
            edit.lane(),
            unix_ms(SystemTime::now()),
        )
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
        .get_edit(&org.id, &id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("There is no edit with id \"{id}\".")))?;
    Ok(Json(render(&state, &row)).into_response())
}

/// Renders with freshly signed download URLs.
fn render(state: &AppState, row: &EditRow) -> serde_json::Value {
    let now = SystemTime::now();
    let urls = row
        .outputs
        .iter()
        .map(|key| state.storage.download_url(key, now))
        .collect();
    render_edit(row, urls)
}
