//! The renditions' video codecs (`codecs`): H.264 (or HEVC 10-bit for a kept HDR
//! source), AV1 by SVT-AV1, each rendition's encoder options for its stream alone.

use super::super::options::{OptionKind, OptionSpec};
use super::super::video_to_webm::{CODEC, SVT_AV1};
use crate::commands::options::Options;
use crate::media::ffmpeg::transcode::x264_at;

/// The renditions of `keepHdr`: 10-bit HEVC (Main 10) tagged `hvc1`, as Apple's HLS
/// players require, every forced keyframe an IDR so each segment decodes alone.
pub(super) const HEVC_10BIT: [&str; 14] = [
    "-c:v",
    "libx265",
    "-preset",
    "veryfast",
    "-crf",
    "23",
    "-profile:v",
    "main10",
    "-tag:v",
    "hvc1",
    "-forced-idr",
    "1",
    "-x265-params",
    "log-level=error",
];

/// The renditions' video codecs.
pub const CODECS: OptionSpec = OptionSpec {
    name: "codecs",
    doc: "video-to-hls: the renditions' video codecs, one ladder each: [\"h264\"] (default), [\"av1\"] (SVT-AV1: about a third fewer bytes, for players that decode AV1), or [\"h264\", \"av1\"] (both, each player picking by CODECS). `codec: av1` alone means [\"av1\"].",
    kind: OptionKind::ChoiceList {
        values: &["h264", "av1"],
        default: &["h264"],
    },
};

/// A rendition's video codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VideoCodec {
    H264,
    Av1,
}

/// The codecs of `options`: `codecs`, else `codec: av1` alone, else H.264.
pub(super) fn codecs(options: &Options) -> Vec<VideoCodec> {
    let named = match options.has(&CODECS) || !options.has(&CODEC) {
        true => options.texts(&CODECS),
        false => options.text(&CODEC).into_iter().collect(),
    };
    let mut codecs: Vec<VideoCodec> = named
        .iter()
        .filter_map(|name| match name.as_str() {
            "h264" => Some(VideoCodec::H264),
            "av1" => Some(VideoCodec::Av1),
            _ => None,
        })
        .collect();
    codecs.dedup();
    if codecs.is_empty() {
        codecs.push(VideoCodec::H264);
    }
    codecs
}

/// Rendition `i`'s encoder options, each for its stream alone (`-crf:v:<i>`): x264 at
/// `crf`, or HEVC 10-bit when an HDR source is kept; SVT-AV1 (10-bit when kept) with a
/// keyframe every `gop` frames besides those forced by time.
pub(super) fn encoder(
    codec: VideoCodec,
    keep_hdr: bool,
    (gop, crf): (u64, u8),
    i: usize,
) -> Vec<String> {
    let args: Vec<String> = match (codec, keep_hdr) {
        (VideoCodec::H264, false) => x264_at(crf),
        (VideoCodec::H264, true) => HEVC_10BIT.map(String::from).into(),
        (VideoCodec::Av1, _) => [&SVT_AV1[..], &["-g", &gop.to_string()]]
            .concat()
            .iter()
            .map(|a| a.to_string())
            .collect(),
    };
    args.iter()
        .map(|arg| match arg.strip_prefix('-') {
            // `-c:v` and `-c` alike become `-c:v:<i>`.
            Some(name) if !arg.starts_with("--") && arg.len() > 1 => {
                let name = name.strip_suffix(":v").unwrap_or(name);
                format!("-{name}:v:{i}")
            }
            _ => arg.to_string(),
        })
        .collect()
}
