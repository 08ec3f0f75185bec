//! The video commands: probe and limit checks, then one ffmpeg run per command.
//!
//! Every run reads its input with the demuxer of the sniffed format (`-f`), through
//! the `file:` protocol only (`-protocol_whitelist file`), with stdin closed, and
//! reports its position on stdout (`-progress pipe:1`). Metadata of the source
//! (titles, locations) is not copied (`-map_metadata -1`). ffmpeg rotates frames
//! upright on decode (its default `-autorotate`), so outputs have the displayed size
//! and no rotation of their own.
//!
//! The recipe of each command, and the measurements behind it, are in `docs/API.md`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::probe::{self, demuxer, file_url, Probe};
use super::progress::{ProgressFn, ProgressParser};
use super::video::FrameRate;
use super::{output_path, Media, MediaError, MediaFile, MediaFormat};

/// x264 settings shared by the MP4 outputs: `veryfast` at CRF 23 (see docs/API.md).
pub(crate) const X264: [&str; 6] = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"];
/// H.264 in yuv420p needs even sides; 2 is the smallest.
const EVEN_SIZE: &str = "scale='max(2,trunc(iw/2)*2)':'max(2,trunc(ih/2)*2)'";
/// Square pixels at the display aspect: a source with non-square pixels (a sample
/// aspect ratio, after ffmpeg's rotation) is stretched along the side that grows, so
/// no detail is lost, and marked square. A no-op for square pixels. Every video output
/// starts with it: GIF and WebP have no way to carry a sample aspect ratio, and players
/// of the others honour it unevenly.
pub(crate) const SQUARE_PIXELS: &str =
    "scale='if(gte(sar,1),round(iw*sar),iw)':'if(gte(sar,1),ih,round(ih/sar))',setsar=1";
/// GIF output: frames per second at most, and the longest side at most.
pub(crate) const GIF_MAX_FPS: f64 = 15.0;
pub(crate) const GIF_MAX_SIDE: u32 = 480;
/// Memory a whole-clip GIF palette may hold frames in (see [`video_to_gif_args`]).
const GIF_BUFFER_BYTES: u64 = 512 * 1024 * 1024;
/// Output frame rates past this are dropped to it by `modify-video-speed`: no screen
/// shows them, and they cost bytes.
const SPEED_MAX_FPS: f64 = 60.0;

/// Limits a video source is checked against before any processing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VideoLimits {
    pub max_seconds: f64,
    pub max_pixels: u64,
    pub max_frames: u64,
}

/// What the probe says about a video source, as the recipes need it.
#[derive(Debug, Clone, PartialEq)]
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
        return Err(MediaError::UnsupportedInputFormat {
            found: input.format.name().to_string(),
        });
    }
    let unreadable = |e: MediaError| match e {
        MediaError::ProcessFailed { stderr_tail, .. } => MediaError::InvalidMedia(format!(
            "ffprobe could not read it ({})",
            super::process::last_line(&stderr_tail)
        )),
        other => other,
    };
    let probe = probe::run(media, &input.path, input.format, false)
        .await
        .map_err(unreadable)?;
    let mut info = VideoInfo::from_probe(&probe)?;
    if info.frames.is_none() {
        // GIF (and some MOV) headers carry no frame count: count packets, which only
        // demuxes, decoding nothing.
        let counted = probe::run(media, &input.path, input.format, true)
            .await
            .map_err(unreadable)?;
        info.frames = counted.video().and_then(|v| v.nb_read_packets);
    }
    info.check(&media.limits())?;
    Ok(info)
}

