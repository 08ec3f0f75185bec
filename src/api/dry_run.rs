//! `POST /v1/edits?dryRun=true` (decisions.md §8): validates the request, fetches and
//! probes every source within the usual limits, and answers what the edit would make
//! (`edit-plan`) or the error it would end with (`422` with the edit's code). Nothing
//! is queued or stored; the sources go to a temp dir removed when the answer is made.

use std::path::{Path, PathBuf};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::auth::Organization;
use super::error::ApiError;
use super::AppState;
use crate::edits::plan::{plan_asset, PlanError, PlanLimits, SourceInfo};
use crate::edits::NewEdit;
use crate::error_code::Code;
use crate::fetch::Fetcher;
use crate::media::{Media, MediaFile};
use crate::queue::upload_source::read_upload;
use crate::queue::JobError;

/// What a dry run fetches and probes with: the workers' own tools.
#[derive(Clone)]
pub struct Probing {
    pub fetcher: Fetcher,
    pub media: Media,
    /// Where sources are fetched to.
    pub tmp_root: PathBuf,
    pub max_outputs: u64,
}

/// Answers the plan of `edit`, already validated.
pub async fn plan(
    state: &AppState,
    org: &Organization,
    edit: NewEdit,
) -> Result<Response, ApiError> {
    let probing = &state.probing;
    let dir = tempfile::Builder::new()
        .prefix("dry-run-")
        .tempdir_in(&probing.tmp_root)
        .map_err(|e| ApiError::internal(&e))?;
    let assets = (0..edit.assets.len()).map(|i| plan_one(state, org, &edit, i, dir.path()));
    let assets = futures::future::try_join_all(assets)
        .await
        .map_err(would_fail)?;
    Ok(Json(json!({
        "type": "edit-plan",
        "attributes": { "assets": assets },
    }))
    .into_response())
}

/// Fetches and probes asset `i`, and predicts its outputs.
async fn plan_one(
    state: &AppState,
    org: &Organization,
    edit: &NewEdit,
    i: usize,
    dir: &Path,
) -> Result<Value, JobError> {
    let place = format!("Asset {i}");
    let dest = dir.join(format!("asset-{i}"));
    let src = &edit.assets[i].src;
    let prefix = crate::uploads::uploads_prefix(&state.public_url);
    let fetcher = &state.probing.fetcher;
    match crate::uploads::upload_id_in(src.as_str(), &prefix) {
        Some(id) => {
            let store = (&state.db, &state.storage, fetcher.max_bytes());
            read_upload(store, &org.id, &id, &dest).await.map(|_| ())
        }
        None => fetcher
            .fetch_to_file(src, &dest)
            .await
            .map(|_| ())
            .map_err(JobError::from),
    }
    .map_err(|e| e.at(&place))?;
    let media = &state.probing.media;
    let format = media
        .detect_for(&dest, edit.commands[0].inputs())
        .await
        .map_err(|e| JobError::from(e).at(&place))?;
    let file = MediaFile { path: dest, format };
    let described = media
        .describe(&file)
        .await
        .map_err(|e| JobError::from(e).at(&place))?;
    let source = SourceInfo {
        format,
        width: described.width,
        height: described.height,
        duration: described.duration,
        frames: described.frames,
    };
    let limits = PlanLimits {
        max_image_pixels: media.config().max_image_pixels,
        max_outputs: state.probing.max_outputs,
    };
    let output =
        plan_asset(&edit.commands, &edit.options, &source, limits).map_err(|e| match e {
            PlanError::Media(Some(c), e) => {
                JobError::from(e).at(&format!("Asset {i}, command {c} ({})", edit.commands[c]))
            }
            PlanError::Media(None, e) => JobError::from(e).at(&place),
            PlanError::TooManyOutputs(files) => JobError::new(
                Code::TooManyOutputs,
                format!(
                    "This edit would produce at least {files} files, more than the limit of {}.",
                    state.probing.max_outputs
                ),
                false,
            ),
        })?;
    let (width, height) = output.size.unzip();
    Ok(json!({
        "src": src.as_str(),
        "format": format.extension(),
        "width": source.width,
        "height": source.height,
        "duration": source.duration,
        "frames": source.frames.or(format.is_image().then_some(1)),
        "outputs": [{
            "format": output.format.extension(),
            "width": width,
            "height": height,
            "duration": output.duration,
            "count": output.count,
        }],
    }))
}

/// The error the edit would end with, as a `422` carrying its code.
fn would_fail(error: JobError) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error.code, error.detail)
}
