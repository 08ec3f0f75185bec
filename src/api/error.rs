//! The API's error type and its JSON rendering: `{"errors":[{status, code, title,
//! detail, source?}]}` (docs/API.md). Every code the API returns is made here.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::db::DbError;
use crate::edits::ValidationError;
use crate::error_code::Code;

/// An error response. Internal causes are logged where the error is made and never
/// reach the body.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: Code,
    pub title: &'static str,
    pub detail: String,
    pub pointer: Option<String>,
    /// The query parameter at fault (`source.parameter`), for errors of the query.
    pub parameter: Option<&'static str>,
    /// Seconds for the `Retry-After` header of a `429`.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `code` (and its title), answered with `status`.
    pub fn new(status: StatusCode, code: Code, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            title: code.title(),
            detail: detail.into(),
            pointer: None,
            parameter: None,
            retry_after: None,
        }
    }

    /// A query parameter that is not valid: `422` naming it in `source.parameter`.
    pub fn invalid_query(parameter: &'static str, detail: impl Into<String>) -> Self {
        let mut error = Self::new(StatusCode::UNPROCESSABLE_ENTITY, Code::InvalidQuery, detail);
        error.parameter = Some(parameter);
        error
    }

    /// A request the resource's current state does not allow: `409`.
    pub fn conflict(code: Code, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }

    pub fn malformed_json(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, Code::MalformedJson, detail)
    }

    pub fn unauthorized(detail: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::Unauthorized, detail)
    }

    pub fn forbidden(code: Code, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, detail)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, Code::NotFound, detail)
    }

    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            Code::PayloadTooLarge,
            format!("The request body is larger than the limit of {limit} bytes."),
        )
    }

    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut error = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::RateLimited,
            format!(
                "This organization is sending requests too fast; retry in {retry_after_secs} s."
            ),
        );
        error.retry_after = Some(retry_after_secs);
        error
    }

    /// A client address that presented too many unknown tokens: refused before any
    /// lookup until its failure budget refills.
    pub fn too_many_auth_failures(retry_after_secs: u64) -> Self {
        let mut error = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::TooManyAuthFailures,
            format!(
                "Too many requests from this address carried an invalid token; \
                 check the token and retry in {retry_after_secs} s."
            ),
        );
        error.retry_after = Some(retry_after_secs);
        error
    }

    /// An organization with `max` requests in flight on this node already: refused at
    /// once, so it holds nothing while it waits.
    pub fn too_many_requests(max: usize) -> Self {
        let mut error = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::TooManyRequests,
            format!(
                "This organization already has {max} requests in flight on this node \
                 (long polls and uploads included); retry in 1 s."
            ),
        );
        error.retry_after = Some(1);
        error
    }

    /// A request body that arrived slower than `min_bytes_per_sec` over a `window`.
    pub fn request_too_slow(min_bytes_per_sec: u64, window: std::time::Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            Code::RequestTooSlow,
            format!(
                "The request body arrived slower than {min_bytes_per_sec} bytes a second \
                 over {} s; what arrived of an upload is kept (see `Upload-Offset`), \
                 resume from there.",
                window.as_secs_f64()
            ),
        )
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::UnsupportedMediaType,
            "The request body must be JSON, sent with `Content-Type: application/json`.",
        )
    }

    /// A fault of ours: the cause is logged here, once, and the body says nothing of it.
    /// `404` for an edit id the caller has no edit under (another organization's
    /// edit included: its existence is not told).
    pub fn no_edit(id: &str) -> Self {
        Self::not_found(format!("There is no edit with id \"{id}\"."))
    }

    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Code::InternalError,
            "The service hit an internal error. Try again later.",
        )
    }

    /// The generic error for a status that has no more specific code (route and method
    /// errors produced by the router itself).
    pub fn for_status(status: StatusCode) -> Self {
        match status {
            StatusCode::NOT_FOUND => Self::not_found("There is nothing at this path."),
            StatusCode::METHOD_NOT_ALLOWED => Self::new(
                status,
                Code::MethodNotAllowed,
                "This path does not accept this HTTP method.",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => Self::new(
                status,
                Code::PayloadTooLarge,
                "The request body is larger than the limit.",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::unsupported_media_type(),
            StatusCode::UNAUTHORIZED => Self::unauthorized("A valid bearer token is required."),
            s if s.is_server_error() => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                Code::InternalError,
                "The service hit an internal error. Try again later.",
            ),
            s => Self::new(s, Code::BadRequest, "The request could not be processed."),
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(e: ValidationError) -> Self {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code: e.code,
            title: e.title,
            detail: e.detail,
            pointer: Some(e.pointer),
            parameter: None,
            retry_after: None,
        }
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        ApiError::internal(&e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({
            "status": self.status.as_str(),
            "code": self.code.as_str(),
            "title": self.title,
            "detail": self.detail,
        });
        if let Some(pointer) = self.pointer {
            error["source"] = json!({ "pointer": pointer });
        }
        if let Some(parameter) = self.parameter {
            error["source"] = json!({ "parameter": parameter });
        }
        let mut response = (self.status, axum::Json(json!({ "errors": [error] }))).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
