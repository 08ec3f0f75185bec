//! Our own JSON body extractor, so that a wrong content type (415), an oversized body
//! (413) and malformed JSON (400) come out in the `errors[]` envelope.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use serde_json::Value;

use super::error::ApiError;
use crate::api::state::AppState;

/// A request body that is syntactically valid JSON, not yet validated.
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::unsupported_media_type());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::payload_too_large(state.max_body_bytes)
            } else {
                ApiError::malformed_json("The request body could not be read.")
            }
        })?;
        let value = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::malformed_json(format!("The request body is not valid JSON: {e}."))
        })?;
        Ok(JsonBody(value))
    }
}

/// `application/json`, with or without parameters such as `charset`.
fn is_json(content_type: Option<&header::HeaderValue>) -> bool {
    let Some(Ok(value)) = content_type.map(|v| v.to_str()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}
