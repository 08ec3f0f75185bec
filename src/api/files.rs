//! `GET`/`HEAD /v1/files/{key}?expires=…&signature=…`: downloads of stored outputs
//! (docs/API.md). The signature is the authorization, so no bearer token is
//! needed. Files stream from the object store (local disk or S3), never read whole;
//! single byte ranges are served (`206`, `416`), so players can seek.
//!
//! HLS playlists and storyboard VTTs are served with the names inside them made
//! signed URLs (`rewrite`). Every answer carries `Access-Control-Allow-Origin: *`:
//! the signature is the credential, so a page on any origin may play what it names.

pub(super) mod rewrite;

use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::TryStreamExt;
use serde::Deserialize;

use super::error::ApiError;
use crate::api::state::AppState;
use crate::error_code::Code;
use crate::format::MediaFormat;
use crate::storage::{SignatureError, Storage, StorageError};

#[derive(Deserialize)]
pub struct Signed {
    expires: Option<String>,
    signature: Option<String>,
    /// `1` for `Content-Disposition: inline` (shown in the browser) instead of
    /// `attachment` (saved).
    inline: Option<String>,
}

#[utoipa::path(get, path = "/v1/files/{key}", operation_id = "downloadFile", tag = "downloads", security(()),
    params(("key" = String, Path, description = "From a `downloadUrls` entry"),
           ("expires" = u64, Query), ("signature" = String, Query),
           ("inline" = Option<u8>, Query, description = "1: Content-Disposition inline"),
           ("Range" = Option<String>, Header, description = "One byte range")),
    responses(
        (status = 200, description = "The file"),
        (status = 206, description = "The range"),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 400, description = "`expires` or `signature` missing or unreadable", body = crate::api::schemas::ErrorDocument),
        (status = 403, description = "A bad or expired signature", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "Gone", body = crate::api::schemas::ErrorDocument),
        (status = 416, description = "Range not satisfiable", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn download(
    State(state): State<AppState>,
    method: Method,
    Path(key): Path<String>,
    Query(signed): Query<Signed>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let max_age = verify(&state, &key, &signed)?;
    let meta = state.storage.head(&key).await.map_err(gone_or_internal)?;
    let format = format_of(&key);
    // A playlist or VTT is served as rewritten: its own bytes, length and tag.
    let rewritten = match format.filter(|f| rewrite::rewritten(Some(*f))) {
        Some(format) => {
            // Verified digits: the names inside expire with this link.
            let expires = signed
                .expires
                .as_deref()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            Some(rewritten(&state, &key, format, expires).await?)
        }
        None => None,
    };
    let size = rewritten.as_ref().map_or(meta.size, |b| b.len() as u64);
    let etag = match &rewritten {
        Some(body) => etag_of_bytes(body),
        None => etag_of(&meta),
    };
    let mut response = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::CACHE_CONTROL, format!("private, max-age={max_age}"))
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    if matches_etag(headers.get(header::IF_NONE_MATCH), &etag) {
        let response = response
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty());
        return response.map_err(|e| ApiError::internal(&e));
    }
    let inline = signed.inline.as_deref() == Some("1");
    let disposition = if inline { "inline" } else { "attachment" };
    let mime = format.map_or("application/octet-stream", MediaFormat::mime);
    response = response.header(header::CONTENT_TYPE, mime).header(
        header::CONTENT_DISPOSITION,
        format!("{disposition}; filename=\"{}\"", file_name(&key)),
    );
    let range = match requested_range(&headers, &etag, size) {
        Wanted::Whole => None,
        Wanted::Part(range) => Some(range),
        Wanted::Unsatisfiable => {
            let detail =
                format!("The file has {size} bytes; the range asked for lies beyond them.");
            let error = ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                Code::RangeNotSatisfiable,
                detail,
            );
            let mut response = error.into_response();
            let content_range = HeaderValue::try_from(format!("bytes */{size}"));
            let content_range = content_range.map_err(|e| ApiError::internal(&e))?;
            response
                .headers_mut()
                .insert(header::CONTENT_RANGE, content_range);
            return Ok(response);
        }
    };
    let length = range.as_ref().map_or(size, |r| r.end - r.start);
    response = response.header(header::CONTENT_LENGTH, length);
    if let Some(range) = &range {
        let content_range = format!("bytes {}-{}/{size}", range.start, range.end - 1);
        response = response
            .status(StatusCode::PARTIAL_CONTENT)
            .header(header::CONTENT_RANGE, content_range);
    }
    let body = if method == Method::HEAD {
        Body::empty()
    } else if let Some(bytes) = rewritten {
        let range = range.unwrap_or(0..size);
        Body::from(bytes.slice(range.start as usize..range.end as usize))
    } else {
        let object = state
            .storage
            .get(&key, range)
            .await
            .map_err(gone_or_internal)?;
        Body::from_stream(Storage::bytes_of(object).map_err(std::io::Error::other))
    };
    response.body(body).map_err(|e| ApiError::internal(&e))
}