/// The head of every ffmpeg command line: quiet, no stdin, progress on stdout, no
/// overwriting, and the input read only as a local file of the sniffed format.
///
/// `-t max_seconds` caps what is read: the limit was checked on the honest duration
/// before, so this only bites on a file whose every length field lies, which is then
/// cut at the limit rather than run for as long as it goes on.
pub(crate) fn input_args(input: &MediaFile, max_seconds: f64) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-nostats",
        "-progress",
        "pipe:1",
        // Twice ffmpeg's default rate: short jobs still show movement.
        "-stats_period",
        "0.25",
        "-n",
        "-protocol_whitelist",
        "file",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    if input.format == MediaFormat::Gif {
        // Play a looping GIF once (the default, stated so it stays so).
        args.extend(["-ignore_loop", "1"].map(OsString::from));
    }
    args.extend(["-t".into(), max_seconds.to_string().into()]);
    args.extend(["-f", demuxer(input.format), "-i"].map(OsString::from));
    args.push(file_url(&input.path));
    args.extend(["-map_metadata", "-1"].map(OsString::from));
    args
}

/// Stream selection: the first video stream, and the first audio stream if there is one.
fn map_args(with_audio: bool) -> Vec<String> {
    let mut args = vec!["-map".to_string(), "0:v:0".to_string()];
    if with_audio {
        args.extend(["-map".to_string(), "0:a:0".to_string()]);
    }
    args
}

/// The `atempo` factors whose product is `speed`, each within the filter's 0.5–2.0.
/// Empty for 1.0 (nothing to do).
pub(crate) fn atempo_chain(speed: f64) -> Vec<f64> {
    let mut chain = Vec::new();
    let mut rest = speed;
    while rest > 2.0 {
        chain.push(2.0);
        rest /= 2.0;
    }
    while rest < 0.5 {
        chain.push(0.5);
        rest /= 0.5;
    }
    // Float division leaves e.g. 0.7999999999999998 for 0.1; six digits are plenty.
    let rest = (rest * 1e6).round() / 1e6;
    if rest != 1.0 {
        chain.push(rest);
    }
    chain
}

/// `modify-video-speed` arguments after the input.
///
/// A constant-rate source gets `fps` at its rate × speed (at most 60): exact frame
/// durations, so the output lasts exactly duration / speed, and speed-ups past 60 fps
/// drop the frames no screen would show. A variable-rate source keeps its own frame
/// times (retimed) in the input's fine time base; ffmpeg's default of 1/(input frame
/// rate) would merge frames that speeding up brought closer. Its last frame keeps its
/// input length, so the duration is off by less than one input frame.
pub(crate) fn modify_speed_args(speed: f64, info: &VideoInfo) -> Vec<String> {
    let mut video = format!("{SQUARE_PIXELS},setpts=PTS/{speed}");
    let out_rate = info.base_rate.map(|r| r * speed);
    let constant = match (info.base_rate, info.frame_rate) {
        (Some(base), Some(avg)) => (base - avg).abs() <= base * 0.01,
        _ => false,
    };
    let fps = match out_rate {
        Some(rate) if rate > SPEED_MAX_FPS => Some(SPEED_MAX_FPS),
        Some(rate) if constant => Some(rate),
        None => Some(SPEED_MAX_FPS),
        Some(_) => None,
    };
    if let Some(rate) = fps.and_then(FrameRate::from_fps) {
        video.push_str(&format!(",fps={}", rate.to_ffmpeg()));
    }
    // Rounding a side to even would otherwise leave the pixels a hair off square.
    video.push_str(&format!(",{EVEN_SIZE},setsar=1,format=yuv420p"));
    let mut args = map_args(info.has_audio);
    args.extend(["-vf", &video, "-fps_mode", "vfr"].map(String::from));
    if fps.is_none() {
        args.extend(["-enc_time_base", "-1"].map(String::from));
    }
    args.extend(X264.map(String::from));
    if info.has_audio {
        let chain = atempo_chain(speed);
        if !chain.is_empty() {
            let filters: Vec<String> = chain.iter().map(|f| format!("atempo={f}")).collect();
            args.extend(["-af".to_string(), filters.join(",")]);
        }
        args.extend(["-c:a", "aac", "-b:a", "128k"].map(String::from));
    }
    args.extend(["-movflags", "+faststart", "-f", "mp4"].map(String::from));
    args
}

