//! A chunked encode's video chunks handed to the farm (`farm`), the audio encoded
//! here meanwhile, and the files the farm brings back joined as the encode's own.

use crate::media::error::MediaError;
use crate::media::lending::{BoxFuture, ChunkFarm, FarmJob, FarmedChunk};
use crate::media::video::chunked::encode::Chunked;
use crate::media::video::chunked::pieces::Piece;
use std::path::Path;

impl Chunked<'_> {
    /// Hands the video chunks to `farm` and encodes the audio here meanwhile; false
    /// when the farm gave up (see [`ChunkFarm::encode`]).
    pub(super) async fn farm_pieces(
        &self,
        farm: &dyn ChunkFarm,
        slots: usize,
        dir: &Path,
        report: &(dyn Fn(usize, f64) + Send + Sync),
    ) -> Result<bool, MediaError> {
        let chunks = self
            .plan
            .chunks
            .iter()
            .map(|chunk| {
                let (options, tail) = self.recipe.chunk(chunk, self.plan.rate);
                FarmedChunk {
                    options,
                    tail,
                    seconds: Some(self.plan.seconds(chunk)),
                }
            })
            .collect();
        let outputs = (0..self.plan.chunks.len())
            .map(|i| self.piece_path(dir, Piece::Video(i)))
            .collect();
        let job = FarmJob {
            source: self.input,
            chunks,
            format: self.format,
            outputs,
            report,
            slots,
        };
        let own: BoxFuture<'_, Result<(), MediaError>> = if self.recipe.audio.is_empty() {
            Box::pin(async { Ok(()) })
        } else {
            Box::pin(self.piece(Piece::Audio, dir, report))
        };
        farm.encode(job, own).await
    }
}
