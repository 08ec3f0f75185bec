//! `image-to-video`: an H.264 MP4 showing a still image for `duration` seconds at
//! `fps`: `max(1, round(duration*fps))` frames at exactly `fps`, the upright image's
//! size rounded down to even (scaled down first to fit 3840x2160 or 2160x3840),
//! transparency flattened onto white.
//!
//! ffmpeg's own `-loop 1` decodes, scales and converts the picture once per output
//! frame (7.7 s for 5 s of a 12 MP image). Here the picture is decoded, oriented and
//! resized once in-process, converted to 4:2:0 YCbCr (BT.709, limited range) on every
//! core, handed to ffmpeg as one raw frame, and `tpad` clones it: x264 then encodes
//! near-identical frames almost for free.

use std::ffi::OsString;
use std::path::Path;

use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;

use super::options::{OptionSpec, Options};
use crate::commands::formats::IMAGES;
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::error_code::Code;
use crate::media::ffmpeg::input::file_url;
use crate::media::image::ops::{flatten_onto_white, image_input};
use crate::media::image::pipeline::load_upright;
use crate::media::image::yuv::{Matrix, Yuv420};
use crate::media::video::h264::{video_size, FrameRate, BT709_TAGS};
use crate::media::{
    blocking, output_path, Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work,
};

const OUTPUT: MediaFormat = MediaFormat::Mp4;

pub const FPS: OptionSpec = OptionSpec::number(
    "fps",
    "Frames per second of the video (more than 0, at most 120; default 25).",
    0.0,
    120.0,
    25.0,
);
pub const DURATION: OptionSpec = OptionSpec::number(
    "duration",
    "Seconds the video lasts (more than 0, at most 600; default 5).",
    0.0,
    600.0,
    5.0,
);

pub struct ImageToVideo;

impl CommandDef for ImageToVideo {
    const SPEC: CommandSpec = CommandSpec {
        name: "image-to-video",
        summary: "A still image as an H.264 MP4 lasting `duration` seconds at `fps`.",
        inputs: IMAGES,
        options: &[&FPS, &DURATION],
        output: Some(OUTPUT),
        in_process: false,
    };

    /// One video of [`frames`] frames at the image's size fitted to 4K.
    fn predict(input: Shape, options: &Options) -> Prediction {
        let (fps, _) = fps_and_duration(options);
        let frames = frames(options);
        let shape = Shape {
            size: input.size.map(|(w, h)| video_size(w, h)),
            frames: Some(frames),
            seconds: Some(frames as f64 / fps),
        };
        Prediction::one(Some(OUTPUT), shape)
    }

    /// Encoding one frame of the image per output frame.
    fn cost(work: Work, options: &Options) -> u64 {
        work.pixels.saturating_mul(frames(options))
    }

    /// A video of `duration` at `fps` has at least one frame.
    fn check(options: &Options) -> Result<(), OptionProblem> {
        let (fps, duration) = fps_and_duration(options);
        if (fps * duration).round() >= 1.0 {
            return Ok(());
        }
        Err(OptionProblem {
            code: Code::OptionOutOfRange,
            option: if options.has(&DURATION) {
                "duration"
            } else {
                "fps"
            },
            detail: format!(
                "A video of {duration} s at {fps} fps has no frame; duration × fps must be at least 0.5."
            ),
        })
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        _progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        Ok(vec![run(media, input, options, out_dir).await?])
    }
}

fn fps_and_duration(options: &Options) -> (f64, f64) {
    (options.number(&FPS), options.number(&DURATION))
}

/// The frames the video has: exactly `round(duration × fps)`, at least one.
pub fn frames(options: &Options) -> u64 {
    let (fps, duration) = fps_and_duration(options);
    ((duration * fps).round() as u64).max(1)
}

