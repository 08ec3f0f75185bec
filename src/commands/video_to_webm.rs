//! `video-to-webm`: VP9 (realtime, cpu-used 8, row-mt, CRF 35) + Opus 96k in WebM;
//! measurements in docs/API.md. An HDR source is tone-mapped to 8-bit BT.709
//! (`video::hdr`) unless `keepHdr` keeps it: 10-bit VP9 (profile 2), tagged as the
//! source is.

use std::path::Path;

use super::options::{OptionKind, OptionSpec};
use super::video_to_audio::{loudness_target, LOUDNESS};
use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec};
use crate::commands::subtitled::{burn_into, BURN_SUBTITLES};
use crate::media::video::chunked::{self, SplitRecipe};
use crate::media::video::hdr::{kept_pictures, sdr_tags, shown_pictures};
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::audio_filter_args;
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

/// The video codec of the WebM.
pub const CODEC: OptionSpec = OptionSpec {
    name: "codec",
    doc: "video-to-webm: vp9 (libvpx realtime, default) or av1 (SVT-AV1 preset 10, CRF 35: about a third fewer bytes, encoded in about VP9 realtime's time).",
    kind: OptionKind::Choice {
        values: &["vp9", "av1"],
        default: Some("vp9"),
    },
};

/// SVT-AV1's speed preset: 10 encodes 720p as fast as VP9 realtime at cpu-used 8 on 2
/// cores, in about two thirds of its bytes at the same CRF (docs/PERFORMANCE.md).
const SVT_AV1_PRESET: &str = "10";
/// SVT-AV1 as `codec: av1` runs it (and `video-to-hls`'s AV1 renditions).
pub(crate) const SVT_AV1: [&str; 6] =
    ["-c:v", "libsvtav1", "-preset", SVT_AV1_PRESET, "-crf", "35"];

pub struct VideoToWebm;

impl CommandDef for VideoToWebm {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-webm",
        summary: "A video as WebM: VP9 (or AV1) video and Opus audio.",
        inputs: INPUTS,
        options: &[&KEEP_HDR, &CODEC, &LOUDNESS, &BURN_SUBTITLES],
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
        let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
        let target = loudness_target(media, input, (options, info.has_audio), (None, None));
        let av1 = options.text(&CODEC).as_deref() == Some("av1");
        let vp9_cores = media.config().vp9_cores_per_chunk;
        let mut recipe = recipe(&info, options.flag(&KEEP_HDR), av1, vp9_cores);
        recipe
            .audio
            .splice(0..0, audio_filter_args(&[], target.await?));
        burn_into(&mut recipe, options, &info, out_dir).await?;
        let input = (input, &info);
        let made = chunked::convert_inspected(media, input, &recipe, OUTPUT, out_dir, progress);
        Ok(vec![made.await?])
    }
}

/// The recipe; VP9's realtime mode leaves cores idle at the edges of a frame's rows, so
/// a long video is encoded in chunks. `keep_hdr`: an HDR source stays 10-bit HDR.
/// `av1`: SVT-AV1 instead of VP9, keyframes at the same interval, a chunk a core.
/// `vp9_cores`: the cores a VP9 chunk counts for (`--vp9-cores-per-chunk`).
fn recipe(info: &VideoInfo, keep_hdr: bool, av1: bool, vp9_cores: usize) -> SplitRecipe {
    let keyframes = KEYFRAME_INTERVAL.to_string();
    let encoder: &[&str] = if av1 {
        &SVT_AV1
    } else {
        &[
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
        ]
    };
    let mut video: Vec<String> = encoder.iter().map(|a| a.to_string()).collect();
    video.extend(["-g".to_string(), keyframes]);
    let filter = match info.hdr.filter(|_| keep_hdr) {
        Some(hdr) => {
            if !av1 {
                // 10-bit VP9 is profile 2; 10-bit AV1 is its main profile.
                video.extend(["-profile:v", "2"].map(String::from));
            }
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
        cores_per_chunk: if av1 { 1 } else { vp9_cores },
        local_only: false,
        part: None,
        burn: None,
    }
}

/// ffmpeg arguments after the input, in one process.
#[cfg(test)]
fn args(info: &VideoInfo) -> Vec<String> {
    recipe(info, false, false, 1).whole()
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

    #[test]
    fn av1_is_svt_av1_with_the_same_keyframes_and_hdr_kept_needs_no_vp9_profile() {
        let av1 = recipe(&info(None, true), false, true, 1).whole().join(" ");
        assert!(
            av1.contains("-c:v libsvtav1 -preset 10 -crf 35 -g 128"),
            "{av1}"
        );
        assert!(av1.contains("libopus"), "{av1}");
        assert!(!av1.contains("-profile:v"), "{av1}");
    }

    #[test]
    fn a_vp9_chunk_counts_for_the_cores_it_is_given_and_an_av1_chunk_for_one() {
        assert_eq!(
            recipe(&info(None, true), false, false, 2).cores_per_chunk,
            2
        );
        assert_eq!(recipe(&info(None, true), false, true, 2).cores_per_chunk, 1);
    }
}
