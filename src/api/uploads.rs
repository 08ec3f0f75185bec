//! `/v1/uploads` (docs/API.md): direct uploads (`POST` with the file as the body)
//! and the tus 1.0.0 protocol (core, creation, creation-with-upload, termination,
//! expiration) on the same resource. Bodies stream to the object store as they
//! arrive; the offset and the parts live in the database, so an upload resumes on any
//! node, after any restart.

use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::Organization;
use super::error::ApiError;
use crate::api::state::AppState;
use crate::db::{unix_ms, QuotaRefusal, UploadRow};
use crate::error_code::Code;
use crate::uploads;

mod append;
pub(super) mod in_flight;
use append::append;
pub use in_flight::InFlightUploads;

mod replies;
use replies::{bad_header, finish, not_found, offset_mismatch, too_large, too_many_open};

const TUS_VERSION: &str = "1.0.0";
const TUS_EXTENSIONS: &str = "creation,creation-with-upload,termination,expiration";
const OFFSET_STREAM: &str = "application/offset+octet-stream";
const TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");
const UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
const UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");
const UPLOAD_EXPIRES: HeaderName = HeaderName::from_static("upload-expires");
const UPLOAD_METADATA: HeaderName = HeaderName::from_static("upload-metadata");

/// `OPTIONS /v1/uploads`: what tus this server speaks. No token needed (a browser's
/// preflight carries none), and it says nothing about anyone's uploads.
#[utoipa::path(options, path = "/v1/uploads", operation_id = "uploadOptions", tag = "uploads", security(()),
    responses((status = 204, description = "tus: Tus-Version, Tus-Extension, Tus-Max-Size")))]
pub async fn options(State(state): State<AppState>) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    headers.insert("tus-version", HeaderValue::from_static(TUS_VERSION));
    headers.insert("tus-extension", HeaderValue::from_static(TUS_EXTENSIONS));
    headers.insert("tus-max-size", HeaderValue::from(state.uploads.max_bytes));
    response
}