async fn run(
    media: &Media,
    input: &MediaFile,
    options: &Options,
    out_dir: &Path,
) -> Result<MediaFile, MediaError> {
    let (fps, duration) = fps_and_duration(options);
    let format = image_input(input)?;
    let rate = FrameRate::from_fps(fps).ok_or(MediaError::InvalidParameter {
        name: "fps",
        expected: "a positive number of frames per second",
    })?;
    if !(duration.is_finite() && duration > 0.0) {
        return Err(MediaError::InvalidParameter {
            name: "duration",
            expected: "a positive number of seconds",
        });
    }
    let frames = rate.frames_for(duration);
    let limit = media.config().max_image_pixels;

    // The size is known from the header, before decoding: ffmpeg starts then (its
    // libraries load, x264 sets up) while the picture is decoded and converted, and
    // reads the frame from its stdin.
    let (size_known, size) = tokio::sync::oneshot::channel();
    let path = input.path.clone();
    let memory = media.memory().clone();
    let prepare = blocking(move || {
        let bytes = std::fs::read(&path)?;
        let sized = |w, h| {
            let size = video_size(w, h);
            let _ = size_known.send(size);
            Ok(size)
        };
        let (image, _lease) = load_upright(&bytes, format, limit, sized, &memory)?;
        drop(bytes);
        let rgb = flatten_onto_white(image);
        Ok(Yuv420::from_rgb(&rgb, Matrix::Bt709))
    });
    tokio::pin!(prepare);
    // Polling `prepare` starts it; the size arrives before it can end well. A small
    // picture may be ready by the time the size is read: then it is kept, not polled
    // again.
    let mut ready = None;
    let (width, height) = tokio::select! {
        biased;
        size = size => match size {
            Ok(size) => size,
            // The header was refused: the preparation says why.
            Err(_) => return Err(prepare.await.err().unwrap_or_else(refused_without_cause)),
        },
        prepared = &mut prepare => {
            let yuv = prepared?;
            let size = (yuv.width, yuv.height);
            ready = Some(yuv);
            size
        }
    };

    let output = output_path(out_dir, MediaFormat::Mp4);
    let args = ffmpeg_args(width, height, rate, frames, &output);
    let feed = |mut stdin: ChildStdin| async move {
        let yuv = match ready {
            Some(yuv) => yuv,
            None => prepare.await?,
        };
        for plane in [&yuv.y, &yuv.u, &yuv.v] {
            stdin.write_all(plane).await?;
        }
        Ok(())
    };
    let result = media
        .runner()
        .run_fed(&media.config().ffmpeg, args, feed)
        .await;
    if let Err(e) = result {
        // Best effort: a partial MP4 must not be mistaken for an output.
        let _ = tokio::fs::remove_file(&output).await;
        return Err(e);
    }
    Ok(MediaFile {
        path: output,
        format: MediaFormat::Mp4,
    })
}

/// The preparation ended without giving a size, yet without an error: a fault of ours.
fn refused_without_cause() -> MediaError {
    MediaError::Io(std::io::Error::other("the picture was not prepared"))
}

/// The ffmpeg command line for one raw 4:2:0 frame, read from stdin, shown for
/// `frames` frames.
///
/// - The input format is given explicitly (`rawvideo`, size, rate): ffmpeg probes nothing.
/// - `tpad` clones the frame `frames - 1` times; `-frames:v` and `-r` pin the count and
///   the stream rate, so the duration is exactly `frames / rate`.
/// - BT.709 matrix, limited range, and the same tags in the stream, so players convert
///   the colours back the way they were converted.
/// - x264 `veryfast` with `stillimage` tuning: identical frames cost almost nothing
///   to encode, so a slower preset buys next to no size.
/// - `+faststart` moves the index before the media data, so playback can start while
///   downloading.
fn ffmpeg_args(
    width: u32,
    height: u32,
    rate: FrameRate,
    frames: u64,
    output: &Path,
) -> Vec<OsString> {
    let rate = rate.to_ffmpeg();
    // The frame comes as 4:2:0 already (converted on every core here, where ffmpeg's
    // `scale` converts on its one filter thread): `tpad` clones it as it is. A `copy`
    // after `tpad` was needed while `scale` made the frame (the encoder copied the
    // shared clone into a fresh 9 MB mapping per frame, 1.3 s of system time); the
    // decoder's own frame needs none, and `copy` would cost 0.1 s (measured, 2880x2160).
    let filters = format!("tpad=stop={}:stop_mode=clone", frames - 1);
    let mut args: Vec<OsString> = [
        "-nostdin",
        "-hide_banner",
        "-loglevel",
        "error",
        "-n",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "yuv420p",
        "-s",
        &format!("{width}x{height}"),
        "-framerate",
        &rate,
        "-i",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    // The frame, from stdin (see `run`).
    args.push("pipe:0".into());
    args.extend(
        [
            "-vf",
            &filters,
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-tune",
            "stillimage",
            "-crf",
            "23",
        ]
        .iter()
        .map(OsString::from),
    );
    args.extend(BT709_TAGS.iter().map(OsString::from));
    args.extend(
        [
            "-r",
            &rate,
            "-frames:v",
            &frames.to_string(),
            "-movflags",
            "+faststart",
            "-f",
            "mp4",
        ]
        .iter()
        .map(OsString::from),
    );
    args.push(file_url(output));
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_video_has_at_least_one_frame() {
        let options = |fps: f64, duration: f64| {
            let mut options = Options::default();
            options.set("fps", fps.into());
            options.set("duration", duration.into());
            options
        };
        assert_eq!(frames(&options(1.0, 0.2)), 1);
        assert_eq!(frames(&options(30.0, 0.5)), 15);
    }

    #[test]
    fn the_video_has_round_duration_times_fps_frames_at_the_fitted_size() {
        let mut options = Options::default();
        options.set("fps", 10.0.into());
        options.set("duration", 3.0.into());
        let image = Shape {
            size: Some((5000, 3001)),
            frames: Some(1),
            seconds: None,
        };
        let predicted = ImageToVideo::predict(image, &options);
        assert_eq!(predicted.shape.frames, Some(30));
        assert_eq!(predicted.shape.seconds, Some(3.0));
        assert_eq!(predicted.shape.size, Some((3598, 2160)));
        let work = Work {
            pixels: 1000,
            frames: 1,
        };
        assert_eq!(ImageToVideo::cost(work, &options), 30_000);
    }
}
