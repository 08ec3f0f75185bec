//! `POST /v1/edits?dryRun=true` (docs/API.md): validates the request, fetches and
//! probes every source within the usual limits, and answers what the edit would make
//! (`edit-plan`) or the error it would end with (`422` with the edit's code). Nothing
//! is queued or stored; fetched sources go to a temp dir removed when the answer is made.
//!
//! A dry run takes what an edit takes: each fetch waits for a slot of the node's
//! network stage (shared with the workers, at most half of them per organization),
//! and none starts below `--min-free-disk-bytes` (`507 insufficient_storage`). An
//! upload is probed where it is stored: on local files, a one-part upload's own file
//! is read in place; otherwise (S3, or an upload sent in several parts) it is copied
//! once into the temp dir, and every asset naming it probes that one copy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
use crate::queue::limits::ensure_free_disk;
use crate::queue::slots::{Class, FairSlots};
use crate::queue::upload_source::{read_upload, upload_parts_of};
use crate::queue::JobError;
use tokio::sync::OnceCell;

/// What a dry run fetches and probes with: the workers' own tools.
#[derive(Clone)]
pub struct Probing {
    pub fetcher: Fetcher,
    pub media: Media,
    /// Where sources are fetched to.
    pub tmp_root: PathBuf,
    pub max_outputs: u64,
    /// The network stage's slots, the workers' own.
    pub network: Arc<FairSlots>,
    /// `--min-free-disk-bytes`.
    pub min_free_disk_bytes: u64,
}

/// Each upload the edit names, and where it is read once found: every asset naming
/// it shares the one answer.
type UploadFiles = HashMap<String, OnceCell<PathBuf>>;

/// Answers the plan of `edit`, already validated.
pub async fn plan(
    state: &AppState,
    org: &Organization,
    edit: NewEdit,
) -> Result<Response, ApiError> {
    let probing = &state.probing;
    ensure_free_disk(&probing.tmp_root, probing.min_free_disk_bytes).map_err(would_fail)?;
    let dir = tempfile::Builder::new()
        .prefix("dry-run-")
        .tempdir_in(&probing.tmp_root)
        .map_err(|e| ApiError::internal(&e))?;
    let prefix = crate::uploads::uploads_prefix(&state.public_url);
    let uploads: UploadFiles = edit
        .assets
        .iter()
        .filter_map(|a| crate::uploads::upload_id_in(a.src.as_str(), &prefix))
        .map(|id| (id, OnceCell::new()))
        .collect();
    let assets =
        (0..edit.assets.len()).map(|i| plan_one(state, org, &edit, i, (dir.path(), &uploads)));
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
    (dir, uploads): (&Path, &UploadFiles),
) -> Result<Value, JobError> {
    let place = format!("Asset {i}");
    let src = &edit.assets[i].src;
    let prefix = crate::uploads::uploads_prefix(&state.public_url);
    let probing = &state.probing;
    let dest = match crate::uploads::upload_id_in(src.as_str(), &prefix) {
        Some(id) => uploads[&id]
            .get_or_try_init(|| upload_file(state, org, &id, dir))
            .await
            .cloned(),
        None => {
            let _slot = probing.network.acquire(&org.id, Class::Light).await;
            ensure_free_disk(dir, probing.min_free_disk_bytes)?;
            let dest = dir.join(format!("asset-{i}"));
            probing
                .fetcher
                .fetch_to_file(src, &dest)
                .await
                .map(|_| dest)
                .map_err(JobError::from)
        }
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

/// The file upload `id` is probed from: its stored file in place when it is one part
/// on this machine's disk, else one copy in `dir` (under the same slot and disk guard
/// as a fetch).
async fn upload_file(
    state: &AppState,
    org: &Organization,
    id: &str,
    dir: &Path,
) -> Result<PathBuf, JobError> {
    let probing = &state.probing;
    let max_bytes = probing.fetcher.max_bytes();
    let parts = upload_parts_of((&state.db, max_bytes), &org.id, id).await?;
    if let [part] = parts.as_slice() {
        if let Some(path) = state.storage.local_path(&part.object_key) {
            return Ok(path);
        }
    }
    let _slot = probing.network.acquire(&org.id, Class::Light).await;
    ensure_free_disk(dir, probing.min_free_disk_bytes)?;
    let dest = dir.join(format!("upload-{id}"));
    let store = (&state.db, &state.storage, max_bytes);
    read_upload(store, &org.id, id, &dest).await?;
    Ok(dest)
}

/// The error the edit would end with, as a `422` carrying its code; short of disk
/// (the one `storage_error` a dry run meets), `507 insufficient_storage`, as uploads.
fn would_fail(error: JobError) -> ApiError {
    if error.code == Code::StorageError {
        return ApiError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            Code::InsufficientStorage,
            "The server is short of disk space to fetch sources now; try again later.",
        );
    }
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error.code, error.detail)
}
