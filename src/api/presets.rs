//! Named presets (docs/API.md, "Presets"): `PUT`, `GET` and `DELETE
//! /v1/presets/{name}` and `GET /v1/presets`, each organization's own; and the
//! resolution of an edit's `preset` before the edit is validated.

use std::time::SystemTime;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::auth::Organization;
use super::error::ApiError;
use super::json::JsonBody;
use crate::api::state::AppState;
use crate::db::{unix_ms, PresetRow};
use crate::edits::{preset, ValidationError};
use crate::error_code::Code;

/// `PUT /v1/presets/{name}`: stores (or replaces) a preset, validated as an edit's
/// pipeline is. 201 when new, 200 when replaced.
#[utoipa::path(put, path = "/v1/presets/{name}", operation_id = "putPreset", tag = "presets",
    params(("name" = String, Path, pattern = "^[a-z0-9-]{1,64}$")),
    request_body = crate::api::schemas::PresetIn,
    responses(
        (status = 201, description = "Created", body = crate::api::schemas::Preset),
        (status = 200, description = "Replaced", body = crate::api::schemas::Preset),
        (status = 400, description = "Malformed JSON", body = crate::api::schemas::ErrorDocument),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 413, description = "The body is too large", body = crate::api::schemas::ErrorDocument),
        (status = 415, description = "Not JSON", body = crate::api::schemas::ErrorDocument),
        (status = 422, description = "Not a valid preset: the codes of an edit's commands and options, or `invalid_preset_name`", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn put(
    State(state): State<AppState>,
    org: Organization,
    Path(name): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    check_name(&name)?;
    let body = preset::parse_body(body)?;
    let now = unix_ms(SystemTime::now());
    let created = state.db.put_preset(&org.id, &name, &body, now).await?;
    let row = state.db.get_preset(&org.id, &name).await?;
    let row = row.ok_or_else(|| ApiError::internal(&"a preset just stored is gone"))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({ "data": document(&row) }))).into_response())
}

/// `GET /v1/presets`: every preset of the organization, by name.
#[utoipa::path(get, path = "/v1/presets", operation_id = "listPresets", tag = "presets",
    responses(
        (status = 200, description = "The organization's presets, by name", body = crate::api::schemas::PresetList),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn list(State(state): State<AppState>, org: Organization) -> Result<Response, ApiError> {
    let rows = state.db.list_presets(&org.id).await?;
    let data: Vec<Value> = rows.iter().map(document).collect();
    Ok(Json(json!({ "data": data })).into_response())
}

/// `GET /v1/presets/{name}`.
#[utoipa::path(get, path = "/v1/presets/{name}", operation_id = "getPreset", tag = "presets",
    params(("name" = String, Path)),
    responses(
        (status = 200, description = "The preset", body = crate::api::schemas::Preset),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No preset of that name in this organization", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn read(
    State(state): State<AppState>,
    org: Organization,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    match state.db.get_preset(&org.id, &name).await? {
        Some(row) => Ok(Json(json!({ "data": document(&row) })).into_response()),
        None => Err(not_found(&name)),
    }
}

/// `DELETE /v1/presets/{name}`: 204; edits made from it keep what they resolved to.
#[utoipa::path(delete, path = "/v1/presets/{name}", operation_id = "deletePreset", tag = "presets",
    params(("name" = String, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No preset of that name in this organization", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    org: Organization,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    match state.db.delete_preset(&org.id, &name).await? {
        true => Ok(StatusCode::NO_CONTENT.into_response()),
        false => Err(not_found(&name)),
    }
}

/// An edit's body with its `preset` (if it names one) resolved: the preset's commands,
/// and its options under the edit's own. Another organization's presets are unknown.
pub async fn resolve(state: &AppState, org: &Organization, body: Value) -> Result<Value, ApiError> {
    let Some(named) = body.get("preset") else {
        return Ok(body);
    };
    let name = preset::name_of(named, "/preset")?.to_string();
    let Some(row) = state.db.get_preset(&org.id, &name).await? else {
        return Err(ValidationError::new(
            Code::UnknownPreset,
            "/preset",
            format!("You have no preset named \"{name}\"; GET /v1/presets lists yours."),
        )
        .into());
    };
    Ok(preset::apply(body, &row.body)?)
}

fn check_name(name: &str) -> Result<(), ApiError> {
    if preset::valid_name(name) {
        return Ok(());
    }
    let mut error = ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        Code::InvalidPresetName,
        "A preset name is 1–64 characters of a-z, 0-9 and -.",
    );
    error.parameter = Some("name");
    Err(error)
}

fn not_found(name: &str) -> ApiError {
    ApiError::not_found(format!("You have no preset named \"{name}\"."))
}

fn document(row: &PresetRow) -> Value {
    json!({
        "type": "preset",
        "id": row.name,
        "attributes": {
            "commands": row.body["commands"],
            "options": row.body["options"],
            "createdAt": crate::edits::timestamp(row.created_at),
            "updatedAt": crate::edits::timestamp(row.updated_at),
        },
    })
}
