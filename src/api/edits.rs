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
use crate::error_code::Code;

/// Validates the request, stores the edit (which enqueues it) and wakes a worker.
pub async fn create(
    State(state): State<AppState>,
    org: Organization,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let edit = NewEdit::parse(body, &state.rules)?;
    let id = uuid::Uuid::new_v4().to_string();
    let now = unix_ms(SystemTime::now());
    check_uploads(&state, &org, &edit, now).await?;
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

/// Every asset `src` that names an upload must name a complete, unexpired upload of
/// the caller's organization: `422 upload_not_found` otherwise.
async fn check_uploads(
    state: &AppState,
    org: &Organization,
    edit: &NewEdit,
    now: i64,
) -> Result<(), ApiError> {
    let prefix = crate::uploads::uploads_prefix(&state.public_url);
    for (i, asset) in edit.assets.iter().enumerate() {
        let Some(upload) = crate::uploads::upload_id_in(asset.src.as_str(), &prefix) else {
            continue;
        };
        let row = match state.db.get_upload(&org.id, &upload, now).await? {
            Some(row) => crate::uploads::finish(&state.db, &state.storage, row)
                .await
                .map_err(|e| ApiError::internal(&e))?,
            None => return Err(upload_not_found(i, &upload, "there is no such upload")),
        };
        if !row.is_complete() {
            return Err(upload_not_found(i, &upload, "it is not complete yet"));
        }
    }
    Ok(())
}

fn upload_not_found(asset: usize, upload: &str, why: &str) -> ApiError {
    let mut error = ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        Code::UploadNotFound,
        format!("Asset {asset} names upload \"{upload}\", but {why} for this organization."),
    );
    error.pointer = Some(format!("/assets/{asset}/src"));
    error
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
