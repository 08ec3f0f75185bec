//! `video-to-ogg`: Theora (q6) + Vorbis (q4) in Ogg; measurements in docs/API.md.

use std::path::Path;

use super::VIDEOS;
use crate::media::transcode::{self, map_args, VideoInfo, SQUARE_PIXELS};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const NAME: &str = "video-to-ogg";
pub const INPUTS: &[MediaFormat] = VIDEOS;
pub const OUTPUT: MediaFormat = MediaFormat::Ogv;

pub async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = transcode::inspect(media, input, INPUTS).await?;
    let tail = args(&info);
    transcode::run_to_file(media, input, tail, OUTPUT, info.duration, out_dir, progress).await
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
    use crate::media::transcode::tests::info;

    #[test]
    fn audio_is_encoded_only_when_present_and_pixels_made_square() {
        let with = args(&info(Some(25.0), true)).join(" ");
        assert!(
            with.contains("-map 0:a:0") && with.contains("libvorbis"),
            "{with}"
        );
        assert!(with.contains(SQUARE_PIXELS), "{with}");
        let without = args(&info(Some(25.0), false)).join(" ");
        assert!(
            !without.contains("0:a") && !without.contains("libvorbis"),
            "{without}"
        );
    }
}
