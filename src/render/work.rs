//! The work of one render: the source (an upload, or a URL fetched once per
//! organization and cached across every transform of it), the commands run on it in a
//! CPU slot, the result stored in the cache.
//!
//! A URL's fetch waits for a slot of the node's network stage and the commands for a
//! slot of its CPU stage: the very [`FairSlots`](crate::queue::slots::FairSlots) the
//! edit workers take turns in, so a flood of renders of one organization waits its
//! turn behind other organizations' edits and renders, and theirs behind it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use url::Url;

use super::cache::Entry;
use super::negotiate::Wanted;
use crate::commands::Options;
use crate::media::image::quality::{encode_with, Quality};
use crate::media::memory::MemoryBudget;
use crate::media::{ImageFormat, MediaFile, MediaFormat};
use crate::queue::executor::{execute, StepAt, StepHost};
use crate::queue::limits::ensure_free_disk;
use crate::queue::slots::Class;
use crate::queue::upload_source::{read_upload, upload_parts_of};
use crate::queue::JobError;
use crate::render::job::{internal, source_key, Failure, Job, Rendered, Source};
use crate::render::renderer::Renderer;
use crate::storage::StorageError;

impl Renderer {
    /// Renders `job` and caches the result (see the module docs).
    pub(super) async fn run(self: Arc<Self>, job: Job) -> Result<Rendered, Failure> {
        let dir = tempfile::Builder::new()
            .prefix("render-")
            .tempdir_in(&self.tmp_root)
            .map_err(|e| internal(&e))?;
        let source = self.source_file(&job, dir.path()).await?;
        let takes = job.commands[0].inputs();
        let format = self
            .media
            .detect_for(&source, takes)
            .await
            .map_err(|e| Failure::from(JobError::from(e)))?;
        let file = MediaFile {
            path: source,
            format,
        };
        let mut options = job.options.clone();
        if job.wanted == Some(Wanted::Legacy) && format == MediaFormat::Jpeg {
            // No transparency to keep: JPEG at once rather than through PNG.
            options.set("format", "jpeg".into());
        }
        let slot = self.cpu.acquire(&job.org, Class::Light).await;
        let steps = RenderSteps {
            renderer: &self,
            options: &options,
        };
        let outputs = execute(&steps, &job.commands, file, dir.path())
            .await
            .map_err(Failure::from)?;
        let file = outputs
            .into_iter()
            .next()
            .ok_or_else(|| internal(&"a command made no output"))?;
        let (bytes, format) = match job.wanted {
            Some(Wanted::Legacy) => {
                let quality = crate::commands::quality_of(&options);
                legacy(&file, quality, self.media.memory().clone()).await?
            }
            _ => (
                tokio::fs::read(&file.path)
                    .await
                    .map_err(|e| internal(&e))?,
                file.format,
            ),
        };
        drop(slot);
        let bytes = Bytes::from(bytes);
        // Stored under the key the request looks up, whatever the format turned out to
        // be (the index keeps it), so a lookup needs no second guess.
        let entry = Entry {
            object_key: job.result_key.clone(),
            bytes: bytes.len() as u64,
            format: format.extension().to_string(),
            etag: format!("\"{}\"", &hex::encode(Sha256::digest(&bytes))[..32]),
        };
        let stored = dir.path().join("result");
        tokio::fs::write(&stored, &bytes)
            .await
            .map_err(|e| internal(&e))?;
        self.cache
            .storage()
            .put_file(&entry.object_key, &stored)
            .await
            .map_err(|e| internal(&e))?;
        self.metrics.stored(entry.bytes);
        let upload = match &job.source {
            Source::Upload(id) => Some(id.as_str()),
            Source::Url(_) => None,
        };
        self.cache
            .insert(entry.clone(), upload)
            .await
            .map_err(|e| internal(&e))?;
        if let Some(id) = upload {
            self.upload_still_there(&job.org, id, &entry).await?;
        }
        Ok(Rendered {
            entry,
            bytes: Some(bytes),
        })
    }

    /// The source of `job` as a file: an upload where it is stored (or a copy in
    /// `dir`), or the URL's cached copy, fetched first if need be.
    async fn source_file(&self, job: &Job, dir: &Path) -> Result<PathBuf, Failure> {
        match &job.source {
            Source::Upload(id) => self.upload_file(&job.org, id, dir).await,
            Source::Url(url) => {
                let key = source_key(&job.org, url);
                for _ in 0..2 {
                    let entry = match self.cache.lookup(&key).await.map_err(|e| internal(&e))? {
                        Some(entry) => entry,
                        None => self.fetch_source(&job.org, url, &key).await?,
                    };
                    match self
                        .read_cached(&entry.object_key, &dir.join("source"))
                        .await
                    {
                        Ok(path) => return Ok(path),
                        // Evicted since: fetched again.
                        Err(StorageError::NotFound) => self.cache.forget(&key).await,
                        Err(e) => return Err(internal(&e)),
                    }
                }
                Err(internal(&"a cached source vanished twice"))
            }
        }
    }

    /// Checks that upload `id`, which `entry` was rendered from, was not deleted while
    /// it rendered: a delete finds the entries of the upload recorded by then, so one
    /// recorded later is this render's to delete (`upload_not_found` then).
    async fn upload_still_there(&self, org: &str, id: &str, entry: &Entry) -> Result<(), Failure> {
        let max_bytes = self.fetcher.max_bytes();
        let Err(gone) = upload_parts_of((&self.db, max_bytes), org, id).await else {
            return Ok(());
        };
        if let Err(e) = self.cache.delete(&entry.object_key).await {
            tracing::warn!(error = %e, "deleting the render of a deleted upload failed");
        }
        Err(gone.into())
    }

