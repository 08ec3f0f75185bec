//! What the video commands' ffmpeg runs share: the head of every command line, and
//! one ffmpeg run into a file. What is known of a source is `video::info`. The recipes are in `commands/`.
//!
//! Every run reads its input with the demuxer of the sniffed format (`-f`), through
//! the `file:` protocol only (`-protocol_whitelist file`), with stdin closed, and
//! reports its position on stdout (`-progress pipe:1`). Metadata of the source
//! (titles, locations) is not copied (`-map_metadata -1`). ffmpeg rotates frames
//! upright on decode (its default `-autorotate`), so outputs have the displayed size
//! and no rotation of their own.
//!
//! The measurements behind each command's recipe are in `docs/API.md`.

use std::ffi::OsString;
use std::path::Path;

use crate::format::MediaFormat;
use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::ffmpeg::progress::{ProgressFn, ProgressParser};
use crate::media::file::{output_path, MediaFile};

/// x264 settings shared by the MP4 outputs: `veryfast` at CRF 23 (see docs/API.md).
pub(crate) const X264: [&str; 6] = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"];

/// [`X264`] at another CRF (a fitted HLS rung, or a trial of one).
pub(crate) fn x264_at(crf: u8) -> Vec<String> {
    let mut args: Vec<String> = X264.map(String::from).into();
    args[5] = crf.to_string();
    args
}
/// The audio of the MP4 outputs that encode it: AAC at 128 kb/s.
pub(crate) const AAC: [&str; 4] = ["-c:a", "aac", "-b:a", "128k"];
/// H.264 in yuv420p needs even sides; 2 is the smallest.
pub(crate) const EVEN_SIZE: &str = "scale='max(2,trunc(iw/2)*2)':'max(2,trunc(ih/2)*2)'";
/// Square pixels at the display aspect: a source with non-square pixels (a sample
/// aspect ratio, after ffmpeg's rotation) is stretched along the side that grows, so
/// no detail is lost, and marked square. A no-op for square pixels. Every video output
/// starts with it: GIF and WebP have no way to carry a sample aspect ratio, and players
/// of the others honour it unevenly.
pub(crate) const SQUARE_PIXELS: &str =
    "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1";
/// The head of every ffmpeg command line: quiet, no stdin, progress on stdout, no
/// overwriting, and the input read only as a local file through the named `demuxer`
/// (the sniffed format's, see `probe::demuxer`).
///
/// `-t max_seconds` caps what is read: the limit was checked on the honest duration
/// before, so this only bites on a file whose every length field lies, which is then
/// cut at the limit rather than run for as long as it goes on. `options` for the
/// input (such as `-itsscale`) go just before it.
pub(crate) fn input_args_with(
    (input, demuxer): (&Path, &str),
    max_seconds: f64,
    options: &[String],
) -> Vec<OsString> {
    with_progress(head_args_as(input, demuxer, max_seconds, options))
}

/// `head` with progress reports on stdout, twice a second at ffmpeg's default rate:
/// short jobs still show movement.
fn with_progress(mut head: Vec<OsString>) -> Vec<OsString> {
    let progress = ["-progress", "pipe:1", "-stats_period", "0.25"];
    head.splice(1..1, progress.map(OsString::from));
    head
}

/// [`input_args_with`] without the progress reports, for a run whose stdout carries data
/// (decoded frames): its caller reports progress itself.
pub(crate) fn quiet_input_args(input: &MediaFile, max_seconds: f64) -> Vec<OsString> {
    head_args(input, max_seconds, &[])
}

/// [`quiet_input_args`] with `options` before the input (a seek, decoder threads).
pub(crate) fn quiet_input_args_with(
    input: &MediaFile,
    max_seconds: f64,
    options: &[String],
) -> Vec<OsString> {
    head_args(input, max_seconds, options)
}

fn head_args(input: &MediaFile, max_seconds: f64, options: &[String]) -> Vec<OsString> {
    let demuxer = demuxer(input.format);
    head_args_as(&input.path, demuxer, max_seconds, options)
}

/// [`input_args_with`] for an input of our own making that ffmpeg reads from its
/// stdin through the named `demuxer` (the `pipe` protocol only, where a file input is
/// held to `file`).
pub(crate) fn fed_input_args(demuxer: &str, max_seconds: f64) -> Vec<OsString> {
    let mut head = head_args_at("pipe:0".into(), demuxer, max_seconds, &[]);
    if let Some(at) = head.iter().position(|a| a == "-protocol_whitelist") {
        head[at + 1] = "pipe".into();
    }
    with_progress(head)
}

