//! Running ffprobe on a local file: the one place its arguments are written.

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::video::probe::{parse, Probe};
use std::ffi::OsString;
use std::path::Path;

/// Runs ffprobe on `path`, read as `format`, as a local file only. With
/// `count_packets`, only the first video stream is shown, with its packets counted
/// (which reads the whole file).
pub(crate) async fn run(
    media: &Media,
    path: &Path,
    format: MediaFormat,
    count_packets: bool,
) -> Result<Probe, MediaError> {
    let mut args: Vec<OsString> = [
        "-v",
        "error",
        "-print_format",
        "json",
        "-show_format",
        "-show_streams",
        "-protocol_whitelist",
        "file",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    if count_packets {
        args.extend(["-count_packets", "-select_streams", "v:0"].map(OsString::from));
    }
    args.extend(["-f", demuxer(format)].map(OsString::from));
    args.push(file_url(path));
    let output = media.runner().run(&media.config().ffprobe, args).await?;
    parse(&output.stdout)
}
