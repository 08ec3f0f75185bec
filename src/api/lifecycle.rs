//! The life of an edit after its creation (docs/API.md): `GET /v1/edits`,
//! `POST /v1/edits/{id}/cancel`, `POST /v1/edits/{id}/retry`, `DELETE /v1/edits/{id}`.

use std::collections::HashMap;
use std::time::SystemTime;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::auth::Organization;
use super::edits::render;
use super::error::ApiError;
use crate::api::state::AppState;
use crate::db::{unix_ms, Cancel, EditStatus, PageCursor, Retry};
use crate::error_code::Code;
use crate::ids::EditId;

/// Edits per page unless `limit` says otherwise, and the most it may say.
const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 100;

/// `GET /v1/edits?status=S&limit=N&cursor=C`: the caller's edits, newest first.
#[utoipa::path(get, path = "/v1/edits", operation_id = "listEdits", tag = "edits",
    params(("status" = Option<String>, Query, pattern = "^(queued|processing|done|failed|canceled)$", description = "queued, processing, done, failed or canceled"),
           ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1–100, default 20"),
           ("cursor" = Option<String>, Query, description = "From `links.next`")),
    responses(
        (status = 200, description = "A page of edits, newest first", body = crate::api::schemas::EditList),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 422, description = "A bad query parameter", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn list(
    State(state): State<AppState>,
    org: Organization,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let status = match query.get("status") {
        None => None,
        Some(text) => Some(
            EditStatus::ALL
                .into_iter()
                .find(|s| s.as_str() == text)
                .ok_or_else(|| {
                    ApiError::invalid_query(
                        "status",
                        "`status` must be one of queued, processing, done, failed and canceled.",
                    )
                })?,
        ),
    };
    let limit = match query.get("limit") {
        None => DEFAULT_LIMIT,
        Some(text) => text
            .parse()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::invalid_query(
                    "limit",
                    format!("`limit` must be a whole number from 1 to {MAX_LIMIT}."),
                )
            })?,
    };
    let cursor = match query.get("cursor") {
        None => None,
        Some(text) => Some(PageCursor::decode(text).ok_or_else(|| {
            ApiError::invalid_query(
                "cursor",
                "`cursor` is not one this service handed out; use `links.next` as given.",
            )
        })?),
    };
    let now = unix_ms(SystemTime::now());
    let page = state
        .db
        .list_edits(&org.id, now, status, cursor.as_ref(), limit)
        .await?;
    let data: Vec<_> = page.edits.iter().map(|row| render(&state, row)).collect();
    let next = page.next.map(|cursor| {
        let mut next = url::form_urlencoded::Serializer::new(String::new());
        if let Some(status) = status {
            next.append_pair("status", status.as_str());
        }
        next.append_pair("limit", &limit.to_string());
        next.append_pair("cursor", &cursor.encode());
        format!("/v1/edits?{}", next.finish())
    });
    Ok(Json(json!({ "data": data, "links": { "next": next } })).into_response())
}

/// `POST /v1/edits/{id}/cancel`: a queued or processing edit ends `canceled`; a
/// running ffmpeg is stopped at once and nothing of the edit is stored.
#[utoipa::path(post, path = "/v1/edits/{id}/cancel", operation_id = "cancelEdit", tag = "edits",
    params(("id" = String, Path, description = "The edit's id")),
    responses(
        (status = 200, description = "Canceled", body = crate::api::schemas::Edit),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "`edit_finished`", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn cancel(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    match state.db.cancel_edit(&org.id, &id, now).await? {
        Cancel::Canceled(row) => {
            stop_running(&state, &id).await;
            tracing::info!(edit.id = %id, org.id = %org.id, "edit canceled");
            Ok(Json(render(&state, &row)).into_response())
        }
        Cancel::Finished => Err(ApiError::conflict(
            Code::EditFinished,
            format!("Edit \"{id}\" has already finished; only a queued or processing edit can be canceled."),
        )),
        Cancel::NotFound => Err(ApiError::no_edit(&id)),
    }
}

/// `POST /v1/edits/{id}/retry`: a failed or canceled edit is queued again.
#[utoipa::path(post, path = "/v1/edits/{id}/retry", operation_id = "retryEdit", tag = "edits",
    params(("id" = String, Path, description = "The edit's id")),
    responses(
        (status = 200, description = "Queued again", body = crate::api::schemas::Edit),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "`edit_not_retryable`", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn retry(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    match state.db.retry_edit(&org.id, &id, now).await? {
        Retry::Queued(row, lane) => {
            if let Err(e) = state.db.announce_queued(lane).await {
                tracing::warn!(error = %e, "announcing a retried edit failed; workers find it by polling");
            }
            state.wake.notify_waiters();
            tracing::info!(edit.id = %id, org.id = %org.id, "edit queued again");
            Ok(Json(render(&state, &row)).into_response())
        }
        Retry::NotRetryable => Err(ApiError::conflict(
            Code::EditNotRetryable,
            format!("Edit \"{id}\" is not failed or canceled; only those can be retried."),
        )),
        Retry::NotFound => Err(ApiError::no_edit(&id)),
    }
}

/// `DELETE /v1/edits/{id}`: the edit is gone at once (a running one is canceled);
/// its objects and row are deleted now, or by the sweep if this is cut short.
#[utoipa::path(delete, path = "/v1/edits/{id}", operation_id = "deleteEdit", tag = "edits",
    params(("id" = String, Path, description = "The edit's id")),
    responses(
        (status = 204, description = "Deleted, with its outputs"),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    if !state.db.expire_edit(&org.id, &id, now).await? {
        return Err(ApiError::no_edit(&id));
    }
    stop_running(&state, &id).await;
    let deleted = async {
        state.storage.delete_prefix(&format!("edits/{id}/")).await?;
        state.db.delete_expired_edit(&id, now).await?;
        Ok::<_, anyhow::Error>(())
    };
    if let Err(e) = deleted.await {
        tracing::warn!(error = %e, edit.id = %id, "deleting an edit's files failed; the sweep will finish it");
    }
    tracing::info!(edit.id = %id, org.id = %org.id, "edit deleted");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Stops edit `id` wherever it runs: here directly, elsewhere through the database.
async fn stop_running(state: &AppState, id: &str) {
    state.running.cancel(id);
    state.finished.finished(id);
    if let Err(e) = state.db.announce_cancel(id).await {
        tracing::warn!(error = %e, "announcing a cancel failed; the worker stops at its next heartbeat");
    }
}