    /// Upload `id` of `org`: its stored file in place when it is one part on this
    /// machine's disk, else one copy in `dir`.
    async fn upload_file(&self, org: &str, id: &str, dir: &Path) -> Result<PathBuf, Failure> {
        let storage = self.cache.storage();
        let max_bytes = self.fetcher.max_bytes();
        let parts = upload_parts_of((&self.db, max_bytes), org, id).await?;
        if let [part] = parts.as_slice() {
            if let Some(path) = storage.local_path(&part.object_key) {
                return Ok(path);
            }
        }
        let _slot = self.network.acquire(org, Class::Light).await;
        ensure_free_disk(dir, self.min_free_disk_bytes)?;
        let dest = dir.join("upload");
        read_upload((&self.db, storage, max_bytes), org, id, &dest).await?;
        Ok(dest)
    }

    /// Object `key` as a file: in place on a local disk, else copied to `dest`.
    async fn read_cached(&self, key: &str, dest: &Path) -> Result<PathBuf, StorageError> {
        let storage = self.cache.storage();
        if let Some(path) = storage.local_path(key) {
            return match tokio::fs::metadata(&path).await {
                Ok(_) => Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StorageError::NotFound),
                Err(e) => Err(e.into()),
            };
        }
        let (bytes, _) = storage
            .concatenate_into(vec![key.to_string()], dest)
            .await?;
        let _ = bytes;
        Ok(dest.to_path_buf())
    }

    /// Fetches `url` under the rules of an asset's source (the SSRF guard, the byte
    /// cap, the time and stall limits) and caches it under `key`, which is `org`'s own;
    /// requests of `org` for the same URL arriving meanwhile wait for this one fetch
    /// (another organization's fetch theirs).
    async fn fetch_source(&self, org: &str, url: &Url, key: &str) -> Result<Entry, Failure> {
        let (fetcher, network) = (self.fetcher.clone(), self.network.clone());
        let (tmp_root, min_free) = (self.tmp_root.clone(), self.min_free_disk_bytes);
        let (org, url, key_owned) = (org.to_string(), url.clone(), key.to_string());
        let storage = self.cache.storage().clone();
        let metrics = self.metrics.clone();
        let fetch = async move {
            let _slot = network.acquire(&org, Class::Light).await;
            ensure_free_disk(&tmp_root, min_free)?;
            let dir = tempfile::Builder::new()
                .prefix("render-source-")
                .tempdir_in(&tmp_root)
                .map_err(|e| internal(&e))?;
            let dest = dir.path().join("source");
            let bytes = fetcher
                .fetch_to_file(&url, &dest)
                .await
                .map_err(|e| Failure::from(JobError::from(e)))?;
            metrics.fetched(bytes);
            storage
                .put_file(&key_owned, &dest)
                .await
                .map_err(|e| internal(&e))?;
            Ok::<_, Failure>(Entry {
                object_key: key_owned,
                bytes,
                format: "bin".into(),
                etag: String::new(),
            })
        };
        let (fetched, _) = self
            .sources
            .run(key, fetch, || Err(Failure::internal()))
            .await;
        let entry = fetched?;
        self.cache
            .insert(entry.clone(), None)
            .await
            .map_err(|e| internal(&e))?;
        Ok(entry)
    }
}

/// A render's steps: its one file through each, in the CPU slot the render holds.
struct RenderSteps<'a> {
    renderer: &'a Renderer,
    options: &'a Options,
}

impl StepHost for RenderSteps<'_> {
    async fn run_step(
        &self,
        at: StepAt,
        files: &[MediaFile],
        dir: &Path,
    ) -> Result<Vec<MediaFile>, JobError> {
        let (media, metrics) = (&self.renderer.media, &self.renderer.metrics);
        let command = at.step.first();
        let mut outputs = Vec::new();
        for file in files {
            let started = std::time::Instant::now();
            let run = at.step.run(media, file, self.options, dir, &|_| {}).await;
            metrics.command_ran(command, started.elapsed());
            let place = format!("Command {} ({command})", at.c);
            outputs.extend(run.map_err(|e| JobError::from(e).at(&place))?);
        }
        // A render answers one picture: the first file a step makes goes on.
        outputs.truncate(1);
        Ok(outputs)
    }
}

/// A legacy browser's format: the PNG the render made when it has transparency, else
/// the same picture as JPEG at the transform's `quality`.
async fn legacy(
    file: &MediaFile,
    quality: Quality,
    memory: Arc<MemoryBudget>,
) -> Result<(Vec<u8>, MediaFormat), Failure> {
    let png = tokio::fs::read(&file.path)
        .await
        .map_err(|e| internal(&e))?;
    if file.format != MediaFormat::Png {
        return Ok((png, file.format));
    }
    tokio::task::spawn_blocking(move || {
        let picture = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
            .map_err(|e| internal(&e))?;
        let transparent = match &picture {
            image::DynamicImage::ImageRgba8(rgba) => rgba.pixels().any(|p| p.0[3] < 255),
            other => other.color().has_alpha() && other.to_rgba8().pixels().any(|p| p.0[3] < 255),
        };
        if transparent {
            return Ok((png, MediaFormat::Png));
        }
        let (jpeg, _) = encode_with(picture, ImageFormat::Jpeg, quality, &memory)
            .map_err(|e| Failure::from(JobError::from(e)))?;
        Ok((jpeg, ImageFormat::Jpeg.media_format()))
    })
    .await
    .map_err(|e| internal(&e))?
}
