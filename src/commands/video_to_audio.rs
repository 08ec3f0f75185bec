//! `video-to-audio`: the first audio track of a video (or of an audio file) on its own,
//! as AAC in M4A (default, 160 kb/s), MP3 (LAME VBR `-q:a 2`, about 190 kb/s) or Opus
//! in Ogg (96 kb/s). The whole track, its length kept; the channels as they are. A file
//! without audio fails `no_audio_track`.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::ffmpeg::transcode;
use crate::media::video::audio::inspect_audio;
use crate::media::video::loudness::{self, audio_filter_args, Measured};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, VIDEOS_AND_AUDIO};

const INPUTS: &[MediaFormat] = VIDEOS_AND_AUDIO;

pub const FORMAT: OptionSpec = OptionSpec {
    name: "format",
    doc: "video-to-audio: m4a (AAC, default), mp3 or opus.",
    kind: OptionKind::Choice {
        values: &["m4a", "mp3", "opus"],
        default: Some("m4a"),
    },
};

/// The integrated loudness (LUFS) every command that writes audio brings it to.
pub const LOUDNESS: OptionSpec = OptionSpec {
    name: "loudness",
    doc: "Bring the audio to this integrated loudness, in LUFS (EBU R128; −70 to −5, e.g. −16 for the web, −23 for broadcast): measured first, then one gain over the track, its true peak kept at or under −1 dBTP (default: the audio as it is).",
    kind: OptionKind::Number {
        min: loudness::MIN_TARGET,
        min_inclusive: true,
        max: loudness::MAX_TARGET,
        integer: false,
        default: None,
    },
};

/// What [`LOUDNESS`] asks of an output that keeps the span (start, length in seconds)
/// of `input`: the target and the measured track, or `None` when the option is not
/// given or the output has no audio.
pub(crate) async fn loudness_target(
    media: &Media,
    input: &MediaFile,
    (options, has_audio): (&Options, bool),
    span: (Option<f64>, Option<f64>),
) -> Result<Option<(f64, Option<Measured>)>, MediaError> {
    match options.optional_number(&LOUDNESS) {
        Some(target) if has_audio => Ok(Some((
            target,
            loudness::measure(media, input, span, None).await?,
        ))),
        _ => Ok(None),
    }
}

pub struct VideoToAudio;

impl CommandDef for VideoToAudio {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-to-audio",
        summary: "The audio track of a video on its own, as M4A (AAC), MP3 or Opus; a file without audio fails `no_audio_track`.",
        inputs: INPUTS,
        options: &[&FORMAT, &LOUDNESS],
        output: None,
        in_process: false,
    };

    fn output(_input: MediaFormat, options: &Options) -> MediaFormat {
        format(options)
    }

    /// Sound of the same length, no picture.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let sound = Shape {
            size: None,
            frames: None,
            seconds: input.seconds,
        };
        Prediction::one(Some(format(options)), sound)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let info = inspect_audio(media, input).await?;
        let format = format(options);
        let target = loudness_target(media, input, (options, true), (None, None)).await?;
        let mut args = audio_args(format);
        // After the stream selection (`-map 0:a:0 -vn -sn -dn`), before the encoder.
        args.splice(5..5, audio_filter_args(&[], target));
        let out =
            transcode::run_to_file(media, input, args, format, info.duration, out_dir, progress);
        Ok(vec![out.await?])
    }
}

fn format(options: &Options) -> MediaFormat {
    match options.text(&FORMAT).as_deref() {
        Some("mp3") => MediaFormat::Mp3,
        Some("opus") => MediaFormat::Opus,
        _ => MediaFormat::M4a,
    }
}

/// ffmpeg arguments after the input: the first audio track, encoded for `format`.
fn audio_args(format: MediaFormat) -> Vec<String> {
    let mut args = vec!["-map", "0:a:0", "-vn", "-sn", "-dn"];
    args.extend(match format {
        // `ipod`: the MP4 muxer that brands the file M4A.
        MediaFormat::M4a => &[
            "-c:a",
            "aac",
            "-b:a",
            "160k",
            "-movflags",
            "+faststart",
            "-f",
            "ipod",
        ][..],
        MediaFormat::Mp3 => &["-c:a", "libmp3lame", "-q:a", "2", "-f", "mp3"][..],
        _ => &["-c:a", "libopus", "-b:a", "96k", "-f", "opus"][..],
    });
    args.into_iter().map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_format_gets_its_encoder_and_muxer() {
        let m4a = audio_args(MediaFormat::M4a).join(" ");
        assert!(
            m4a.starts_with("-map 0:a:0 -vn") && m4a.ends_with("-f ipod"),
            "{m4a}"
        );
        assert!(audio_args(MediaFormat::Mp3)
            .join(" ")
            .contains("libmp3lame"));
        assert!(audio_args(MediaFormat::Opus).join(" ").ends_with("-f opus"));
        let opus = Options::of(&[("format", json!("opus"))]);
        assert_eq!(
            VideoToAudio::output(MediaFormat::Webm, &opus),
            MediaFormat::Opus
        );
        let clip = Shape {
            size: Some((64, 48)),
            frames: Some(100),
            seconds: Some(4.0),
        };
        let predicted = VideoToAudio::predict(clip, &Options::default());
        assert_eq!(predicted.format, Some(MediaFormat::M4a));
        assert_eq!(
            (predicted.shape.size, predicted.shape.seconds),
            (None, Some(4.0))
        );
    }
}
