//! The store stage (network): an asset's outputs go up under keys of this attempt,
//! each described for `attributes.outputs` and given its placeholders (those its
//! encoder kept, else read back while its bytes travel).

use futures::{StreamExt, TryFutureExt, TryStreamExt};
use serde_json::json;

use crate::db::StoredOutput;
use crate::media::image::placeholders::kept::Kept;
use crate::media::image::quality::Chosen;
use crate::media::{MediaFile, MediaFormat, Placeholders};
use crate::queue::error::JobError;
use crate::queue::pipeline::run::EditRun;
use crate::queue::slots::Class;
use crate::storage::OutputKey;

/// Outputs of one asset uploaded at once at most.
const PUTS_AT_ONCE: usize = 8;

impl EditRun<'_> {
    /// The network stage again: asset `i`'s outputs into storage, under keys of this
    /// attempt, each described for `attributes.outputs`. A stopping node finishes its
    /// stores: the work is done.
    pub(super) async fn store(
        &self,
        i: usize,
        files: &[MediaFile],
        kept: &Kept,
        source_hdr: Option<&'static str>,
    ) -> Result<Vec<StoredOutput>, JobError> {
        let step = json!({ "asset": i, "name": "store" });
        self.tracker.report(i, 0.0, &step);
        let _slot = self.slot(&self.ctx.network, Class::Light, false).await?;
        let job = &self.claim.job;
        let puts: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(n, file)| {
                let key = OutputKey {
                    edit_id: &job.id,
                    attempt: job.attempt,
                    asset: i,
                    index: n,
                    format: file.format,
                }
                .to_string();
                self.put(
                    i,
                    key,
                    file,
                    (kept.take(&file.path), kept.take_quality(&file.path)),
                )
                .map_ok(move |output| StoredOutput {
                    source_hdr: source_hdr.map(str::to_string),
                    ..output
                })
            })
            .collect();
        // A fan-out's files go up several at once: each put is mostly waiting (on the
        // disk, or on an object store's round trip).
        let stored: Vec<StoredOutput> = futures::stream::iter(puts)
            .buffered(PUTS_AT_ONCE)
            .try_collect()
            .await?;
        self.outputs.stored(i, files.len());
        self.tracker.finish_unit(i, &step);
        Ok(stored)
    }

    /// Stores `file` (an output of asset `i`) under `key` while reading what it is;
    /// its placeholders are `kept` when its encoder made them from its pixels, with the
    /// quality `quality: auto` chose for it.
    async fn put(
        &self,
        i: usize,
        key: String,
        file: &MediaFile,
        (kept, chosen): (Option<Placeholders>, Option<Chosen>),
    ) -> Result<StoredOutput, JobError> {
        if let (MediaFormat::Hls, Some(dir)) = (file.format, file.path.parent()) {
            // The files the playlist names go first: it never names a missing one.
            let companions = crate::storage::companions_of(&key);
            self.ctx
                .storage
                .put_dir(&companions, dir, &file.path)
                .await?;
        }
        let put = self.ctx.storage.put_file(&key, &file.path);
        // Placeholders not made from the pixels are read back from the file (a small
        // copy decoded: a few ms for a JPEG) while its bytes go up.
        let media = &self.ctx.media;
        let placeholders = async {
            match kept {
                Some(kept) => Ok(Some(kept)),
                None => media.placeholders(file).await,
            }
        };
        let faces = async {
            let wanted = self.options.flag(&crate::commands::FACES) && file.format.is_image();
            match wanted {
                true => media.faces_of(file).await.map(Some),
                false => Ok(None),
            }
        };
        let (put, described, placeholders, faces) =
            tokio::join!(put, media.describe(file), placeholders, faces);
        put?;
        let described = described?;
        // A picture that we wrote and cannot read back is a fault of ours, but not one
        // worth the edit: its outputs are stored without placeholders.
        let placeholders = placeholders.unwrap_or_else(|e| {
            tracing::warn!(error = %e, format = file.format.name(), "no placeholders for an output");
            None
        });
        // Faces that could not be looked for (the detector's memory past the step's
        // limit) are left out rather than failing done work.
        let faces = faces.unwrap_or_else(|e: crate::media::MediaError| {
            tracing::warn!(error = %e, "no faces for an output");
            None
        });
        self.ctx.metrics.stored(described.bytes);
        Ok(StoredOutput {
            key,
            asset: i,
            format: file.format.extension().to_string(),
            bytes: described.bytes,
            width: described.width,
            height: described.height,
            duration: described.duration,
            frames: described.frames,
            blurhash: placeholders.as_ref().map(|p| p.blurhash.clone()),
            thumbhash: placeholders.as_ref().map(|p| p.thumbhash.clone()),
            dominant_color: placeholders.map(|p| p.dominant_color),
            quality: chosen.map(|c| c.quality),
            score: chosen.map(|c| c.score),
            faces,
            source_hdr: None,
        })
    }
}
