//! `GET /v1/files/{key}?expires=…&signature=…`: downloads of stored outputs. The
//! signature is the authorization, so no bearer token is needed.

use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::TryStreamExt;
use serde::Deserialize;

use super::error::ApiError;
use super::AppState;
use crate::error_code::Code;
use crate::media::MediaFormat;
use crate::storage::{SignatureError, StorageError};

#[derive(Deserialize)]
pub struct Signed {
    expires: Option<String>,
    signature: Option<String>,
}

pub async fn download(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Query(signed): Query<Signed>,
) -> Result<Response, ApiError> {
    let (Some(expires), Some(signature)) = (signed.expires, signed.signature) else {
        return Err(ApiError::forbidden(
            Code::InvalidSignature,
            "The download link is not signed.",
        ));
    };
    state
        .storage
        .verify(&key, &expires, &signature, SystemTime::now())
        .map_err(|e| match e {
            SignatureError::Invalid => {
                ApiError::forbidden(Code::InvalidSignature, "The download link is not valid.")
            }
            SignatureError::Expired => ApiError::forbidden(
                Code::LinkExpired,
                "The download link has expired; read the edit again for a fresh one.",
            ),
        })?;
    let object = state.storage.get(&key).await.map_err(|e| match e {
        StorageError::NotFound => ApiError::not_found("The file no longer exists."),
        other => ApiError::internal(&other),
    })?;
    let size = object.meta.size;
    let mime = key
        .rsplit_once('.')
        .and_then(|(_, ext)| MediaFormat::from_extension(ext))
        .map(MediaFormat::mime)
        .unwrap_or("application/octet-stream");
    let stream = object.into_stream().map_err(std::io::Error::other);
    Ok((
        [
            (header::CONTENT_TYPE, mime.to_string()),
            (header::CONTENT_LENGTH, size.to_string()),
            (header::CACHE_CONTROL, "private, max-age=3600".to_string()),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}
