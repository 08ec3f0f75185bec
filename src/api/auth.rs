//! Bearer-token authentication: resolves the token to the organization that owns it,
//! then charges the request to that organization's read or write budget.
//!
//! Under a flood of made-up tokens, two things keep the database out of it: lookups
//! are cached (hits and misses, for `--auth-cache-ttl-secs`), and a client address
//! that keeps presenting unknown tokens is refused with `429` before any lookup once
//! it has used up `--auth-failures-per-minute`. The failure is charged before the
//! lookup and refunded when the token turns out valid: charged after, every one of a
//! burst of concurrent requests would find the budget untouched and reach the
//! database.
//!
//! Once the organization is known, the request takes one of its places in flight
//! (`--max-requests-per-org`, see [`super::in_flight`]) and is charged to its read or
//! write budget.

use crate::ids::OrgId;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;

use super::error::ApiError;
use super::in_flight::InFlightSlot;
use super::rate_limit::QuotaSlot;
use crate::api::state::AppState;
use crate::db::hash_token;

/// The organization the request's bearer token belongs to.
pub struct Organization {
    pub id: OrgId,
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
        let client = client_key(parts);
        let Some(id) = lookup(state, &client, token).await? else {
            return Err(ApiError::unauthorized("The bearer token is not valid."));
        };
        // The request span (api::router) names its organization from here on.
        tracing::Span::current().record("org", id.as_str());
        super::in_flight::admit(
            &state.in_flight,
            parts.extensions.get::<InFlightSlot>(),
            &id,
        )?;
        let budget = state.rate_limits.for_method(&parts.method);
        let charged = budget.check(&id, Instant::now());
        let quota = match &charged {
            Ok(quota) => *quota,
            Err(limited) => Some(limited.quota),
        };
        if let (Some(quota), Some(slot)) = (quota, parts.extensions.get::<QuotaSlot>()) {
            slot.set(quota);
        }
        if let Err(limited) = charged {
            return Err(ApiError::rate_limited(limited.retry_after_secs()));
        }
        Ok(Organization { id: id.into() })
    }
}

/// The token's organization, from the cache or the database. A valid token found in
/// the cache is served even to a client over its failure limit, so a well-behaved
/// client sharing an address with an attacker keeps working while its token is cached.
/// Any other token is charged to the client's failure budget before it is looked up
/// (so no more lookups than the budget can be in flight from one address), and the
/// charge is refunded when the token is found.
async fn lookup(state: &AppState, client: &str, token: &str) -> Result<Option<String>, ApiError> {
    let hash = hash_token(token);
    let now = Instant::now();
    let cached = state.token_cache.get(&hash, now);
    if let Some(Some(org)) = cached {
        return Ok(Some(org));
    }
    if let Err(limited) = state.auth_failures.check(client, now) {
        return Err(ApiError::too_many_auth_failures(limited.retry_after_secs()));
    }
    if let Some(None) = cached {
        return Ok(None);
    }
    let org = match state.db.org_for_token_hash(&hash).await {
        Ok(org) => org,
        Err(e) => {
            // Our fault, not the client's: the charge goes back.
            state.auth_failures.refund(client, Instant::now());
            return Err(e.into());
        }
    };
    state.metrics.token_lookup(org.is_some());
    state.token_cache.insert(&hash, org.clone(), now);
    if org.is_some() {
        state.auth_failures.refund(client, Instant::now());
    }
    Ok(org)
}

/// The key failures are counted under: the peer's IP address, and for IPv6 its /64,
/// since one host usually holds a whole /64 and could otherwise rotate through it.
/// Without connection info (a router driven without a listener) every request shares
/// one key.
fn client_key(parts: &Parts) -> String {
    let Some(ConnectInfo(addr)) = parts.extensions.get::<ConnectInfo<SocketAddr>>() else {
        return "unknown".to_string();
    };
    match addr.ip().to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}