/// `video-to-gif` arguments after the input.
///
/// One palette for the whole clip needs every frame held until the palette is made at
/// the end (`split` buffers them): 4 bytes a pixel. A clip whose frames would take more
/// than [`GIF_BUFFER_BYTES`] gets a palette per frame instead, which holds nothing.
pub(crate) fn video_to_gif_args(info: &VideoInfo) -> Vec<String> {
    let mut video = format!("[0:v:0]{SQUARE_PIXELS},");
    let fps = match info.frame_rate {
        Some(fps) if fps <= GIF_MAX_FPS => fps,
        _ => {
            video.push_str(&format!("fps={GIF_MAX_FPS},"));
            GIF_MAX_FPS
        }
    };
    // Rotation swaps the sides, which changes neither the longest side nor the area.
    let longest = f64::from(info.width.max(info.height));
    let shrink = (f64::from(GIF_MAX_SIDE) / longest).min(1.0);
    let frame_bytes = f64::from(info.width) * f64::from(info.height) * shrink * shrink * 4.0;
    let frames = info.duration.map_or(f64::INFINITY, |d| d * fps);
    let (palettegen, paletteuse) = if frame_bytes * frames <= GIF_BUFFER_BYTES as f64 {
        ("stats_mode=diff", "dither=sierra2_4a:diff_mode=rectangle")
    } else {
        (
            "stats_mode=single",
            "new=1:dither=sierra2_4a:diff_mode=rectangle",
        )
    };
    // The longest displayed side to at most GIF_MAX_SIDE, aspect kept, never larger.
    let m = GIF_MAX_SIDE;
    video.push_str(&format!(
        "scale='if(gte(iw,ih),min({m},iw),-1)':'if(gte(iw,ih),-1,min({m},ih))':flags=lanczos,\
         setsar=1,split[a][b];[a]palettegen={palettegen}[p];[b][p]paletteuse={paletteuse}[v]"
    ));
    let mut args = vec!["-filter_complex".to_string(), video];
    args.extend(["-map", "[v]", "-loop", "0", "-f", "gif"].map(String::from));
    args
}

