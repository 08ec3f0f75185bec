//! `extract-frames`: every frame of a video as a WebP (lossy q80), in order; at most
//! `--max-extract-frames` of them (`TooManyFrames`, checked from the probe before
//! extracting, and again on what was written). ffmpeg decodes (and scales, when
//! `resize-image` follows); the frames are encoded on every core in this process
//! (`media::frames`).

use std::path::Path;

use crate::commands::formats::VIDEOS;
use crate::commands::options::Options;
use crate::commands::registry::Command;
use crate::commands::spec::{CommandDef, CommandSpec, Prediction, Shape};
use crate::media::ffmpeg::transcode::quiet_input_args;
use crate::media::video::frames::{self, FrameOutput};
use crate::media::video::hdr::{shown_pictures, tone_map_head};
use crate::media::video::info::VideoInfo;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

const INPUTS: &[MediaFormat] = VIDEOS;
const OUTPUT: MediaFormat = MediaFormat::Webp;

pub struct ExtractFrames;

impl CommandDef for ExtractFrames {
    const SPEC: CommandSpec = CommandSpec {
        name: "extract-frames",
        summary: "Every frame of a video as a WebP image, in order.",
        inputs: INPUTS,
        options: &[],
        output: Some(OUTPUT),
        in_process: false,
    };

    fn predict(input: Shape, _options: &Options) -> Prediction {
        predict(input)
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        _options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        run(media, input, out_dir, progress).await
    }
}

/// One still image per frame: exactly as many as the input has when that is known,
/// at least one otherwise.
fn predict(input: Shape) -> Prediction {
    let still = Shape {
        size: input.size,
        frames: Some(1),
        seconds: None,
    };
    Prediction {
        files: input.frames.unwrap_or(1).max(1),
        exact: input.frames.is_some(),
        format: Some(OUTPUT),
        shape: still,
        beside: None,
    }
}

async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    run_into(media, input, FrameOutput::WebpStill, out_dir, progress).await
}

/// Every frame of `input`, each made into `output`: a WebP still for this command on
/// its own, the resized picture when `resize-image` follows (see `media::frames`).
pub(crate) async fn run_into(
    media: &Media,
    input: &MediaFile,
    output: FrameOutput,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
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
    // One frame past the limit is allowed to be written, so that a container that
    // under-reports its frames is still caught below.
    let size = output.size(info.shown)?;
    let mut args = quiet_input_args(input, media.config().max_video_seconds);
    args.extend(
        decode_args(limit + 1, size, &info)
            .into_iter()
            .map(Into::into),
    );
    let expected = info.frames.unwrap_or(0) as f64;
    let on_frame = |n: u64| {
        if expected > 0.0 {
            progress((n as f64 / expected).min(1.0));
        }
    };
    let mut frames = Vec::new();
    let result = media
        .runner()
        .run_reading(&media.config().ffmpeg, args, |pipe| async {
            frames::widen_pipe(&pipe);
            frames = frames::encode_all(pipe, info.matrix, output, &dir, &on_frame).await?;
            Ok(())
        })
        .await;
    match result {
        Ok(()) if frames.len() as u64 > limit => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(too_many(frames.len() as u64))
        }
        Ok(()) if frames.is_empty() => Err(MediaError::InvalidMedia(
            "no frame of it could be decoded".into(),
        )),
        Ok(()) => Ok(frames),
        Err(e) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(e)
        }
    }
}

/// ffmpeg arguments after the input: every decoded frame, none dropped or repeated,
/// at most `max_frames` of them, as raw 8-bit 4:2:0 pictures in limited range on
/// stdout, with square pixels at the size they are `shown` at, or scaled to `size`.
fn decode_args(max_frames: u64, size: Option<(u32, u32)>, info: &VideoInfo) -> Vec<String> {
    let shown = info.shown;
    let scale = match size {
        None => format!("{},scale=out_range=tv", shown_pictures(info)),
        // One pass squares and scales, with `resize-image`'s filters: Lanczos (3
        // lobes) to shrink, Catmull-Rom (bicubic, B 0, C 0.5) to enlarge.
        Some((w, h)) => {
            let flags = if w <= shown.0 && h <= shown.1 {
                "lanczos"
            } else {
                "bicubic:param0=0:param1=0.5"
            };
            let head = tone_map_head(info);
            format!("{head}scale={w}:{h}:flags={flags}:out_range=tv,setsar=1")
        }
    };
    [
        "-map",
        "0:v:0",
        "-vf",
        &format!("{scale},format=yuv420p"),
        "-fps_mode",
        "passthrough",
        "-frames:v",
        &max_frames.to_string(),
        "-f",
        "yuv4mpegpipe",
        "pipe:1",
    ]
    .map(String::from)
    .to_vec()
}