/// Checks the link's signature; returns the seconds it stays valid, which caches
/// may keep the file for (never longer than the link works).
fn verify(state: &AppState, key: &str, signed: &Signed) -> Result<u64, ApiError> {
    let (Some(expires), Some(signature)) = (&signed.expires, &signed.signature) else {
        return Err(ApiError::forbidden(
            Code::InvalidSignature,
            "The download link is not signed.",
        ));
    };
    let now = SystemTime::now();
    state
        .storage
        .verify(key, expires, signature, now)
        .map_err(|e| match e {
            SignatureError::Invalid => {
                ApiError::forbidden(Code::InvalidSignature, "The download link is not valid.")
            }
            SignatureError::Expired => ApiError::forbidden(
                Code::LinkExpired,
                "The download link has expired; read the edit again for a fresh one.",
            ),
        })?;
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    Ok(expires.parse::<u64>().unwrap_or(now).saturating_sub(now))
}

fn gone_or_internal(e: StorageError) -> ApiError {
    match e {
        StorageError::NotFound => ApiError::not_found("The file no longer exists."),
        other => ApiError::internal(&other),
    }
}

/// A strong ETag: the store's own (S3's content hash; a local file's identity, size
/// and time), quoted.
fn etag_of(meta: &object_store::ObjectMeta) -> String {
    let tag = match &meta.e_tag {
        Some(tag) => tag.trim_matches('"').to_string(),
        None => format!(
            "{:x}-{:x}",
            meta.size,
            meta.last_modified.timestamp_millis()
        ),
    };
    format!("\"{tag}\"")
}

/// Whether an `If-None-Match` (or `If-Range`) header names `etag` (or `*`).
pub(super) fn matches_etag(header: Option<&HeaderValue>, etag: &str) -> bool {
    let Some(value) = header.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    value
        .split(',')
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == etag)
}

/// What part of the file a request wants.
#[derive(Debug, PartialEq)]
enum Wanted {
    Whole,
    /// One range, end exclusive.
    Part(std::ops::Range<u64>),
    Unsatisfiable,
}

/// The one byte range `Range` asks for. A header that does not parse, asks for
/// several ranges (this server sends no multipart bodies) or comes with an `If-Range`
/// for another version of the file is ignored, as RFC 9110 allows: the whole file.
fn requested_range(headers: &HeaderMap, etag: &str, size: u64) -> Wanted {
    let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Wanted::Whole;
    };
    if headers.contains_key(header::IF_RANGE) && !matches_etag(headers.get(header::IF_RANGE), etag)
    {
        return Wanted::Whole;
    }
    let Ok(parsed) = http_range_header::parse_range_header(range) else {
        return Wanted::Whole;
    };
    if parsed.len() != 1 {
        return Wanted::Whole;
    }
    match parsed.validate(size) {
        Ok(ranges) => match ranges.first() {
            Some(r) => Wanted::Part(*r.start()..r.end() + 1),
            None => Wanted::Whole,
        },
        Err(_) => Wanted::Unsatisfiable,
    }
}

pub(super) fn format_of(key: &str) -> Option<MediaFormat> {
    key.rsplit_once('.')
        .and_then(|(_, ext)| MediaFormat::from_extension(ext))
}

