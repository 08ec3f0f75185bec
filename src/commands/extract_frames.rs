//! `extract-frames`: every frame of a video as a WebP (lossy q80), in order; at most
//! `--max-extract-frames` of them (`TooManyFrames`, checked from the probe before
//! extracting, and again on what was written).

use std::path::{Path, PathBuf};

use super::{Prediction, Shape, VIDEOS};
use crate::media::probe::file_url;
use crate::media::transcode::{self, input_args, SQUARE_PIXELS};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn};

pub const NAME: &str = "extract-frames";
pub const INPUTS: &[MediaFormat] = VIDEOS;
pub const OUTPUT: MediaFormat = MediaFormat::Webp;

/// One still image per frame: exactly as many as the input has when that is known,
/// at least one otherwise.
pub fn predict(input: Shape) -> Prediction {
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
    }
}

pub async fn run(
    media: &Media,
    input: &MediaFile,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let info = transcode::inspect(media, input, INPUTS).await?;
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
    let result = transcode::run_ffmpeg(
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

/// `extract-frames` arguments after the input: every decoded frame, none dropped or
/// repeated, at most `max_frames` of them.
fn extract_frames_args(max_frames: u64) -> Vec<String> {
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

    #[test]
    fn every_frame_is_kept_as_it_comes_with_square_pixels() {
        let args = extract_frames_args(10).join(" ");
        assert!(args.contains(SQUARE_PIXELS), "{args}");
        assert!(
            args.contains("-fps_mode passthrough -frames:v 10"),
            "{args}"
        );
        assert!(args.ends_with("-quality 80 -f image2"), "{args}");
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
