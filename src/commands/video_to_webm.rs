//! `video-to-webm`: VP9 (realtime, cpu-used 8, row-mt, CRF 35) + Opus 96k in WebM;
//! measurements in docs/API.md.

use std::path::Path;

use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec};
use crate::media::ffmpeg::transcode::SQUARE_PIXELS;
use crate::media::video::chunked::{self, SplitRecipe};
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Webm;
/// Frames between keyframes: libvpx's default, stated so that chunks are cut on them.
const KEYFRAME_INTERVAL: u64 = 128;

pub struct VideoToWebm;

impl CommandDef for VideoToWebm {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-webm",
        summary: "A video as WebM: VP9 video and Opus audio.",
        inputs: INPUTS,
        options: &[],
        output: Some(OUTPUT),
        in_process: false,
    };

    async fn run(
        media: &Media,
        input: &MediaFile,
        _options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, out_dir, progress).await?])
    }
}

async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    chunked::convert(media, input, INPUTS, recipe, OUTPUT, out_dir, progress).await
}

/// The recipe; VP9's realtime mode leaves cores idle at the edges of a frame's rows, so
/// a long video is encoded in chunks.
fn recipe(info: &VideoInfo) -> SplitRecipe {
    let video = [
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
    ];
    let audio = ["-c:a", "libopus", "-b:a", "96k"];
    SplitRecipe {
        filter: format!("{SQUARE_PIXELS},format=yuv420p"),
        video: video.map(String::from).into(),
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
    recipe(info).whole()
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
