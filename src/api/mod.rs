//! The HTTP layer: router, extractors, error rendering, handlers.

mod archive;
mod auth;
mod body_rate;
pub(crate) mod catalog;
mod deliveries;
mod dry_run;
mod edits;
mod error;
mod files;
mod health;
mod idempotency;
mod in_flight;
mod json;
mod lifecycle;
pub mod openapi;
mod playground;
mod presets;
mod rate_limit;
mod render;
pub mod schemas;
pub mod server;
mod token_cache;
mod uploads;

pub use body_rate::BodyRate;
pub use error::ApiError;
pub use health::Readiness;
pub use in_flight::InFlight;
pub use rate_limit::{RateLimiter, RateLimits};
pub use token_cache::TokenCache;
pub use uploads::InFlightUploads;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::{header, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use tower_http::trace::TraceLayer;

use crate::db::Db;
use crate::metrics::{Metrics, RequestLabels};

mod state;
pub use state::AppState;
pub use state::UploadLimits;

/// The service's routes; `/metrics` among them unless `with_metrics` is false (it is
/// then served on its own address, see [`metrics_router`]).
pub fn router(state: AppState, with_metrics: bool) -> Router {
    let body_limit = state.max_body_bytes;
    let body_rate = state.body_rate;
    let metrics = with_metrics.then(|| metrics_router(state.metrics.clone(), state.db.clone()));
    Router::new()
        .route("/v1/edits", post(edits::create).get(lifecycle::list))
        .route("/v1/edits/{id}", get(edits::read).delete(lifecycle::delete))
        .route("/v1/edits/{id}/cancel", post(lifecycle::cancel))
        .route("/v1/edits/{id}/retry", post(lifecycle::retry))
        .route("/v1/edits/{id}/deliveries", get(deliveries::list))
        .route("/v1/edits/{id}/archive", get(archive::archive))
        .route(
            "/v1/render/{signature}/{transform}/{source}",
            get(render::render),
        )
        .route("/v1/organizations/{id}", get(edits::organization))
        .route("/v1/commands", get(catalog::list))
        .route("/v1/presets", get(presets::list))
        .route(
            "/v1/presets/{name}",
            get(presets::read).put(presets::put).delete(presets::delete),
        )
        .route(
            "/v1/uploads",
            post(uploads::create).options(uploads::options),
        )
        .route(
            "/v1/uploads/{id}",
            get(uploads::read)
                .head(uploads::head)
                .patch(uploads::patch)
                .delete(uploads::delete),
        )
        .route("/v1/uploads/{id}/content", get(uploads::content))
        .route(
            "/v1/files/{*key}",
            get(files::download)
                .options(files::preflight)
                .layer(axum::middleware::map_response(files::allow_any_origin)),
        )
        .route("/v1/openapi.json", get(openapi::openapi_json))
        .route("/docs", get(openapi::docs))
        .route("/", get(playground::page))
        .route("/playground/hls.light.min.js", get(playground::hls_js))
        .merge(health_router(state.readiness.clone()))
        .merge(metrics.unwrap_or_default())
        // A route layer, so each request is counted under its route's pattern.
        .route_layer(axum::middleware::from_fn_with_state(
            state.metrics.clone(),
            crate::metrics::count_requests,
        ))
        .fallback(unmatched)
        .layer(axum::middleware::map_response(envelope_bare_errors))
        .layer(axum::middleware::from_fn(rate_limit::quota_headers))
        .layer(axum::middleware::from_fn(in_flight::hold))
        .layer(axum::middleware::from_fn_with_state(
            body_rate,
            body_rate::min_body_rate,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(
            // Paths only: queries may carry download signatures, which are never logged,
            // and a render path's signature (and a source URL's credentials) are
            // redacted. `org` and `edit_id` are filled in by the auth extractor and by
            // edit creation, so the lines of a request name whom it was for.
            TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
                tracing::info_span!(
                    "request",
                    method = %req.method(),
                    path = %crate::telemetry::path_for_log(req.uri().path()),
                    org = tracing::field::Empty,
                    edit_id = tracing::field::Empty,
                )
            }),
        )
        .with_state(state)
}

/// `/healthz` and `/readyz`: the only routes of a worker-only node (with 404 for
/// everything else there).
pub fn health_router<S: Clone + Send + Sync + 'static>(readiness: Readiness) -> Router<S> {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .with_state(readiness)
}
/// `/metrics`: Prometheus metrics, no token (docs/API.md).
pub fn metrics_router<S: Clone + Send + Sync + 'static>(
    metrics: Arc<Metrics>,
    db: Db,
) -> Router<S> {
    Router::new()
        .route("/metrics", get(crate::metrics::serve))
        .with_state((metrics, db))
}

/// A path no route matches: `404`, counted under `route="unmatched"` (never the path,
/// so made-up paths add no series to `/metrics`).
async fn unmatched(State(state): State<AppState>, method: Method) -> Response {
    state.metrics.request(RequestLabels {
        method: crate::metrics::method_label(&method),
        route: crate::metrics::UNMATCHED.into(),
        status: StatusCode::NOT_FOUND.as_u16(),
    });
    ApiError::for_status(StatusCode::NOT_FOUND).into_response()
}

/// Gives error responses made outside our handlers (wrong method, body limits) our
/// JSON envelope.
async fn envelope_bare_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if (status.is_client_error() || status.is_server_error()) && !is_json {
        let mut replaced = ApiError::for_status(status).into_response();
        if let Some(allow) = response.headers().get(header::ALLOW) {
            replaced.headers_mut().insert(header::ALLOW, allow.clone());
        }
        return replaced;
    }
    response
}
