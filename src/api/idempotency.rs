//! `Idempotency-Key` on `POST /v1/edits` (docs/API.md): a client whose request
//! timed out on the network retries it with the same key and gets the first answer
//! (`Idempotent-Replayed: true`), never a second edit. Keys live 24 hours per
//! organization; the same key with a different body is `422 idempotency_key_reused`,
//! and while the first request is still being handled `409 idempotency_key_in_use`.
//! The database's primary key settles races, so this holds across nodes.

use std::future::Future;
use std::time::SystemTime;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::auth::Organization;
use super::error::ApiError;
use crate::api::state::AppState;
use crate::db::{unix_ms, KeyClaim};
use crate::error_code::Code;

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The header on a replayed answer.
const REPLAYED: &str = "idempotent-replayed";
/// The longest key.
const MAX_KEY_LEN: usize = 255;
/// The most of an answer kept (an Edit document or an error is far smaller).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The request's key, if it sent one: 1–255 printable ASCII characters.
pub fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if bytes.is_empty()
        || bytes.len() > MAX_KEY_LEN
        || !bytes.iter().all(|b| (0x20..=0x7e).contains(b))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            Code::InvalidIdempotencyKey,
            "`Idempotency-Key` must be 1 to 255 printable ASCII characters.",
        ));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// Runs `create` (given the edit id to use) once per key: the first request with
/// `key` runs it and its answer is kept; later ones with the same body get that
/// answer again. An answer of ours that is a 5xx is not kept, so a retry runs afresh.
pub async fn once<F, Fut>(
    state: &AppState,
    org: &Organization,
    key: &str,
    body: &Value,
    create: F,
) -> Result<Response, ApiError>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<Response, ApiError>>,
{
    let hash = canonical_hash(body);
    let now = unix_ms(SystemTime::now());
    let fresh_id = uuid::Uuid::new_v4().to_string();
    let edit_id = match state
        .db
        .claim_idempotency_key(&org.id, key, &hash, &fresh_id, now)
        .await?
    {
        KeyClaim::Create { edit_id } => edit_id,
        KeyClaim::Replay {
            status,
            response,
            edit_id,
        } => return Ok(replay(status, response, &edit_id)),
        KeyClaim::Reused => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                Code::IdempotencyKeyReused,
                "This `Idempotency-Key` was used with a different request body; use a new key for a new request.",
            ))
        }
        KeyClaim::InUse => {
            return Err(ApiError::conflict(
                Code::IdempotencyKeyInUse,
                "The first request with this `Idempotency-Key` is still being handled; retry in a moment.",
            ))
        }
    };
    let response = create(edit_id)
        .await
        .unwrap_or_else(IntoResponse::into_response);
    let status = response.status();
    if status.is_server_error() {
        if let Err(e) = state.db.forget_idempotency_key(&org.id, key).await {
            tracing::warn!(error = %e, "forgetting an idempotency key failed; it is taken over after a minute");
        }
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_ANSWER_BYTES)
        .await
        .map_err(|e| ApiError::internal(&e))?;
    let text = String::from_utf8_lossy(&bytes);
    state
        .db
        .answer_idempotency_key(&org.id, key, status.as_u16(), &text)
        .await?;
    Ok(Response::from_parts(parts, Body::from(bytes)))
}

/// The first request's answer again.
fn replay(status: u16, body: String, edit_id: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    if status == StatusCode::CREATED {
        if let Ok(location) = HeaderValue::from_str(&format!("/v1/edits/{edit_id}")) {
            headers.insert(header::LOCATION, location);
        }
    }
    response
}

/// SHA-256 of the body with every object's keys sorted: the same request sent with
/// its fields in another order or other spacing is the same request.
fn canonical_hash(body: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let sorted_map: Map<String, Value> = keys
                    .into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect();
                Value::Object(sorted_map)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    hex::encode(Sha256::digest(sorted(body).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_order_does_not_change_the_hash_but_a_value_does() {
        let a = json!({"assets": [{"type": "image", "src": "https://x/a.png"}], "commands": ["image-to-webp"]});
        let b: Value = serde_json::from_str(
            r#"{ "commands": ["image-to-webp"], "assets": [{"src": "https://x/a.png", "type": "image"}] }"#,
        )
        .unwrap();
        assert_eq!(canonical_hash(&a), canonical_hash(&b));
        let c = json!({"assets": [{"type": "image", "src": "https://x/b.png"}], "commands": ["image-to-webp"]});
        assert_ne!(canonical_hash(&a), canonical_hash(&c));
    }

    #[test]
    fn keys_are_one_to_255_printable_characters() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(HEADER, HeaderValue::from_str(value).unwrap());
            key_of(&headers)
        };
        assert_eq!(
            with("order-42 retry").unwrap().as_deref(),
            Some("order-42 retry")
        );
        assert_eq!(key_of(&HeaderMap::new()).unwrap(), None);
        assert!(with("").is_err());
        assert!(with(&"k".repeat(256)).is_err());
        assert!(with(&"k".repeat(255)).is_ok());
        assert!(with("tab\there").is_err());
    }
}
