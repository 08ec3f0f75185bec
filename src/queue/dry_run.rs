//! A dry run's engine side (`POST /v1/edits?dryRun=true`, docs/API.md): fetches and
//! probes every source within the usual limits and predicts what the edit would make
//! (`edit-plan`), or the error it would end with. Nothing is queued or stored; fetched
//! sources go to a temp dir removed when the answer is made. It lives in the engine,
//! not the handler, because it is the fetch stage run without the process stage.
//!
//! A dry run takes what an edit takes: each fetch waits for a slot of the node's
//! network stage (shared with the workers, at most half of them per organization),
//! and none starts below `--min-free-disk-bytes`. An upload is probed where it is
//! stored: on local files, a one-part upload's own file is read in place; otherwise
//! (S3, or an upload sent in several parts) it is copied once into the temp dir, and
//! every asset naming it probes that one copy. A file an option names (`watermark`'s
//! `overlay`) is fetched as the edit would fetch it, so a URL the edit could not use
//! is a predicted failure too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::extra_source::{fetch_option_sources, SourceAccess};
use super::limits::ensure_free_disk;
use super::slots::{Class, FairSlots};
use super::upload_source::{read_upload, upload_parts_of};
use crate::db::Db;
use crate::edits::plan::{plan_asset, PlanError, PlanLimits, SourceInfo};
use crate::edits::EditJob;
use crate::error_code::Code;
use crate::fetch::Fetcher;
use crate::media::{Media, MediaFile};
use crate::queue::error::JobError;
use crate::storage::Storage;

/// What a dry run fetches and probes with: the workers' own tools.
#[derive(Clone)]
pub struct Probing {
    pub db: Db,
    pub storage: Storage,
    /// Where uploads are named from (`{public_url}/v1/uploads/{id}/content`).
    pub public_url: Url,
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

impl Probing {
    /// The plan of `edit` (already validated) for organization `org`: the
    /// `edit-plan` document, or the error the edit would end with.
    pub async fn plan(&self, org: &str, edit: &EditJob) -> Result<Value, JobError> {
        ensure_free_disk(&self.tmp_root, self.min_free_disk_bytes)?;
        let dir = tempfile::Builder::new()
            .prefix("dry-run-")
            .tempdir_in(&self.tmp_root)
            .map_err(|e| {
                tracing::error!(error = %e, "a dry run could not make its temp dir");
                JobError::internal(false)
            })?;
        self.fetch_option_sources(org, edit, dir.path()).await?;
        let prefix = crate::uploads::uploads_prefix(&self.public_url);
        let uploads: UploadFiles = edit
            .assets
            .iter()
            .filter_map(|a| crate::uploads::upload_id_in(a.src.as_str(), &prefix))
            .map(|id| (id, OnceCell::new()))
            .collect();
        let assets =
            (0..edit.assets.len()).map(|i| self.plan_one(org, edit, i, (dir.path(), &uploads)));
        let assets = futures::future::try_join_all(assets).await?;
        Ok(json!({
            "type": "edit-plan",
            "attributes": { "assets": assets },
        }))
    }

    /// Fetches the files the options name (`watermark`'s `overlay`) as the edit would,
    /// in the network stage and by an asset's rules, into `dir`: a URL the edit could
    /// not fetch, or bytes of a format the option does not take, are the error it would
    /// end with, at its option.
    async fn fetch_option_sources(
        &self,
        org: &str,
        edit: &EditJob,
        dir: &Path,
    ) -> Result<(), JobError> {
        let specs = edit
            .commands
            .iter()
            .flat_map(|c| c.options().iter().copied());
        let sources = edit.options.sources(specs);
        if sources.is_empty() {
            return Ok(());
        }
        let _slot = self.network.acquire(org, Class::Light).await;
        let uploads_prefix = crate::uploads::uploads_prefix(&self.public_url);
        // A dry run answers its one request; nothing hands it back.
        let never = CancellationToken::new();
        let access = SourceAccess {
            fetcher: &self.fetcher,
            db: &self.db,
            storage: &self.storage,
            media: &self.media,
            uploads_prefix: &uploads_prefix,
            min_free_disk_bytes: self.min_free_disk_bytes,
            stopping: &never,
        };
        let mut options = edit.options.clone();
        fetch_option_sources(&access, org, &mut options, sources, dir).await
    }

    /// Fetches and probes asset `i`, and predicts its outputs.
    async fn plan_one(
        &self,
        org: &str,
        edit: &EditJob,
        i: usize,
        (dir, uploads): (&Path, &UploadFiles),
    ) -> Result<Value, JobError> {
        let place = format!("Asset {i}");
        let src = &edit.assets[i].src;
        let prefix = crate::uploads::uploads_prefix(&self.public_url);
        let probing = self;
        let dest = match crate::uploads::upload_id_in(src.as_str(), &prefix) {
            Some(id) => uploads[&id]
                .get_or_try_init(|| self.upload_file(org, &id, dir))
                .await
                .cloned(),
            None => {
                let _slot = probing.network.acquire(org, Class::Light).await;
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
        let media = &self.media;
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
            max_outputs: self.max_outputs,
        };
        let outputs =
            plan_asset(&edit.commands, &edit.options, &source, limits).map_err(|e| match e {
                PlanError::Media(Some(c), e) => {
                    JobError::from(e).at(&format!("Asset {i}, command {c} ({})", edit.commands[c]))
                }
                PlanError::Media(None, e) => JobError::from(e).at(&place),
                PlanError::TooManyOutputs(files) => JobError::new(
                    Code::TooManyOutputs,
                    format!(
                        "This edit would produce at least {files} files, more than the limit of {}.",
                        self.max_outputs
                    ),
                    false,
                ),
            })?;
        let hdr = media.hdr_of(&file).await;
        let outputs: Vec<Value> = outputs
            .iter()
            .map(|output| {
                let (width, height) = output.size.unzip();
                json!({
                    "format": output.format.extension(),
                    "width": width,
                    "height": height,
                    "duration": output.duration,
                    "count": output.count,
                })
            })
            .collect();
        let mut asset = json!({
            "src": src.as_str(),
            "format": format.extension(),
            "width": source.width,
            "height": source.height,
            "duration": source.duration,
            "frames": source.frames.or(format.is_image().then_some(1)),
            "outputs": outputs,
        });
        if let Some(hdr) = hdr {
            // Only an HDR source says so: `hlg` or `pq`.
            asset["hdr"] = json!(hdr);
        }
        Ok(asset)
    }

    /// The file upload `id` is probed from: its stored file in place when it is one part
    /// on this machine's disk, else one copy in `dir` (under the same slot and disk guard
    /// as a fetch).
    async fn upload_file(&self, org: &str, id: &str, dir: &Path) -> Result<PathBuf, JobError> {
        let probing = self;
        let max_bytes = probing.fetcher.max_bytes();
        let parts = upload_parts_of((&self.db, max_bytes), org, id).await?;
        if let [part] = parts.as_slice() {
            if let Some(path) = self.storage.local_path(&part.object_key) {
                return Ok(path);
            }
        }
        let _slot = probing.network.acquire(org, Class::Light).await;
        ensure_free_disk(dir, probing.min_free_disk_bytes)?;
        let dest = dir.join(format!("upload-{id}"));
        let store = (&self.db, &self.storage, max_bytes);
        read_upload(store, org, id, &dest).await?;
        Ok(dest)
    }
}
