//! `dash: true`: a DASH manifest beside the HLS master, over the same segments
//! (`media::video::dash`), the command's second output.

use std::path::{Path, PathBuf};

use super::super::options::{OptionKind, OptionSpec};
use crate::media::video::dash::write_manifest;
use crate::media::{MediaError, MediaFile, MediaFormat};

/// Whether a DASH manifest goes with the HLS master.
pub const DASH: OptionSpec = OptionSpec {
    name: "dash",
    doc: "video-to-hls: also write a DASH manifest (MPD) over the same fMP4 segments, no second copy of any media, listed in downloadUrls right after the master playlist, for dash.js and other DASH players (default false).",
    kind: OptionKind::Flag { default: false },
};

/// Where the manifest of the ladder in `dir` is written: beside that folder, not in
/// it, so that it is not stored again among the master's companions.
pub(super) fn manifest_path(dir: &Path) -> PathBuf {
    dir.with_extension(MediaFormat::Mpd.extension())
}

/// Writes the manifest of the ladder whose master is `master` (in `dir`).
pub(super) async fn write(master: &Path, dir: &Path) -> Result<MediaFile, MediaError> {
    let path = manifest_path(dir);
    write_manifest(master, &path).await?;
    Ok(MediaFile {
        path,
        format: MediaFormat::Mpd,
    })
}
