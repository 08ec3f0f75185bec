//! What the video commands share: probe and limit checks, the head of every ffmpeg
//! command line, and one ffmpeg run into a file. The recipes are in `commands/`.
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

use super::probe::{self, demuxer, file_url, Probe};
use super::progress::{ProgressFn, ProgressParser};
use super::yuv::Matrix;
use super::{output_path, Media, MediaError, MediaFile, MediaFormat};

/// x264 settings shared by the MP4 outputs: `veryfast` at CRF 23 (see docs/API.md).
pub(crate) const X264: [&str; 6] = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"];
/// H.264 in yuv420p needs even sides; 2 is the smallest.
pub(crate) const EVEN_SIZE: &str = "scale='max(2,trunc(iw/2)*2)':'max(2,trunc(ih/2)*2)'";
/// Square pixels at the display aspect: a source with non-square pixels (a sample
/// aspect ratio, after ffmpeg's rotation) is stretched along the side that grows, so
/// no detail is lost, and marked square. A no-op for square pixels. Every video output
/// starts with it: GIF and WebP have no way to carry a sample aspect ratio, and players
/// of the others honour it unevenly.
pub(crate) const SQUARE_PIXELS: &str =
    "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1";
/// Limits a video source is checked against before any processing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VideoLimits {
    pub max_seconds: f64,
    pub max_pixels: u64,
    pub max_frames: u64,
}

/// What the probe says about a video source, as the recipes need it.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct VideoInfo {
    /// Coded size (before rotation).
    pub width: u32,
    pub height: u32,
    /// Seconds, when known.
    pub duration: Option<f64>,
    /// Frames of the video stream, from the container or counted.
    pub frames: Option<u64>,
    /// Average frame rate, when known.
    pub frame_rate: Option<f64>,
    /// The base rate every frame time is a multiple of (`r_frame_rate`), when known.
    pub base_rate: Option<f64>,
    pub has_audio: bool,
    /// The video codec (`h264`, …) and pixel format (`yuv420p`, …), when known.
    pub codec: Option<String>,
    pub pix_fmt: Option<String>,
    /// Square pixels (or none stated), and no display rotation: frames show as stored.
    pub shown_as_stored: bool,
    /// The size frames are shown at, which is the size ffmpeg hands them on at: pixels
    /// made square as [`SQUARE_PIXELS`] does, a quarter turn applied.
    pub shown: (u32, u32),
    /// The matrix of its YCbCr values.
    pub matrix: Matrix,
}

impl VideoInfo {
    /// Reads the fields of the first video stream; `InvalidMedia` without one.
    pub fn from_probe(probe: &Probe) -> Result<VideoInfo, MediaError> {
        let video = probe
            .video()
            .ok_or_else(|| MediaError::InvalidMedia("it has no video stream".into()))?;
        let size = (
            video.width.filter(|w| *w > 0),
            video.height.filter(|h| *h > 0),
        );
        let (Some(width), Some(height)) = size else {
            return Err(MediaError::InvalidMedia(
                "its video stream has no frame size".into(),
            ));
        };
        let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
        let frames = video.nb_frames.filter(|n| *n > 0).or(video.nb_read_packets);
        let frame_rate = positive(video.avg_frame_rate.as_deref().and_then(probe::parse_rate));
        // The honest length is the longest any part of the file admits to: a container
        // that declares a short duration over long streams must not slip past the
        // length limit, nor shrink the GIF palette's memory estimate.
        let from_frames = frames.zip(frame_rate).map(|(n, rate)| n as f64 / rate);
        let duration = std::iter::once(probe.format.duration)
            .chain(probe.streams.iter().map(|s| s.duration))
            .chain(std::iter::once(from_frames))
            .filter_map(positive)
            .reduce(f64::max);
        Ok(VideoInfo {
            width,
            height,
            duration,
            frames,
            frame_rate,
            base_rate: positive(video.frame_rate()),
            has_audio: probe.audio().is_some(),
            codec: video.codec_name.clone(),
            pix_fmt: video.pix_fmt.clone(),
            shown_as_stored: video.has_square_pixels() && !video.is_rotated(),
            shown: video.shown_size(width, height),
            matrix: Matrix::from_probe(video.color_space.as_deref()),
        })
    }

    /// Checks the source against `limits`, each violation with its own error.
    pub fn check(&self, limits: &VideoLimits) -> Result<(), MediaError> {
        let pixels = u64::from(self.width) * u64::from(self.height);
        if pixels > limits.max_pixels {
            return Err(MediaError::VideoTooLarge {
                width: self.width,
                height: self.height,
                limit: limits.max_pixels,
            });
        }
        if let Some(seconds) = self.duration.filter(|s| *s > limits.max_seconds) {
            return Err(MediaError::VideoTooLong {
                seconds,
                limit: limits.max_seconds,
            });
        }
        if let Some(frames) = self.frames.filter(|n| *n > limits.max_frames) {
            return Err(MediaError::TooManyFrames {
                frames,
                limit: limits.max_frames,
                what: "frames a video may have",
            });
        }
        Ok(())
    }
}

