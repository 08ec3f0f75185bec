//! One chunked encode: its pieces run, joined, and their frames counted.

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::file::MediaFile;
use crate::media::lending::run_pieces;
use crate::media::lending::ChunkFarm;
use crate::media::video::chunked::pieces::{run_piece, ChunkProgress, Piece, ScratchDir};
use crate::media::video::chunked::plan::Plan;
use crate::media::video::chunked::recipe::SplitRecipe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One chunked encode.
pub(super) struct Chunked<'a> {
    pub(super) media: &'a Media,
    pub(super) input: &'a MediaFile,
    pub(super) recipe: &'a SplitRecipe,
    pub(super) plan: &'a Plan,
    pub(super) format: MediaFormat,
    /// Where the chunks run across nodes: the farm, and the slots they were planned
    /// for; `None` on this node's slots.
    pub(super) farm: Option<(Arc<dyn ChunkFarm>, usize)>,
}

impl Chunked<'_> {
    /// The joined file, or `None` when its frames do not add up (then nothing is left
    /// behind and the caller encodes in one process).
    pub(super) async fn run(
        &self,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Option<MediaFile>, MediaError> {
        let dir = ScratchDir(out_dir.join(format!("chunks-{}", uuid::Uuid::new_v4().simple())));
        tokio::fs::create_dir(&dir.0).await?;
        let pieces = Piece::longest_first(self.plan.chunks.len(), !self.recipe.audio.is_empty());
        let chunks = ChunkProgress::new(self.plan, progress);
        let report = |index: usize, fraction: f64| chunks.report(index, fraction);
        // The seam: through the queue across nodes, or on this node's slots.
        if let Some((farm, slots)) = &self.farm {
            if !self.farm_pieces(&**farm, *slots, &dir.0, &report).await? {
                return Ok(None);
            }
        } else {
            let lender = self.media.lender();
            run_pieces(lender, pieces.len(), |i| {
                self.piece(pieces[i], &dir.0, &report)
            })
            .await?;
        }
        let (joined, frames) = self.join(&dir.0, out_dir).await?;
        if frames != Some(self.plan.frames) {
            tracing::warn!(
                expected = self.plan.frames,
                found = ?frames,
                "a chunked encode's frames did not add up; encoding in one process"
            );
            let _ = tokio::fs::remove_file(&joined.path).await;
            return Ok(None);
        }
        progress(1.0);
        Ok(Some(joined))
    }

    /// Encodes one piece into `dir`, reporting a chunk's progress to `report`.
    pub(super) async fn piece(
        &self,
        piece: Piece,
        dir: &Path,
        report: &(dyn Fn(usize, f64) + Send + Sync),
    ) -> Result<(), MediaError> {
        let recipe = match piece {
            Piece::Video(i) => self.recipe.chunk(&self.plan.chunks[i], self.plan.rate),
            Piece::Audio => self.recipe.audio_piece(),
        };
        let output = self.piece_path(dir, piece);
        let run = (self.media, self.input, self.plan);
        run_piece(run, piece, recipe, &output, report).await
    }

    pub(super) fn piece_path(&self, dir: &Path, piece: Piece) -> PathBuf {
        let extension = self.format.extension();
        match piece {
            Piece::Video(i) => dir.join(format!("chunk-{i}.{extension}")),
            Piece::Audio => dir.join(format!("audio.{}", self.recipe.audio_muxer())),
        }
    }
}
