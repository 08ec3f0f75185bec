//! `POST /v1/edits?dryRun=true` (docs/API.md): the handler's side. The engine
//! (`queue::Probing`) fetches, probes and predicts under the workers' own guards; this
//! answers its plan, or the error the edit would end with as a `422` carrying its code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::auth::Organization;
use super::error::ApiError;
use crate::api::state::AppState;
use crate::edits::EditJob;
use crate::error_code::Code;
use crate::queue::JobError;

/// Answers the plan of `edit`, already validated.
pub async fn plan(
    state: &AppState,
    org: &Organization,
    edit: &EditJob,
) -> Result<Response, ApiError> {
    let plan = state
        .probing
        .plan(&org.id, edit)
        .await
        .map_err(would_fail)?;
    Ok(Json(plan).into_response())
}

/// The error the edit would end with, as a `422` carrying its code; short of disk
/// (the one `storage_error` a dry run meets), `507 insufficient_storage`, as uploads;
/// a fault of ours, `500`.
pub(super) fn would_fail(error: JobError) -> ApiError {
    if error.code == Code::StorageError {
        return ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            Code::InsufficientStorage,
            "The server is short of disk space to fetch sources now; try again later.",
        );
    }
    if error.code == Code::InternalError {
        return ApiError::internal(&"a dry run failed inside the engine");
    }
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error.code, error.detail)
}