/// Probes `input` (which must be one of `accepted`) and checks it against the limits.
///
/// `UnsupportedInputFormat` for another format; `InvalidMedia` when ffprobe cannot read
/// it or it has no video stream; the limit errors of [`VideoInfo::check`].
pub(crate) async fn inspect(
    media: &Media,
    input: &MediaFile,
    accepted: &[MediaFormat],
) -> Result<VideoInfo, MediaError> {
    if !accepted.contains(&input.format) {
        return Err(MediaError::unsupported(input.format, accepted));
    }
    let info = read_info(media, input).await?;
    info.check(&media.limits())?;
    Ok(info)
}

/// What `input`'s headers say, limits unchecked (our own outputs may exceed the limits
/// of a source: a slowed-down video lasts longer than its source).
pub(crate) async fn read_info(media: &Media, input: &MediaFile) -> Result<VideoInfo, MediaError> {
    let unreadable = |e: MediaError| match e {
        MediaError::ProcessFailed { stderr_tail, .. } => MediaError::InvalidMedia(format!(
            "ffprobe could not read it ({})",
            super::process::last_line(&stderr_tail)
        )),
        other => other,
    };
    let key = InfoCache::key(&input.path).await;
    let cached = key.as_ref().and_then(|key| media.info_cache().get(key));
    let info = match cached {
        Some(info) => info,
        None => {
            let info = if input.format.is_iso_bmff_video() {
                let path = input.path.clone();
                super::blocking(move || Ok(super::mp4::read_info(&path))).await?
            } else {
                None
            };
            let info = match info {
                Some(info) => info,
                None => ffprobe_info(media, input, unreadable).await?,
            };
            if let Some(key) = key {
                media.info_cache().put(key, info.clone());
            }
            info
        }
    };
    Ok(info)
}

/// What ffprobe says of `input`: the authority on every file the in-process MP4
/// reader leaves alone.
async fn ffprobe_info(
    media: &Media,
    input: &MediaFile,
    unreadable: impl Fn(MediaError) -> MediaError,
) -> Result<VideoInfo, MediaError> {
    let probe = probe::run(media, &input.path, input.format, false)
        .await
        .map_err(&unreadable)?;
    let mut info = VideoInfo::from_probe(&probe)?;
    if info.frames.is_none() {
        // GIF (and some MOV) headers carry no frame count: count packets, which
        // only demuxes, decoding nothing.
        let counted = probe::run(media, &input.path, input.format, true)
            .await
            .map_err(unreadable)?;
        info.frames = counted.video().and_then(|v| v.nb_read_packets);
    }
    if info.frame_rate.is_none() {
        // Ogg states no average rate: the frames over the video stream's own length.
        let seconds = probe.video().and_then(|v| v.duration).filter(|s| *s > 0.0);
        info.frame_rate = info.frames.zip(seconds).map(|(n, s)| n as f64 / s);
    }
    Ok(info)
}

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

fn head_args(input: &MediaFile, max_seconds: f64, options: &[String]) -> Vec<OsString> {
    let demuxer = demuxer(input.format);
    head_args_as(&input.path, demuxer, max_seconds, options)
}

/// [`head_args`] for `path` read through the named `demuxer`.
fn head_args_as(path: &Path, demuxer: &str, max_seconds: f64, options: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-nostats",
        "-n",
        "-protocol_whitelist",
        "file",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    if demuxer == "gif" {
        // Play a looping GIF once (the default, stated so it stays so).
        args.extend(["-ignore_loop", "1"].map(OsString::from));
    }
    args.extend(["-t".into(), max_seconds.to_string().into()]);
    args.extend(options.iter().map(OsString::from));
    args.extend(["-f", demuxer, "-i"].map(OsString::from));
    args.push(file_url(path));
    args.extend(["-map_metadata", "-1"].map(OsString::from));
    args
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

/// The shape of most video commands: probe `input` (which must be one of `accepted`)
/// and check its limits, then run the recipe `args` makes of what the probe found
/// into one file of `format`, reporting progress against the input's length.
pub(crate) async fn convert(
    media: &Media,
    input: &MediaFile,
    accepted: &[MediaFormat],
    args: impl FnOnce(&VideoInfo) -> Vec<String>,
    format: MediaFormat,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = inspect(media, input, accepted).await?;
    let tail = args(&info);
    run_to_file(media, input, tail, format, info.duration, out_dir, progress).await
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

mod info_cache;
pub(crate) use info_cache::InfoCache;

#[cfg(test)]
pub(crate) mod tests;
