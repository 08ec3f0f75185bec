//! `video-to-ogg`: Theora (q6) + Vorbis (q4) in Ogg; measurements in docs/API.md.

use std::path::Path;

use super::{CommandDef, CommandSpec, Options, VIDEOS};
use crate::media::ffmpeg::transcode::{map_args, SQUARE_PIXELS};
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Ogv;


pub struct VideoToOgg;

impl CommandDef for VideoToOgg {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-ogg",
        summary: "A video as Ogg: Theora video and Vorbis audio.",
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
    crate::media::video::convert::convert(media, input, INPUTS, args, OUTPUT, out_dir, progress).await
}

/// ffmpeg arguments after the input.
fn args(info: &VideoInfo) -> Vec<String> {
    let mut args = map_args(info.has_audio);
    let video = format!("{SQUARE_PIXELS},format=yuv420p");
    args.extend(["-vf".to_string(), video]);
    args.extend(["-c:v", "libtheora", "-q:v", "6"].map(String::from));
    if info.has_audio {
        args.extend(["-c:a", "libvorbis", "-q:a", "4"].map(String::from));
    }
    args.extend(["-f", "ogg"].map(String::from));
    args
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
