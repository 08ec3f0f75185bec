//! A source an edit names besides its assets — `watermark`'s `overlay` — fetched by
//! the rules of an asset's source: an upload of this service is read from storage
//! (only the organization's own, `--max-source-bytes` still holding), anything else is
//! downloaded by the [`Fetcher`] (http(s) only, the SSRF guard, the byte cap, the time
//! and stall limits), then sniffed from its bytes and held to the formats the option
//! takes. The pixel limit is checked when the picture is decoded
//! ([`Media::read_overlay`]), before any pixel is allocated.
//!
//! The caller runs it in the network stage (holding a network slot, as an asset's
//! fetch does), once per edit: every asset shares the one overlay.

use std::path::Path;

use tokio_util::sync::CancellationToken;
use url::Url;

use super::context::WorkerContext;
use super::limits::ensure_free_disk;
use super::upload_source::read_upload;
use crate::commands::{Options, SourceFile};
use crate::db::Db;
use crate::fetch::{Fetch, FetchError, Fetcher};
use crate::media::{Media, MediaFile, MediaFormat};
use crate::queue::error::JobError;
use crate::storage::Storage;
use crate::uploads::upload_id_in;

/// What fetching a source needs: the pieces of [`WorkerContext`] it uses.
pub struct SourceAccess<'a> {
    pub fetcher: &'a Fetcher,
    pub db: &'a Db,
    pub storage: &'a Storage,
    pub media: &'a Media,
    /// `<public url>/v1/uploads/`: a `src` under it is an upload.
    pub uploads_prefix: &'a str,
    /// No download starts with less free disk than this (`--min-free-disk-bytes`).
    pub min_free_disk_bytes: u64,
    /// Cancelled when the node starts stopping: a download in progress is given up and
    /// the edit handed back.
    pub stopping: &'a CancellationToken,
}

impl WorkerContext {
    /// This node's [`SourceAccess`].
    pub fn source_access(&self) -> SourceAccess<'_> {
        SourceAccess {
            fetcher: &self.fetcher,
            db: &self.db,
            storage: &self.storage,
            media: &self.media,
            uploads_prefix: &self.uploads_prefix,
            min_free_disk_bytes: self.min_free_disk_bytes,
            stopping: &self.stopping,
        }
    }
}

/// Fetches `src` (a URL, or an upload's `src`) of organization `org` into `dest` and
/// sniffs it; with the bytes' SHA-256, which the result cache keys it by. The errors are an asset's: `invalid_source_url`,
/// `source_address_forbidden`, `source_too_large`, `source_http_error`,
/// `source_timeout`, `source_unreachable`, `source_too_many_redirects`,
/// `upload_not_found` (another organization's upload reads as gone), and
/// `unsupported_input_format` for bytes that are none of `takes`; a retryable
/// `storage_error` when the disk is nearly full. A stopping node hands the edit back.
pub async fn fetch_extra_source(
    access: &SourceAccess<'_>,
    org: &str,
    src: &Url,
    dest: &Path,
    takes: &[MediaFormat],
) -> Result<SourceFile, JobError> {
    if let Some(dir) = dest.parent() {
        ensure_free_disk(dir, access.min_free_disk_bytes)?;
    }
    let fetched = match upload_id_in(src.as_str(), access.uploads_prefix) {
        Some(id) => {
            let store = (access.db, access.storage, access.fetcher.max_bytes());
            read_upload(store, org, &id, dest).await?
        }
        None => tokio::select! {
            fetched = access.fetcher.fetch_to_file_if(src, dest, None) => fetched?,
            _ = access.stopping.cancelled() => return Err(JobError::handed_back()),
        },
    };
    let Fetch::Body(fetched) = fetched else {
        // Only a conditional request can be answered so, and this one was not.
        return Err(FetchError::HttpStatus(304).into());
    };
    let format = access.media.detect_for(dest, takes).await?;
    if !takes.contains(&format) {
        return Err(crate::media::MediaError::unsupported(format, takes).into());
    }
    let file = MediaFile {
        path: dest.to_path_buf(),
        format,
    };
    let sha256 = fetched.validators.sha256;
    Ok(SourceFile { file, sha256 })
}

/// Fetches every file of `sources` (what [`Options::sources`] found) into
/// `tmp/sources`, and records each in `options` for the commands to find (and for the
/// result cache's key, by its bytes). A failure is placed at its option
/// (`Option \`overlay\`: …`).
pub async fn fetch_option_sources(
    access: &SourceAccess<'_>,
    org: &str,
    options: &mut Options,
    sources: Vec<(&'static str, String, &'static [MediaFormat])>,
    tmp: &Path,
) -> Result<(), JobError> {
    let dir = tmp.join("sources");
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|_| JobError::internal(true))?;
    for (name, src, takes) in sources {
        let place = format!("Option `{name}`");
        // Checked when the edit was created; a stored edit that no longer parses is ours.
        let url = Url::parse(&src).map_err(|_| JobError::internal(false))?;
        let fetched = fetch_extra_source(access, org, &url, &dir.join(name), takes)
            .await
            .map_err(|e| e.at(&place))?;
        options.set_fetched(name, fetched);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