/// [`head_args`] for `path` read through the named `demuxer`.
fn head_args_as(path: &Path, demuxer: &str, max_seconds: f64, options: &[String]) -> Vec<OsString> {
    head_args_at(file_url(path), demuxer, max_seconds, options)
}

/// [`head_args`] for the input at `url`.
fn head_args_at(
    url: OsString,
    demuxer: &str,
    max_seconds: f64,
    options: &[String],
) -> Vec<OsString> {
    let mut args = quiet_args();
    if demuxer == "gif" {
        // Play a looping GIF once (the default, stated so it stays so).
        args.extend(["-ignore_loop", "1"].map(OsString::from));
    }
    args.extend(["-t".into(), max_seconds.to_string().into()]);
    args.extend(options.iter().map(OsString::from));
    args.extend(["-f", demuxer, "-i"].map(OsString::from));
    args.push(url);
    args.extend(["-map_metadata", "-1"].map(OsString::from));
    args
}

/// The options every ffmpeg run starts with: quiet, no stdin, no overwriting, and
/// local files only.
pub(crate) fn quiet_args() -> Vec<OsString> {
    [
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-nostats",
        "-n",
        "-protocol_whitelist",
        "file",
    ]
    .map(OsString::from)
    .into()
}

/// Stream selection: the first video stream, and the first audio stream if there is one.
pub(crate) fn map_args(with_audio: bool) -> Vec<String> {
    let mut args = vec!["-map".to_string(), "0:v:0".to_string()];
    if with_audio {
        args.extend(["-map".to_string(), "0:a:0".to_string()]);
    }
    args
}

/// Runs ffmpeg with `head` + `tail` + `output`, reporting progress against `expected`
/// seconds of output.
pub(crate) async fn run_ffmpeg(
    media: &Media,
    head: Vec<OsString>,
    tail: Vec<String>,
    output: OsString,
    expected: Option<f64>,
    progress: ProgressFn<'_>,
) -> Result<(), MediaError> {
    let mut args = head;
    args.extend(tail.into_iter().map(OsString::from));
    args.push(output);
    let mut parser = ProgressParser::new(expected);
    media
        .runner()
        .run_streaming(&media.config().ffmpeg, args, &mut |line| {
            if let Some(fraction) = parser.line(line) {
                progress(fraction);
            }
        })
        .await
}

/// An ffmpeg recipe: options for the input (before `-i`), and everything after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Recipe {
    pub input_options: Vec<String>,
    pub output_options: Vec<String>,
}

impl From<Vec<String>> for Recipe {
    fn from(output_options: Vec<String>) -> Recipe {
        Recipe {
            input_options: Vec::new(),
            output_options,
        }
    }
}

/// Runs a one-output recipe into a fresh file of `format` in `out_dir`; a partial
/// output is removed on failure.
pub(crate) async fn run_to_file(
    media: &Media,
    input: &MediaFile,
    recipe: impl Into<Recipe>,
    format: MediaFormat,
    expected: Option<f64>,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let source = (input.path.as_path(), demuxer(input.format));
    run_demuxed_to_file(media, source, recipe, format, (expected, out_dir), progress).await
}

/// [`run_to_file`] for a file of our own making, read through the named demuxer given
/// with it rather than its format's (an APNG written for ffmpeg: `apng`, where a PNG's
/// is `png_pipe`).
pub(crate) async fn run_demuxed_to_file(
    media: &Media,
    (input, demuxer): (&Path, &str),
    recipe: impl Into<Recipe>,
    format: MediaFormat,
    (expected, out_dir): (Option<f64>, &Path),
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let recipe = recipe.into();
    let output = output_path(out_dir, format);
    let max_seconds = media.config().max_video_seconds;
    let head = input_args_with((input, demuxer), max_seconds, &recipe.input_options);
    let result = run_ffmpeg(
        media,
        head,
        recipe.output_options,
        file_url(&output),
        expected,
        progress,
    )
    .await;
    if let Err(e) = result {
        // Best effort: a partial file must not be mistaken for an output.
        let _ = tokio::fs::remove_file(&output).await;
        return Err(e);
    }
    Ok(MediaFile {
        path: output,
        format,
    })
}
