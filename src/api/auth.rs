//! Bearer-token authentication: resolves the token to the organization that owns it,
//! then charges the request to that organization's rate limit.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use super::error::ApiError;
use super::AppState;

/// The organization the request's bearer token belongs to.
pub struct Organization {
    pub id: String,
}

impl FromRequestParts<AppState> for Organization {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
            ApiError::unauthorized("The `Authorization: Bearer <token>` header is missing.")
        })?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                ApiError::unauthorized("The `Authorization` header must be `Bearer <token>`.")
            })?;
        let Some(id) = state.db.org_for_token(token).await? else {
            return Err(ApiError::unauthorized("The bearer token is not valid."));
        };
        if let Err(wait) = state.rate_limiter.check(&id, std::time::Instant::now()) {
            return Err(ApiError::rate_limited(
                wait.as_secs_f64().ceil().max(1.0) as u64
            ));
        }
        Ok(Organization { id })
    }
}
