//! The tus answers every upload handler shares: its refusals, and an upload finished
//! once its last byte is in.

use crate::api::error::ApiError;
use crate::api::state::AppState;
use crate::db::UploadRow;
use crate::error_code::Code;
use crate::uploads;
use axum::http::StatusCode;

/// Completes `row` if every byte is in (hashing it once; see `uploads::finish`).
pub(super) async fn finish(
    state: &AppState,
    row: UploadRow,
    whole_sha256: Option<String>,
) -> Result<UploadRow, ApiError> {
    uploads::finish(&state.db, &state.storage, row, whole_sha256)
        .await
        .map_err(|e| ApiError::internal(&e))
}

pub(super) fn bad_header(detail: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, Code::InvalidUploadHeader, detail)
}

pub(super) fn too_large(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        Code::UploadTooLarge,
        format!("Uploads are limited to {max} bytes."),
    )
}

pub(super) fn too_many_open(open: u64) -> ApiError {
    let mut error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        Code::TooManyOpenUploads,
        format!(
            "Your organization has {open} unfinished uploads, its maximum; finish or delete \
             one (unfinished uploads also expire) and try again."
        ),
    );
    error.retry_after = Some(60);
    error
}

pub(super) fn offset_mismatch(current: i64) -> ApiError {
    ApiError::conflict(
        Code::UploadOffsetMismatch,
        format!("`Upload-Offset` must be the upload's current offset, {current}; ask with HEAD and resume from there."),
    )
}

pub(super) fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("There is no upload with id \"{id}\"."))
}