/// `POST /v1/uploads`: a tus creation when `Tus-Resumable` is sent, else a direct
/// upload of the whole body.
#[utoipa::path(post, path = "/v1/uploads", operation_id = "createUpload", tag = "uploads",
    request_body(content = Option<Vec<u8>>, content_type = "application/octet-stream", description = "The file (direct; may be empty), or a tus creation (with `Tus-Resumable` and `Upload-Length`)"),
    responses(
        (status = 201, description = "Created", body = crate::api::schemas::Upload),
        (status = 400, description = "A bad tus header", body = crate::api::schemas::ErrorDocument),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 413, description = "Larger than allowed, or past the organization's upload quota", body = crate::api::schemas::ErrorDocument),
        (status = 429, description = "The organization's unfinished uploads are at their maximum", body = crate::api::schemas::ErrorDocument),
        (status = 507, description = "The server's disk is below its free-space floor", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn create(
    State(state): State<AppState>,
    org: Organization,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check_tus_version(&headers)?;
    let tus = headers.contains_key(TUS_RESUMABLE);
    let length = match (tus, headers.get(UPLOAD_LENGTH)) {
        (true, None) => {
            return Err(bad_header("`Upload-Length` is required to create a tus upload (deferred lengths are not supported)."))
        }
        (true, Some(value)) => Some(number(value, "Upload-Length")?),
        (false, _) => match headers.get(header::CONTENT_LENGTH) {
            Some(value) => Some(number(value, "Content-Length")?),
            None => None,
        },
    };
    if length.is_some_and(|n| n > state.uploads.max_bytes) {
        return Err(too_large(state.uploads.max_bytes));
    }
    append::disk_room(&state)?;
    let now = unix_ms(SystemTime::now());
    let metadata = match headers.get(UPLOAD_METADATA) {
        Some(value) => {
            uploads::metadata::parse(value.as_bytes()).map_err(|why| bad_header(&why))?;
            // Checked: printable ASCII, so a string, stored as sent.
            value.to_str().ok().map(str::to_string)
        }
        None => None,
    };
    let row = UploadRow {
        id: uuid::Uuid::new_v4().to_string(),
        org_id: org.id.to_string(),
        created_at: now,
        expires_at: now + (state.uploads.retention_secs as i64).saturating_mul(1000),
        length: length.map(|n| n as i64),
        received: 0,
        sha256: None,
        metadata,
    };
    match state
        .db
        .insert_upload_within(&row, state.uploads.quota())
        .await?
    {
        Ok(()) => {}
        Err(QuotaRefusal::Bytes(_)) => {
            return Err(append::quota_exceeded(state.uploads.max_bytes_per_org))
        }
        Err(QuotaRefusal::Open(usage)) => return Err(too_many_open(usage.open)),
    }
    let with_body = !tus || content_type(&headers) == Some(OFFSET_STREAM);
    let row = if with_body {
        match append(&state, &row, body, !tus).await {
            Ok(row) => row,
            Err(e) => {
                // Nothing of a refused upload stays: the sweep removes what was stored.
                let _ = state.db.expire_upload(&org.id, &row.id, now + 1).await;
                return Err(e);
            }
        }
    } else {
        finish(&state, row, None).await?
    };
    tracing::info!(upload_id = %row.id, org = %org.id, bytes = row.received, tus, "upload created");
    let mut response = (
        StatusCode::CREATED,
        [(header::LOCATION, format!("/v1/uploads/{}", row.id))],
        Json(uploads::render_upload(&row, &state.public_url)),
    )
        .into_response();
    if tus {
        tus_headers(response.headers_mut(), &row);
    }
    Ok(response)
}

/// `GET /v1/uploads/{id}`: the Upload document.
#[utoipa::path(get, path = "/v1/uploads/{id}", operation_id = "getUpload", tag = "uploads", params(("id" = String, Path, description = "The upload's id")),
    responses(
        (status = 200, description = "The upload", body = crate::api::schemas::Upload),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such upload", body = crate::api::schemas::ErrorDocument),
        (status = 429, description = "Over the read budget", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn read(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = finish(&state, find(&state, &org, &id).await?, None).await?;
    Ok(Json(uploads::render_upload(&row, &state.public_url)).into_response())
}

/// `HEAD /v1/uploads/{id}`: tus's offset, in headers only.
#[utoipa::path(head, path = "/v1/uploads/{id}", operation_id = "headUpload", tag = "uploads", params(("id" = String, Path, description = "The upload's id")),
    responses((status = 200, description = "tus: Upload-Offset, Upload-Length"), (status = 401, description = "No valid token"), (status = 404, description = "No such upload")))]
pub async fn head(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    // The offset only: never hashes, even while the upload completes.
    let row = find(&state, &org, &id).await?;
    let mut response = StatusCode::OK.into_response();
    let headers = response.headers_mut();
    tus_headers(headers, &row);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(metadata) = row
        .metadata
        .as_deref()
        .and_then(|m| HeaderValue::from_str(m).ok())
    {
        headers.insert(UPLOAD_METADATA, metadata);
    }
    Ok(response)
}

/// `PATCH /v1/uploads/{id}`: appends the body at `Upload-Offset`, which must be the
/// current offset (`409 upload_offset_mismatch` otherwise).
#[utoipa::path(patch, path = "/v1/uploads/{id}", operation_id = "appendUpload", tag = "uploads", params(("id" = String, Path, description = "The upload's id")),
    request_body(content = Vec<u8>, content_type = "application/offset+octet-stream"),
    responses(
        (status = 204, description = "Appended; Upload-Offset"),
        (status = 400, description = "A bad tus header", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such upload", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "`Upload-Offset` does not match", body = crate::api::schemas::ErrorDocument),
        (status = 413, description = "Past Upload-Length", body = crate::api::schemas::ErrorDocument),
        (status = 415, description = "Not `application/offset+octet-stream`", body = crate::api::schemas::ErrorDocument),
        (status = 507, description = "The server's disk is below its free-space floor", body = crate::api::schemas::ErrorDocument),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument), (status = 429, description = "Over the budget", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn patch(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    check_tus_version(&headers)?;
    if content_type(&headers) != Some(OFFSET_STREAM) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::UnsupportedMediaType,
            format!("A PATCH must be sent with `Content-Type: {OFFSET_STREAM}`."),
        ));
    }
    let offset = match headers.get(UPLOAD_OFFSET) {
        Some(value) => number(value, "Upload-Offset")?,
        None => return Err(bad_header("`Upload-Offset` is required.")),
    };
    append::disk_room(&state)?;
    let row = find(&state, &org, &id).await?;
    if offset != row.received as u64 {
        return Err(offset_mismatch(row.received));
    }
    let row = append(&state, &row, body, false).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    tus_headers(response.headers_mut(), &row);
    Ok(response)
}

