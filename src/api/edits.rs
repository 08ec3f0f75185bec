//! `POST /v1/edits` and `GET /v1/edits/{id}`; `GET /v1/organizations/{id}`.

use std::time::{Duration, SystemTime};

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tokio::time::Instant;

use super::auth::Organization;
use super::dry_run;
use super::error::ApiError;
use super::idempotency;
use super::json::JsonBody;
use super::presets;
use crate::api::state::AppState;
use crate::db::{unix_ms, EditRow, StoredRequest};
use crate::edits::{render_signed, NewEdit};
use crate::error_code::Code;
use crate::ids::EditId;

/// The query of `POST /v1/edits`.
#[derive(Debug, Deserialize)]
pub struct CreateQuery {
    /// `true`: answer what the edit would make, create nothing (see `dry_run`).
    #[serde(rename = "dryRun")]
    dry_run: Option<String>,
}

/// `POST /v1/edits`: validates the request, stores the edit (which enqueues it) and
/// wakes a worker; once per `Idempotency-Key`. `?dryRun=true` only plans it.
#[utoipa::path(post, path = "/v1/edits", operation_id = "createEdit", tag = "edits",
    params(
        ("dryRun" = Option<bool>, Query, description = "Plan only: fetch, probe, predict; create nothing"),
        ("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]+$", description = "1–255 printable characters; the first answer is replayed for 24 h"),
    ),
    request_body = crate::api::schemas::NewEdit,
    responses(
        (status = 201, description = "Created, queued", body = crate::api::schemas::Edit),
        (status = 200, description = "A dry run's plan", body = crate::api::schemas::EditPlan),
        (status = 400, description = "Malformed JSON or a bad Idempotency-Key", body = crate::api::schemas::ErrorDocument),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "The Idempotency-Key's first request is in flight", body = crate::api::schemas::ErrorDocument),
        (status = 413, description = "The body is too large", body = crate::api::schemas::ErrorDocument),
        (status = 415, description = "Not JSON", body = crate::api::schemas::ErrorDocument),
        (status = 422, description = "Not a valid edit (or, dry run, the error it would end with)", body = crate::api::schemas::ErrorDocument),
        (status = 429, description = "Over the write budget", body = crate::api::schemas::ErrorDocument),
        (status = 507, description = "A dry run while the server's disk is below its free-space floor", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn create(
    State(state): State<AppState>,
    org: Organization,
    Query(query): Query<CreateQuery>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    match query.dry_run.as_deref() {
        None | Some("false") => {}
        Some("true") => {
            let edit = validate(&state, &org, body, unix_ms(SystemTime::now())).await?;
            return dry_run::plan(&state, &org, &edit.job()).await;
        }
        Some(_) => {
            return Err(ApiError::invalid_query(
                "dryRun",
                "`dryRun` must be true or false.",
            ))
        }
    }
    let Some(key) = idempotency::key_of(&headers)? else {
        return create_edit(&state, &org, body, uuid::Uuid::new_v4().to_string().into()).await;
    };
    let (state, org) = (&state, &org);
    idempotency::once(state, org, &key, &body.clone(), |id| async move {
        // A first request lost with its node may have stored the edit already.
        let (id, now) = (EditId::from(id), unix_ms(SystemTime::now()));
        if let Some(row) = state.db.get_edit(&org.id, &id, now).await? {
            return Ok(created(state, &row));
        }
        create_edit(state, org, body, id).await
    })
    .await
}

/// Creates edit `id` from `body`.
async fn create_edit(
    state: &AppState,
    org: &Organization,
    body: serde_json::Value,
    id: EditId,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    let edit = validate(state, org, body, now).await?;
    let retention = edit.retention.unwrap_or(state.default_retention_secs);
    let expires_at = now.saturating_add((retention as i64).saturating_mul(1000));
    let job = edit.job();
    let stored = StoredRequest {
        request: &edit.echo,
        plan: &job.to_stored(),
        lane: job.lane(),
    };
    let row = state
        .db
        .insert_edit(&id, &org.id, stored, now, expires_at)
        .await?;
    // Every idle worker looks: a fast-lane-only worker cannot take a slow edit.
    state.wake.notify_waiters();
    tracing::Span::current().record("edit_id", id.as_str());
    tracing::info!(edit_id = %id, org = %org.id, "edit created");
    Ok(created(state, &row))
}

/// `body` as the edit it asks for, by the checks a created edit and a dry run share:
/// its preset resolved into it (so a later change of the preset changes nothing
/// here), the request validated, and every upload it names ready.
async fn validate(
    state: &AppState,
    org: &Organization,
    body: serde_json::Value,
    now: i64,
) -> Result<NewEdit, ApiError> {
    let body = presets::resolve(state, org, body).await?;
    let mut edit = NewEdit::parse(body, &state.rules)?;
    check_uploads(state, org, &edit, now).await?;
    if let Some((i, src)) = &edit.subtitles_src {
        edit.subtitles = Some(read_subtitles(state, org, (*i, src)).await?);
    }
    Ok(edit)
}

/// The subtitles asset `i` at `src`, fetched and read: `422 invalid_subtitles` with
/// the line where the file stops being subtitles, or the error fetching it ends with.
async fn read_subtitles(
    state: &AppState,
    org: &Organization,
    (i, src): (usize, &url::Url),
) -> Result<crate::media::subtitles::Subtitles, ApiError> {
    let read = state.probing.fetch_subtitles(&org.id, src).await;
    match read.map_err(dry_run::would_fail)? {
        Ok(subtitles) => Ok(subtitles),
        Err(e) => {
            let detail = format!(
                "Asset {i} is not SRT or WebVTT: line {}: {}.",
                e.line, e.reason
            );
            let mut error = ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                Code::InvalidSubtitles,
                detail,
            );
            error.pointer = Some(format!("/assets/{i}/src"));
            Err(error)
        }
    }
}

