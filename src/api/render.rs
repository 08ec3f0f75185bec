//! `GET /v1/render/{signature}/{transform}/{source}` (docs/API.md, "Render"): the
//! transformed image, synchronously. The signature is the authorization (no bearer
//! token); the answer names its content, so it may be cached for a year by anyone
//! (`public, immutable`) — or, for a URL with `exp:`, until it expires and no longer,
//! after which it answers `410 render_expired` —, varies by `Accept` (for `f:auto`), and carries a strong ETag
//! that `If-None-Match` is answered `304` against. A cached result is streamed from
//! storage as it is, never decoded.
//!
//! A render is a request of the organization whose key signed it: it takes a place
//! among that organization's requests in flight (`429` past `--max-requests-per-org`),
//! waits for its fair share of the node's network and CPU slots, and ends at
//! `--render-timeout-secs` with `504 render_timeout`. A client that goes away stops
//! its render, unless another request waits for the same one.

use axum::body::Body;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use axum::Extension;
use futures::TryStreamExt;

use super::error::ApiError;
use super::files::matches_etag;
use super::in_flight::{admit, InFlightSlot};
use crate::api::state::AppState;
use crate::error_code::Code;
use crate::format::MediaFormat;
use crate::render::cache::Entry;
use crate::render::{unix_now, Failure, Renderer};
use crate::storage::{Storage, StorageError};

/// `Cache-Control` of every image answered: the URL names its content.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

#[utoipa::path(get, path = "/v1/render/{signature}/{transform}/{source}", operation_id = "render", tag = "render", security(()),
    params(("signature" = String, Path, description = "base64url of HMAC-SHA256 of `{transform}/{source}` under a render key"),
           ("transform" = String, Path, description = "`preset:NAME` and/or `w:300,h:200,fit:cover,g:smart,f:auto,q:80`"),
           ("source" = String, Path, description = "base64url of the source URL, or `upload:{id}`"),
           ("Accept" = Option<String>, Header, description = "Picks the format of `f:auto`"),
           ("If-None-Match" = Option<String>, Header)),
    responses(
        (status = 200, description = "The image"),
        (status = 304, description = "Not modified (If-None-Match)"),
        (status = 403, description = "A bad signature", body = crate::api::schemas::ErrorDocument),
        (status = 410, description = "The transform's `exp:` has passed (`render_expired`)", body = crate::api::schemas::ErrorDocument),
        (status = 422, description = "A bad transform or source, or a source that cannot be fetched or read (the codes of an edit)", body = crate::api::schemas::ErrorDocument),
        (status = 429, description = "The organization has `--max-requests-per-org` requests in flight on this node", body = crate::api::schemas::ErrorDocument),
        (status = 504, description = "The render took longer than `--render-timeout-secs`", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn render(
    State(state): State<AppState>,
    Path((signature, transform, source)): Path<(String, String, String)>,
    slot: Option<Extension<InFlightSlot>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let renderer = &state.renderer;
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let job = renderer
        .prepare(&signature, &transform, &source, accept)
        .await
        .map_err(api_error)?;
    // The key's organization is the request's, as a token's is: its share of the node.
    tracing::Span::current().record("org", job.org.as_str());
    admit(&state.in_flight, slot.as_deref(), &job.org)?;
    let timeout = renderer.timeout;
    match tokio::time::timeout(timeout, answer(renderer, job, &headers)).await {
        Ok(answered) => answered,
        // Dropping the render stops it unless another request waits for it too.
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            Code::RenderTimeout,
            format!(
                "The render took longer than {} s and was stopped; retry later, or ask \
                 for a smaller picture.",
                timeout.as_secs()
            ),
        )),
    }
}

/// The image for a checked `job`: from the cache, or rendered now.
async fn answer(
    renderer: &Arc<Renderer>,
    job: crate::render::Job,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let if_none_match = headers.get(header::IF_NONE_MATCH);
    let cache_control = cache_control(job.expires);
    let cache_control = cache_control.as_str();
    let started = std::time::Instant::now();
    if let Some(entry) = renderer.cached(&job).await.map_err(api_error)? {
        let still = renderer.still_cached(&job, &entry);
        if matches_etag(if_none_match, &entry.etag) && still.await.map_err(api_error)? {
            renderer
                .metrics
                .render_answered("not_modified", started.elapsed());
            return not_modified(&entry, cache_control);
        }
        match renderer.cache.storage().get(&entry.object_key, None).await {
            Ok(object) => {
                renderer.metrics.render_answered("hit", started.elapsed());
                let body =
                    Body::from_stream(Storage::bytes_of(object).map_err(std::io::Error::other));
                return image(&entry, cache_control, body);
            }
            // Evicted by another node since, or deleted with its upload: rendered
            // again (or refused, the upload gone).
            Err(StorageError::NotFound) => renderer.cache.forget(&entry.object_key).await,
            Err(e) => return Err(ApiError::internal(&e)),
        }
    }
    let rendered = renderer.render(job).await.map_err(api_error)?;
    let entry = &rendered.entry;
    if matches_etag(if_none_match, &entry.etag) {
        return not_modified(entry, cache_control);
    }
    match rendered.bytes {
        Some(bytes) => image(entry, cache_control, Body::from(bytes)),
        None => Err(ApiError::internal(&"a render made no bytes")),
    }
}

/// `Cache-Control` of an answer to a URL that `expires` (unix seconds) or not: a URL
/// with `exp:` may be kept only for the seconds it has left, so no cache serves it
/// after it stops working here.
fn cache_control(expires: Option<u64>) -> String {
    match expires {
        None => IMMUTABLE.to_string(),
        Some(at) => format!("public, max-age={}", at.saturating_sub(unix_now())),
    }
}

/// The headers every answer carries.
fn headers_of(entry: &Entry, cache_control: &str) -> axum::http::response::Builder {
    Response::builder()
        .header(header::ETAG, &entry.etag)
        .header(header::VARY, "Accept")
        .header(header::CACHE_CONTROL, cache_control)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        // A signed URL is its own credential: pages of any origin may draw it on a canvas.
        .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
}

fn image(entry: &Entry, cache_control: &str, body: Body) -> Result<Response, ApiError> {
    let mime = MediaFormat::from_extension(&entry.format)
        .map(MediaFormat::mime)
        .unwrap_or("application/octet-stream");
    headers_of(entry, cache_control)
        .header(header::CONTENT_TYPE, mime)
        .header(header::CONTENT_LENGTH, entry.bytes)
        .body(body)
        .map_err(|e| ApiError::internal(&e))
}

fn not_modified(entry: &Entry, cache_control: &str) -> Result<Response, ApiError> {
    headers_of(entry, cache_control)
        .status(StatusCode::NOT_MODIFIED)
        .body(Body::empty())
        .map_err(|e| ApiError::internal(&e))
}

fn api_error(failure: Failure) -> ApiError {
    ApiError::new(failure.status, failure.code, failure.detail)
}