/// The playlist or VTT under `key` with its names signed until `expires`. Ours and
/// small (a playlist line per segment), so read whole.
async fn rewritten(
    state: &AppState,
    key: &str,
    format: MediaFormat,
    expires: u64,
) -> Result<bytes::Bytes, ApiError> {
    let object = state
        .storage
        .get(key, None)
        .await
        .map_err(gone_or_internal)?;
    let stored = object.bytes().await.map_err(|e| ApiError::internal(&e))?;
    let text = String::from_utf8_lossy(&stored);
    let body = rewrite::rewrite(&state.storage, key, format, &text, expires);
    Ok(bytes::Bytes::from(body))
}

/// A strong ETag of a body made for this answer: its SHA-256, shortened.
fn etag_of_bytes(body: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(body);
    format!("\"{}\"", hex::encode(&digest[..16]))
}

/// `Access-Control-Allow-Origin: *` on every download answer, errors included, and
/// the headers a player's script may read: a signed link is its own credential, so
/// a page on any origin may fetch it (and read why it failed).
pub async fn allow_any_origin(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Content-Length, Content-Range, Accept-Ranges, ETag"),
    );
    response
}

/// A CORS preflight for a download (a player sending `Range` or `If-None-Match`):
/// `204`, `GET` and `HEAD` from any origin with those headers.
#[utoipa::path(options, path = "/v1/files/{key}", operation_id = "downloadPreflight", tag = "downloads", security(()),
    params(("key" = String, Path, description = "The stored file's key, as in its download URL")),
    responses((status = 204, description = "CORS preflight: Access-Control-Allow-Origin *, methods GET and HEAD, headers Range and If-None-Match")))]
pub async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Range, If-None-Match, If-Range"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("86400"),
    );
    response
}

/// The saved file's name: `<edit id>-<asset>-<n>.<ext>` for an output key
/// (`edits/<edit id>/<attempt>/<asset>-<n>.<ext>`), else the key's last segment.
pub(super) fn file_name(key: &str) -> String {
    let parts: Vec<&str> = key.split('/').collect();
    match parts.as_slice() {
        ["edits", id, _, name] => format!("{id}-{name}"),
        _ => parts.last().copied().unwrap_or("download").to_string(),
    }
    .replace(['"', '\\'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_range(range: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, range.parse().unwrap());
        headers
    }

    #[test]
    fn one_range_is_served_and_anything_else_is_the_whole_file_or_416() {
        let tag = "\"t\"";
        assert_eq!(requested_range(&HeaderMap::new(), tag, 100), Wanted::Whole);
        assert_eq!(
            requested_range(&with_range("bytes=0-9"), tag, 100),
            Wanted::Part(0..10)
        );
        assert_eq!(
            requested_range(&with_range("bytes=90-"), tag, 100),
            Wanted::Part(90..100)
        );
        assert_eq!(
            requested_range(&with_range("bytes=-5"), tag, 100),
            Wanted::Part(95..100)
        );
        assert_eq!(
            requested_range(&with_range("bytes=50-500"), tag, 100),
            Wanted::Part(50..100)
        );
        assert_eq!(
            requested_range(&with_range("bytes=100-"), tag, 100),
            Wanted::Unsatisfiable
        );
        assert_eq!(
            requested_range(&with_range("bytes=0-1,5-6"), tag, 100),
            Wanted::Whole
        );
        assert_eq!(
            requested_range(&with_range("lines=1-2"), tag, 100),
            Wanted::Whole
        );
        let mut stale = with_range("bytes=0-9");
        stale.insert(header::IF_RANGE, "\"old\"".parse().unwrap());
        assert_eq!(requested_range(&stale, tag, 100), Wanted::Whole);
    }

    #[test]
    fn a_downloaded_output_is_named_after_its_edit_asset_and_index() {
        assert_eq!(file_name("edits/e1/3/0-12.webp"), "e1-0-12.webp");
        assert_eq!(file_name("uploads/u1/content"), "content");
    }
}
