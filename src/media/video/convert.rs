//! The shape of most video commands: read what the source is, then one ffmpeg run.

use std::path::Path;

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::progress::ProgressFn;
use crate::media::ffmpeg::transcode::run_to_file;
use crate::media::file::MediaFile;
use crate::media::video::info::VideoInfo;
use crate::media::video::inspect::inspect;

/// The shape of most video commands: probe `input` (which must be one of `accepted`)
/// and check its limits, then run the recipe `args` makes of what the probe found
/// into one file of `format`, reporting progress against the input's length.
pub(crate) async fn convert(
    media: &Media,
    input: &MediaFile,
    accepted: &[MediaFormat],
    args: impl FnOnce(&VideoInfo) -> Vec<String>,
    format: MediaFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = inspect(media, input, accepted).await?;
    let tail = args(&info);
    run_to_file(media, input, tail, format, info.duration, out_dir, progress).await
}