/// Two commands that run as one step when they follow each other in a pipeline, the
/// files between them never written: `extract-frames` then `resize-image` decode the
/// video once and resize each raw frame, with no lossy WebP generation in between
/// (and no encoding and decoding of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fused {
    pub first: Command,
    pub then: Command,
}

impl Fused {
    /// The pair `first`, `then` if they fuse.
    pub fn of(first: Command, then: Command) -> Option<Fused> {
        matches!(
            (first, then),
            (Command::ExtractFrames, Command::ResizeImage)
        )
        .then_some(Fused { first, then })
    }

    /// The work of both commands on an input of `work`: the second runs on each of
    /// the first's outputs.
    pub fn cost(self, work: Work, options: &Options) -> u64 {
        let frame = Work {
            pixels: work.pixels,
            frames: 1,
        };
        let then = self.then.cost(frame, options);
        let first = self.first.cost(work, options);
        first.saturating_add(then.saturating_mul(work.frames.max(1)))
    }

    /// Runs both commands on `input` as one step; the outputs are the second's.
    pub async fn run(
        self,
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        self.first.check_input(input)?;
        let max_pixels = media.config().max_image_pixels;
        let Some(frames) = super::resize_image::frame_output(options, max_pixels) else {
            // A box is not done in the fused step: each frame is resized as a file.
            let frames = self
                .first
                .run(media, input, options, out_dir, progress)
                .await?;
            let mut outputs = Vec::with_capacity(frames.len());
            for frame in &frames {
                let none: ProgressFn<'_> = &|_| {};
                outputs.extend(self.then.run(media, frame, options, out_dir, none).await?);
                std::fs::remove_file(&frame.path)?;
            }
            return Ok(outputs);
        };
        run_into(media, input, frames, out_dir, progress).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::ffmpeg::transcode::SQUARE_PIXELS;

    fn shown(shown: (u32, u32)) -> VideoInfo {
        VideoInfo {
            shown,
            ..VideoInfo::default()
        }
    }

    #[test]
    fn every_frame_is_kept_as_it_comes_with_square_pixels() {
        let args = decode_args(10, None, &shown((64, 48))).join(" ");
        assert!(args.contains(SQUARE_PIXELS), "{args}");
        assert!(
            args.contains("-fps_mode passthrough -frames:v 10"),
            "{args}"
        );
        assert!(args.ends_with("-f yuv4mpegpipe pipe:1"), "{args}");
    }

    #[test]
    fn frames_to_resize_are_scaled_by_ffmpeg_with_resize_image_s_filters() {
        let shrunk = decode_args(10, Some((16, 12)), &shown((64, 48))).join(" ");
        assert!(
            shrunk.contains("-vf scale=16:12:flags=lanczos:out_range=tv,setsar=1,format=yuv420p"),
            "{shrunk}"
        );
        assert!(!shrunk.contains(SQUARE_PIXELS), "one pass: {shrunk}");
        let enlarged = decode_args(10, Some((128, 96)), &shown((64, 48))).join(" ");
        assert!(
            enlarged.contains("flags=bicubic:param0=0:param1=0.5"),
            "{enlarged}"
        );
    }

    #[test]
    fn a_video_of_known_frames_predicts_exactly_that_many_stills() {
        let clip = Shape {
            size: Some((64, 48)),
            frames: Some(125),
            seconds: Some(5.0),
        };
        let predicted = predict(clip);
        assert_eq!((predicted.files, predicted.exact), (125, true));
        assert_eq!(predicted.shape.frames, Some(1));
        let unknown = predict(Shape::default());
        assert_eq!((unknown.files, unknown.exact), (1, false));
    }
}
