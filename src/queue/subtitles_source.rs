//! The subtitles asset of an edit (`{"type": "subtitles", "src": …}`), fetched and
//! read when the edit is created (and by a dry run), so that a file that is not
//! subtitles is refused then, by its line, rather than when the edit runs. It is
//! fetched by an asset's rules (an upload of the organization read from storage, any
//! other URL through the [`Fetcher`]'s guards), with the byte cap of a subtitles file
//! ([`MAX_BYTES`]); the parsed cues go into the stored job, so the workers never fetch
//! it again.

use url::Url;

use super::dry_run::Probing;
use super::limits::ensure_free_disk;
use super::slots::Class;
use super::upload_source::read_upload;
use crate::media::subtitles::{parse, Subtitles, SubtitlesError, MAX_BYTES};
use crate::queue::error::JobError;

impl Probing {
    /// The subtitles at `src` for organization `org`: `Ok(Err)` when the bytes are not
    /// subtitles; `Err` for what fetching an asset fails with (`source_too_large`
    /// past 1 MiB, `upload_not_found`, the source's errors).
    pub async fn fetch_subtitles(
        &self,
        org: &str,
        src: &Url,
    ) -> Result<Result<Subtitles, SubtitlesError>, JobError> {
        ensure_free_disk(&self.tmp_root, self.min_free_disk_bytes)?;
        let dir = tempfile::Builder::new()
            .prefix("subtitles-")
            .tempdir_in(&self.tmp_root)
            .map_err(|e| {
                tracing::error!(error = %e, "a subtitles fetch could not make its temp dir");
                JobError::internal(false)
            })?;
        let dest = dir.path().join("subtitles");
        let prefix = crate::uploads::uploads_prefix(&self.public_url);
        match crate::uploads::upload_id_in(src.as_str(), &prefix) {
            Some(id) => {
                let store = (&self.db, &self.storage, MAX_BYTES);
                read_upload(store, org, &id, &dest).await?;
            }
            None => {
                let _slot = self.network.acquire(org, Class::Light).await;
                self.fetcher
                    .capped(MAX_BYTES)
                    .fetch_to_file(src, &dest)
                    .await?;
            }
        }
        let bytes = tokio::fs::read(&dest).await.map_err(|e| {
            tracing::error!(error = %e, "reading fetched subtitles failed");
            JobError::internal(false)
        })?;
        Ok(parse(&bytes))
    }
}
