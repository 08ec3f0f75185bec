//! What a local file is: its format from its first bytes, and ffprobe's view of it.

use std::path::Path;

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::sniff;
use crate::media::video::ffprobe;
use crate::media::video::probe::Probe;

impl Media {
    /// Detects the format of a local file from its first bytes.
    ///
    /// `UnsupportedInputFormat` when the bytes match none of the formats we handle
    /// (including an empty file); `Io` when the file cannot be read.
    pub async fn detect(&self, path: &Path) -> Result<MediaFormat, MediaError> {
        self.detect_for(path, &[]).await
    }

    /// [`Media::detect`] for a source of a command that takes `takes`, which the error
    /// for unrecognised bytes then names.
    pub async fn detect_for(
        &self,
        path: &Path,
        takes: &[MediaFormat],
    ) -> Result<MediaFormat, MediaError> {
        let head = sniff::read_head(path).await?;
        sniff::sniff(&head).ok_or_else(|| match sniff::sniff_unread(&head) {
            Some(found) => MediaError::UnreadFormat {
                found,
                takes: takes.to_vec(),
            },
            None => MediaError::UnsupportedInputFormat {
                found: None,
                takes: takes.to_vec(),
            },
        })
    }

    /// Runs `ffprobe` on a local file and returns its streams and container.
    ///
    /// The file's format is sniffed first and forced on ffprobe, so ffprobe never
    /// guesses (a guessed playlist format could make it open other files or URLs).
    /// `UnsupportedInputFormat` for files we cannot sniff; `ProcessFailed` when ffprobe
    /// rejects the file (most likely corrupt); `InvalidMedia` if its output is not the
    /// JSON we expect.
    pub async fn probe(&self, path: &Path) -> Result<Probe, MediaError> {
        let format = self.detect(path).await?;
        ffprobe::run(self, path, format, false).await
    }
}