/// `video-to-ogg` arguments after the input.
pub(crate) fn video_to_ogg_args(info: &VideoInfo) -> Vec<String> {
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

/// `video-to-webm` arguments after the input.
pub(crate) fn video_to_webm_args(info: &VideoInfo) -> Vec<String> {
    let mut args = map_args(info.has_audio);
    let video = format!("{SQUARE_PIXELS},format=yuv420p");
    args.extend(["-vf".to_string(), video]);
    args.extend(
        [
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
        .map(String::from),
    );
    if info.has_audio {
        args.extend(["-c:a", "libopus", "-b:a", "96k"].map(String::from));
    }
    args.extend(["-f", "webm"].map(String::from));
    args
}

/// `extract-frames` arguments after the input: every decoded frame, none dropped or
/// repeated, at most `max_frames` of them.
pub(crate) fn extract_frames_args(max_frames: u64) -> Vec<String> {
    [
        "-map",
        "0:v:0",
        "-vf",
        SQUARE_PIXELS,
        "-fps_mode",
        "passthrough",
        "-frames:v",
        &max_frames.to_string(),
        "-c:v",
        "libwebp",
        "-quality",
        "80",
        "-f",
        "image2",
    ]
    .map(String::from)
    .to_vec()
}

/// Runs ffmpeg with `head` + `tail` + `output`, reporting progress against `expected`
/// seconds of output.
async fn run_ffmpeg(
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

/// Runs a one-output recipe into a fresh file of `format` in `out_dir`; a partial
/// output is removed on failure.
pub(crate) async fn run_to_file(
    media: &Media,
    input: &MediaFile,
    tail: Vec<String>,
    format: MediaFormat,
    expected: Option<f64>,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let output = output_path(out_dir, format);
    let result = run_ffmpeg(
        media,
        input_args(input, media.config().max_video_seconds),
        tail,
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

/// See [`Media::modify_video_speed`].
pub(crate) async fn modify_video_speed(
    media: &Media,
    input: &MediaFile,
    speed: f64,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    if !(speed.is_finite() && speed > 0.0) {
        return Err(MediaError::InvalidParameter {
            name: "speed",
            expected: "a positive number",
        });
    }
    let info = inspect(media, input, VIDEOS).await?;
    let tail = modify_speed_args(speed, &info);
    let expected = info.duration.map(|d| d / speed);
    run_to_file(
        media,
        input,
        tail,
        MediaFormat::Mp4,
        expected,
        out_dir,
        progress,
    )
    .await
}

/// The sources of the video-to-something commands.
const VIDEOS: &[MediaFormat] = &[MediaFormat::Mp4, MediaFormat::Mov];

/// Which of the single-output conversions to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conversion {
    Gif,
    Ogg,
    Webm,
}

/// See [`Media::video_to_gif`] and its siblings.
pub(crate) async fn convert(
    media: &Media,
    input: &MediaFile,
    to: Conversion,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<MediaFile, MediaError> {
    let info = inspect(media, input, VIDEOS).await?;
    let (tail, format) = match to {
        Conversion::Gif => (video_to_gif_args(&info), MediaFormat::Gif),
        Conversion::Ogg => (video_to_ogg_args(&info), MediaFormat::Ogv),
        Conversion::Webm => (video_to_webm_args(&info), MediaFormat::Webm),
    };
    run_to_file(media, input, tail, format, info.duration, out_dir, progress).await
}

/// See [`Media::extract_frames`].
pub(crate) async fn extract_frames(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let info = inspect(media, input, VIDEOS).await?;
    let limit = media.config().max_extract_frames;
    let too_many = |frames| MediaError::TooManyFrames {
        frames,
        limit,
        what: "frames extract-frames may write",
    };
    if let Some(frames) = info.frames.filter(|n| *n > limit) {
        return Err(too_many(frames));
    }
    // A directory of its own: the step directory may hold other outputs.
    let dir = out_dir.join(format!("frames-{}", uuid::Uuid::new_v4().simple()));
    tokio::fs::create_dir(&dir).await?;
    let mut pattern = file_url(&dir);
    pattern.push("/frame-%06d.webp");
    // One frame past the limit is allowed to be written, so that a container that
    // under-reports its frames is still caught below.
    let tail = extract_frames_args(limit + 1);
    let result = run_ffmpeg(
        media,
        input_args(input, media.config().max_video_seconds),
        tail,
        pattern,
        info.duration,
        progress,
    )
    .await;
    let frames = match result {
        Ok(()) => list_frames(&dir).await,
        Err(e) => Err(e),
    };
    match frames {
        Ok(frames) if frames.len() as u64 > limit => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(too_many(frames.len() as u64))
        }
        Ok(frames) if frames.is_empty() => Err(MediaError::InvalidMedia(
            "no frame of it could be decoded".into(),
        )),
        Ok(frames) => Ok(frames),
        Err(e) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(e)
        }
    }
}

/// The frames ffmpeg wrote into `dir`, in frame order (the names are zero-padded).
async fn list_frames(dir: &Path) -> Result<Vec<MediaFile>, MediaError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut entries = tokio::fs::read_dir(dir).await?;
    while let Some(entry) = entries.next_entry().await? {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("frame-") && name.ends_with(".webp") {
            paths.push(entry.path());
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| MediaFile {
            path,
            format: MediaFormat::Webp,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(frame_rate: Option<f64>, has_audio: bool) -> VideoInfo {
        VideoInfo {
            width: 160,
            height: 120,
            duration: Some(2.0),
            frames: Some(50),
            frame_rate,
            base_rate: frame_rate,
            has_audio,
        }
    }

    #[test]
    fn atempo_chain_keeps_each_factor_within_half_and_double() {
        assert_eq!(atempo_chain(1.0), Vec::<f64>::new());
        assert_eq!(atempo_chain(1.5), [1.5]);
        assert_eq!(atempo_chain(2.0), [2.0]);
        assert_eq!(atempo_chain(4.0), [2.0, 2.0]);
        assert_eq!(atempo_chain(16.0), [2.0, 2.0, 2.0, 2.0]);
        assert_eq!(atempo_chain(3.0), [2.0, 1.5]);
        assert_eq!(atempo_chain(0.5), [0.5]);
        assert_eq!(atempo_chain(0.25), [0.5, 0.5]);
        assert_eq!(atempo_chain(0.1), [0.5, 0.5, 0.5, 0.8]);
        for speed in [0.1, 0.13, 0.3, 0.7, 1.9, 2.5, 7.3, 15.9, 16.0] {
            let chain = atempo_chain(speed);
            assert!(chain.iter().all(|f| (0.5..=2.0).contains(f)), "{speed}");
            let product: f64 = chain.iter().product();
            assert!((product - speed).abs() < 1e-5, "{speed}: {chain:?}");
        }
    }

    #[test]
    fn modify_speed_retimes_video_and_audio_and_caps_the_frame_rate() {
        let args = modify_speed_args(4.0, &info(Some(25.0), true)).join(" ");
        assert!(args.contains("-map 0:v:0 -map 0:a:0"), "{args}");
        assert!(args.contains("setpts=PTS/4,fps=60/1,scale="), "{args}");
        assert!(args.contains("-af atempo=2,atempo=2 -c:a aac"), "{args}");
        assert!(args.ends_with("-movflags +faststart -f mp4"), "{args}");

        let args = modify_speed_args(0.5, &info(Some(25.0), false)).join(" ");
        assert!(args.contains("setpts=PTS/0.5,fps=25/2,scale="), "{args}");
        assert!(!args.contains("-enc_time_base"), "{args}");
        // A variable rate keeps its frame times.
        let mut vfr = info(Some(15.6), false);
        vfr.base_rate = Some(25.0);
        let args = modify_speed_args(2.0, &vfr).join(" ");
        assert!(args.contains("setpts=PTS/2,scale="), "{args}");
        assert!(args.contains("-fps_mode vfr -enc_time_base -1"), "{args}");
        assert!(!args.contains("0:a") && !args.contains("-af") && !args.contains("aac"));
        // Speed 1 needs no tempo change.
        let args = modify_speed_args(1.0, &info(Some(25.0), true)).join(" ");
        assert!(
            !args.contains("atempo") && args.contains("-c:a aac"),
            "{args}"
        );
    }

    #[test]
    fn video_to_gif_lowers_the_frame_rate_only_when_above_the_cap() {
        let args = video_to_gif_args(&info(Some(30.0), true)).join(" ");
        assert!(args.contains("setsar=1,fps=15,scale="), "{args}");
        assert!(args.contains("palettegen") && args.contains("paletteuse=dither=sierra2_4a"));
        assert!(args.ends_with("-loop 0 -f gif"), "{args}");
        let args = video_to_gif_args(&info(Some(10.0), true)).join(" ");
        assert!(args.contains("setsar=1,scale="), "{args}");
        assert!(args.contains("palettegen=stats_mode=diff"), "{args}");
    }

    #[test]
    fn video_to_gif_uses_a_palette_per_frame_when_the_clip_would_not_fit_in_memory() {
        // 1080p scaled to 480x270 at 15 fps: 518 400 bytes a frame, 1035 frames fit.
        let mut long = info(Some(30.0), false);
        (long.width, long.height) = (1920, 1080);
        long.duration = Some(60.0);
        let args = video_to_gif_args(&long).join(" ");
        assert!(args.contains("palettegen=stats_mode=diff"), "{args}");
        long.duration = Some(600.0);
        let args = video_to_gif_args(&long).join(" ");
        assert!(args.contains("palettegen=stats_mode=single"), "{args}");
        assert!(args.contains("paletteuse=new=1:"), "{args}");
    }

    #[test]
    fn audio_is_mapped_and_encoded_only_when_present() {
        let webm = video_to_webm_args(&info(None, true)).join(" ");
        assert!(
            webm.contains("-map 0:a:0") && webm.contains("-c:a libopus"),
            "{webm}"
        );
        assert!(webm.contains("-deadline realtime -cpu-used 8 -row-mt 1 -b:v 0 -crf 35"));
        let webm = video_to_webm_args(&info(None, false)).join(" ");
        assert!(!webm.contains("0:a") && !webm.contains("libopus"), "{webm}");
        let ogg = video_to_ogg_args(&info(None, true)).join(" ");
        assert!(
            ogg.contains("-c:v libtheora") && ogg.contains("-c:a libvorbis"),
            "{ogg}"
        );
        let ogg = video_to_ogg_args(&info(None, false)).join(" ");
        assert!(!ogg.contains("libvorbis"), "{ogg}");
    }

    #[test]
    fn every_video_output_starts_with_square_pixels() {
        let i = info(Some(25.0), true);
        for args in [
            modify_speed_args(2.0, &i),
            video_to_gif_args(&i),
            video_to_ogg_args(&i),
            video_to_webm_args(&i),
            extract_frames_args(10),
        ] {
            let args = args.join(" ");
            assert!(args.contains(SQUARE_PIXELS), "{args}");
        }
    }

    #[test]
    fn input_args_force_the_demuxer_and_the_file_protocol() {
        let input = MediaFile {
            path: "/tmp/-x|concat:y".into(),
            format: MediaFormat::Mov,
        };
        let args: Vec<String> = input_args(&input, 600.0)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let args = args.join(" ");
        assert!(args.starts_with("-nostdin "), "{args}");
        assert!(
            args.contains("-protocol_whitelist file -t 600 -f mov -i file:/tmp/-x|concat:y"),
            "{args}"
        );
        assert!(args.contains("-progress pipe:1"), "{args}");
    }

    #[test]
    fn the_duration_is_the_longest_the_container_streams_or_frames_admit_to() {
        let json = br#"{"format": {"format_name": "mov", "duration": "1.0"},
            "streams": [
              {"index": 0, "codec_type": "video", "width": 16, "height": 16,
               "avg_frame_rate": "25/1", "r_frame_rate": "25/1", "nb_frames": "5000",
               "duration": "3.0"},
              {"index": 1, "codec_type": "audio", "duration": "150.0"}]}"#;
        let info = VideoInfo::from_probe(&probe::parse(json).unwrap()).unwrap();
        // 5000 frames at 25 fps: 200 s, though the container says 1 s.
        assert_eq!(info.duration, Some(200.0));
        let limits = VideoLimits {
            max_seconds: 60.0,
            max_pixels: 1 << 20,
            max_frames: 100_000,
        };
        assert!(matches!(
            info.check(&limits),
            Err(MediaError::VideoTooLong { seconds, .. }) if seconds == 200.0
        ));
    }

    #[test]
    fn limits_are_checked_in_turn_with_the_value_found() {
        let limits = VideoLimits {
            max_seconds: 1.0,
            max_pixels: 160 * 120,
            max_frames: 10,
        };
        let mut v = info(Some(25.0), false);
        assert!(matches!(
            v.check(&limits),
            Err(MediaError::VideoTooLong { seconds, .. }) if seconds == 2.0
        ));
        v.duration = None;
        assert!(matches!(
            v.check(&limits),
            Err(MediaError::TooManyFrames {
                frames: 50,
                limit: 10,
                ..
            })
        ));
        v.width = 161;
        assert!(matches!(
            v.check(&limits),
            Err(MediaError::VideoTooLarge { width: 161, .. })
        ));
        v.width = 160;
        v.frames = Some(10);
        assert!(v.check(&limits).is_ok());
    }
}
