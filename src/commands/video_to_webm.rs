//! `video-to-webm`: VP9 (realtime, cpu-used 8, row-mt, CRF 35) + Opus 96k in WebM;
//! measurements in docs/API.md. An HDR source is tone-mapped to 8-bit BT.709
//! (`video::hdr`) unless `keepHdr` keeps it: 10-bit VP9 (profile 2), tagged as the
//! source is.

use std::path::Path;

use super::options::{OptionKind, OptionSpec};
use super::{CommandDef, CommandSpec, Options, VIDEOS};
use crate::media::video::hdr::{kept_pictures, sdr_tags, shown_pictures};
use crate::media::video::chunked::{self, SplitRecipe};
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Webm;
/// Frames between keyframes: libvpx's default, stated so that chunks are cut on them.
const KEYFRAME_INTERVAL: u64 = 128;

/// Keeps an HDR source HDR (shared with `video-to-hls`).
pub const KEEP_HDR: OptionSpec = OptionSpec {
    name: "keepHdr",
    doc: "Keep an HDR (HLG or PQ) source HDR: 10-bit video tagged as the source (VP9 profile 2 in WebM, HEVC Main 10 in HLS) instead of tone-mapped 8-bit BT.709 (default false; no effect on SDR).",
    kind: OptionKind::Flag { default: false },
};

pub struct VideoToWebm;

impl CommandDef for VideoToWebm {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-webm",
        summary: "A video as WebM: VP9 video and Opus audio.",
        inputs: INPUTS,
        options: &[&KEEP_HDR],
        output: Some(OUTPUT),
        in_process: false,
    };

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let keep_hdr = options.flag(&KEEP_HDR);
        let recipe = |info: &VideoInfo| recipe(info, keep_hdr);
        let made = chunked::convert(media, input, INPUTS, recipe, OUTPUT, out_dir, progress);
        Ok(vec![made.await?])
    }
}

/// The recipe; VP9's realtime mode leaves cores idle at the edges of a frame's rows, so
/// a long video is encoded in chunks. `keep_hdr`: an HDR source stays 10-bit HDR.
fn recipe(info: &VideoInfo, keep_hdr: bool) -> SplitRecipe {
    let mut video: Vec<String> = [
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-row-mt",
        "1",
        "-b:v",
        "0",
        "-crf",
        "35",
        "-g",
        &KEYFRAME_INTERVAL.to_string(),
    ]
    .map(String::from)
    .into();
    let filter = match info.hdr.filter(|_| keep_hdr) {
        Some(hdr) => {
            video.extend(["-profile:v", "2"].map(String::from));
            video.extend(hdr.source_tags());
            format!("{},format=yuv420p10le", kept_pictures())
        }
        None => {
            video.extend(sdr_tags(info));
            format!("{},format=yuv420p", shown_pictures(info))
        }
    };
    let audio = ["-c:a", "libopus", "-b:a", "96k"];
    SplitRecipe {
        filter,
        video,
        audio: if info.has_audio {
            audio.map(String::from).into()
        } else {
            Vec::new()
        },
        muxer: "webm",
        keyframe_interval: KEYFRAME_INTERVAL,
        // 1080p H.264 decodes in 6 ms a frame; VP9 in realtime mode encodes one in 20.
        decode_weight: 0.3,
        muxer_options: Vec::new(),
        time_scale: 1.0,
        cores_per_chunk: 1,
        local_only: false,
        part: None,
    }
}

/// ffmpeg arguments after the input, in one process.
#[cfg(test)]
fn args(info: &VideoInfo) -> Vec<String> {
    recipe(info, false).whole()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::info::tests::{assert_audio_only_when_present, info};

    #[test]
    fn audio_is_encoded_only_when_present_and_pixels_made_square() {
        assert_audio_only_when_present(args, "libopus");
        assert!(args(&info(None, false))
            .join(" ")
            .contains("-deadline realtime -cpu-used 8 -row-mt 1 -b:v 0 -crf 35"));
    }
}