/// `201 Created` with the edit's document and `Location`.
fn created(state: &AppState, row: &EditRow) -> Response {
    let location = format!("/v1/edits/{}", row.id);
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(render(state, row)),
    )
        .into_response()
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
        let row = match state
            .db
            .get_upload(&org.id, &upload.clone().into(), now)
            .await?
        {
            Some(row) => crate::uploads::finish(&state.db, &state.storage, row, None)
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

/// The longest long poll, in seconds (docs/API.md).
const MAX_WAIT_SECS: f64 = 60.0;

/// The query of `GET /v1/edits/{id}`.
#[derive(Debug, Deserialize)]
pub struct ReadQuery {
    /// Long poll: answer once the edit has ended, or after this many seconds.
    wait: Option<String>,
}

/// Reads an edit of the caller's organization; any other id is 404. With `?wait=S`
/// (0 < S ≤ 60) it answers as soon as the edit is `done`, `failed` or `canceled`, or
/// after S seconds with its current document. The wait costs no database reads: it
/// is woken by the edit's own ending.
// Woken by `queue::FinishedEdits` (a plain comment: doc comments here are the
// OpenAPI document's words, which name no type of ours).
#[utoipa::path(get, path = "/v1/edits/{id}", operation_id = "getEdit", tag = "edits",
    params(("id" = String, Path, description = "The edit's id"),
           ("wait" = Option<f64>, Query, exclusive_minimum = 0, maximum = 60, description = "Long poll: answer when it ends, or after this many seconds (0–60)")),
    responses(
        (status = 200, description = "The edit", body = crate::api::schemas::Edit),
        (status = 400, description = "A query that cannot be read", body = crate::api::schemas::ErrorDocument),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit of this organization", body = crate::api::schemas::ErrorDocument),
        (status = 422, description = "A bad `wait`", body = crate::api::schemas::ErrorDocument),
        (status = 429, description = "Over the read budget", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn read(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
    Query(query): Query<ReadQuery>,
) -> Result<Response, ApiError> {
    let wait = query.wait.as_deref().map(wait_secs).transpose()?;
    let deadline = wait.map(|secs| Instant::now() + Duration::from_secs_f64(secs));
    // Registered before the first read, so an ending just after it is not missed.
    let waiter = deadline.map(|_| state.finished.wait_for(&id));
    loop {
        let ended = waiter.as_ref().map(|w| w.ended());
        let mut ended = std::pin::pin!(ended);
        if let Some(ended) = ended.as_mut().as_pin_mut() {
            ended.enable();
        }
        let row = state
            .db
            .get_edit(&org.id, &id, unix_ms(SystemTime::now()))
            .await?
            .ok_or_else(|| ApiError::no_edit(&id))?;
        let (Some(deadline), Some(ended)) = (deadline, ended.as_pin_mut()) else {
            return Ok(Json(render(&state, &row)).into_response());
        };
        if row.status.is_finished() || Instant::now() >= deadline {
            return Ok(Json(render(&state, &row)).into_response());
        }
        // Woken (or out of time): read again, once.
        let _ = tokio::time::timeout_at(deadline, ended).await;
    }
}

/// `wait`'s seconds: a number, more than 0 and at most 60.
fn wait_secs(text: &str) -> Result<f64, ApiError> {
    match text.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= MAX_WAIT_SECS => Ok(secs),
        _ => Err(ApiError::invalid_query(
            "wait",
            "`wait` must be a number of seconds, more than 0 and at most 60.",
        )),
    }
}

/// Renders with freshly signed download URLs.
pub(super) fn render(state: &AppState, row: &EditRow) -> serde_json::Value {
    render_signed(row, &state.storage)
}

/// `GET /v1/organizations/{id}`: the caller's own organization; any other id is 404.
#[utoipa::path(get, path = "/v1/organizations/{id}", operation_id = "getOrganization", tag = "organizations",
    params(("id" = String, Path, description = "The caller's own organization id")),
    responses(
        (status = 200, description = "The organization", body = crate::api::schemas::Organization),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "Not the caller's organization", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn organization(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let created_at = match org.id == id.as_str() {
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