/// `DELETE /v1/uploads/{id}` (tus termination): gone at once; its parts, and the
/// renders cached from it, are deleted now (a PATCH still streaming included), or by
/// the sweep if this is cut short.
#[utoipa::path(delete, path = "/v1/uploads/{id}", operation_id = "deleteUpload", tag = "uploads", params(("id" = String, Path, description = "The upload's id")),
    responses((status = 204, description = "Terminated"), (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument), (status = 429, description = "Over the budget", body = crate::api::schemas::ErrorDocument), (status = 404, description = "No such upload", body = crate::api::schemas::ErrorDocument)))]
pub async fn delete(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let now = unix_ms(SystemTime::now());
    if !uploads::valid_id(&id) || !state.db.expire_upload(&org.id, &id, now).await? {
        return Err(not_found(&id));
    }
    // A body of it still streaming here stops and stores nothing; one streaming on
    // another node finds the upload gone when it records its part, and deletes it.
    state.uploads_in_flight.stop(&id);
    let deleted = async {
        let renders = uploads::delete_objects(&state.db, &state.storage, &id).await?;
        state.renderer.cache.forget_here(&renders);
        state.db.delete_expired_upload(&id, now).await?;
        Ok::<_, anyhow::Error>(())
    };
    if let Err(e) = deleted.await {
        tracing::warn!(error = %e, upload.id = %id, "deleting an upload's parts failed; the sweep will finish it");
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    Ok(response)
}

/// `GET /v1/uploads/{id}/content`: the uploaded bytes, streamed, once complete.
#[utoipa::path(get, path = "/v1/uploads/{id}/content", operation_id = "getUploadContent", tag = "uploads", params(("id" = String, Path, description = "The upload's id")),
    responses((status = 200, description = "The uploaded bytes", content_type = "application/octet-stream"),
              (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument), (status = 429, description = "Over the budget", body = crate::api::schemas::ErrorDocument), (status = 404, description = "No such complete upload", body = crate::api::schemas::ErrorDocument)))]
pub async fn content(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = finish(&state, find(&state, &org, &id).await?, None).await?;
    if !row.is_complete() {
        return Err(ApiError::not_found(format!(
            "Upload \"{id}\" is not complete yet."
        )));
    }
    let keys = state
        .db
        .upload_parts(&id)
        .await?
        .into_iter()
        .map(|p| p.object_key)
        .collect();
    let stream = state.storage.concatenated(keys);
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, row.received.to_string()),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

/// Upload `id` of the caller's organization, unexpired; anything else is 404.
async fn find(state: &AppState, org: &Organization, id: &str) -> Result<UploadRow, ApiError> {
    if !uploads::valid_id(id) {
        return Err(not_found(id));
    }
    let now = unix_ms(SystemTime::now());
    state
        .db
        .get_upload(&org.id, &id.into(), now)
        .await?
        .ok_or_else(|| not_found(id))
}

/// The tus headers of every response about `row`.
fn tus_headers(headers: &mut HeaderMap, row: &UploadRow) {
    headers.insert(TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    headers.insert(UPLOAD_OFFSET, HeaderValue::from(row.received));
    if let Some(length) = row.length {
        headers.insert(UPLOAD_LENGTH, HeaderValue::from(length));
    }
    let expires = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(row.expires_at)
        .unwrap_or_default()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    if let Ok(expires) = HeaderValue::from_str(&expires) {
        headers.insert(UPLOAD_EXPIRES, expires);
    }
}

/// A `Tus-Resumable` other than 1.0.0 is `412` with the version this server speaks.
fn check_tus_version(headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get(TUS_RESUMABLE) {
        Some(version) if version != TUS_VERSION => Err(ApiError::new(
            StatusCode::PRECONDITION_FAILED,
            Code::TusVersionUnsupported,
            format!("This server speaks tus {TUS_VERSION} only."),
        )),
        _ => Ok(()),
    }
}

fn content_type(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim())
}

fn number(value: &HeaderValue, name: &str) -> Result<u64, ApiError> {
    value
        .to_str()
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad_header(&format!("`{name}` must be a whole number of bytes.")))
}
