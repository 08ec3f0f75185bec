//! `video-to-ogg`: Theora (q6) + Vorbis (q4) in Ogg; measurements in docs/API.md.

use std::path::Path;

use super::video_to_audio::{loudness_target, LOUDNESS};
use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::spec::{CommandDef, CommandSpec};
use crate::commands::subtitled::{burn_into, BURN_SUBTITLES};
use crate::media::image::yuv::Matrix;
use crate::media::video::chunked::{self, SplitRecipe};
use crate::media::video::hdr::shown_pictures;
use crate::media::video::info::VideoInfo;
use crate::media::video::loudness::audio_filter_args;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Ogv;
/// Frames between keyframes: ffmpeg's default, stated so that chunks are cut on them.
const KEYFRAME_INTERVAL: u64 = 12;

pub struct VideoToOgg;

impl CommandDef for VideoToOgg {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-ogg",
        summary: "A video as Ogg: Theora video and Vorbis audio.",
        inputs: INPUTS,
        options: &[&LOUDNESS, &BURN_SUBTITLES],
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
        let mut recipe = recipe(&info);
        recipe
            .audio
            .splice(0..0, audio_filter_args(&[], target.await?));
        burn_into(&mut recipe, options, &info, out_dir).await?;
        let input = (input, &info);
        let made = chunked::convert_inspected(media, input, &recipe, OUTPUT, out_dir, progress);
        Ok(vec![made.await?])
    }
}

/// The recipe; Theora encodes on one thread, so a long video is encoded in chunks.
///
/// Theora states no matrix but BT.601's (its colour spaces are Rec. 470 M and BG),
/// and decoders read it so: a BT.709 picture (a tone-mapped HDR one among them) is
/// re-expressed in BT.601 first, or its colours shift (mean ΔE2000 5.7 → 1.5 on
/// tests/it/hdr.rs's HLG pattern). No BT.709 tag is written, which would be false.
fn recipe(info: &VideoInfo) -> SplitRecipe {
    let audio = ["-c:a", "libvorbis", "-q:a", "4"];
    let from = match info.matrix {
        Matrix::Bt709 => "bt709",
        Matrix::Bt601 => "bt601",
    };
    let bt601 = format!("scale=in_color_matrix={from}:out_color_matrix=bt601:out_range=tv");
    SplitRecipe {
        filter: format!("{},{bt601},format=yuv420p", shown_pictures(info)),
        video: [
            "-c:v",
            "libtheora",
            "-q:v",
            "6",
            "-g",
            &KEYFRAME_INTERVAL.to_string(),
        ]
        .map(String::from)
        .into(),
        audio: if info.has_audio {
            audio.map(String::from).into()
        } else {
            Vec::new()
        },
        muxer: "ogg",
        keyframe_interval: KEYFRAME_INTERVAL,
        // 1080p H.264 decodes in 6 ms a frame; Theora encodes one in 75.
        decode_weight: 0.08,
        muxer_options: Vec::new(),
        time_scale: 1.0,
        cores_per_chunk: 1,
        local_only: false,
        part: None,
        burn: None,
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
        assert_audio_only_when_present(args, "libvorbis");
        assert!(args(&info(None, false))
            .join(" ")
            .contains("-c:v libtheora -q:v 6"));
    }
}
