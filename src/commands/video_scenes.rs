//! `video-scenes`: the shots of a video, for chapters and a row of pictures on its
//! page — one poster per scene (the scene's best frame, picked as `video-poster`
//! picks its own, and made as it makes them), then a WebVTT chapters file with one
//! cue per scene (`Scene N`) from its first frame to the next scene's.
//!
//! A cut is a change of the picture's content past `threshold` that stands out of the
//! frames around it, so fades and pans are not cuts; shots shorter than
//! `minSceneSeconds` are merged into the one before (`media::video::scenes`, which
//! reads the video once, shrunk, on every core). At most 400 scenes: past that the
//! weakest cuts are dropped.

use std::path::Path;

use super::options::{OptionKind, OptionSpec, Options};
use super::video_poster::{stills_at, FORMAT};
use super::vtt::timestamp;
use crate::commands::formats::VIDEOS;
use crate::commands::spec::{Beside, CommandDef, CommandSpec, Prediction, Shape};
use crate::media::image::quality::Quality;
use crate::media::video::info::VideoInfo;
use crate::media::video::scenes::{self, Scenes, Settings};
use crate::media::video::stills::Frames;
use crate::media::{ImageFormat, Media, MediaError, MediaFile, MediaFormat, ProgressFn};

const INPUTS: &[MediaFormat] = VIDEOS;

pub const THRESHOLD: OptionSpec = OptionSpec {
    name: "threshold",
    doc: "video-scenes, video-storyboard (at: scenes): the least change of the picture between two frames that is a cut: the mean change of hue, chroma and value, 0–255 (default 27).",
    kind: OptionKind::Number {
        min: 1.0,
        min_inclusive: true,
        max: 255.0,
        integer: false,
        default: Some(27.0),
    },
};

pub const MIN_SCENE_SECONDS: OptionSpec = OptionSpec {
    name: "minSceneSeconds",
    doc: "video-scenes, video-storyboard (at: scenes): shots shorter than this are merged into the one before (0–600 s; default 1).",
    kind: OptionKind::Number {
        min: 0.0,
        min_inclusive: true,
        max: 600.0,
        integer: false,
        default: Some(1.0),
    },
};

/// Share of the progress the analysis takes; the posters take the rest.
const ANALYSIS_SHARE: f64 = 0.8;

pub struct VideoScenes;

impl CommandDef for VideoScenes {
    const SPEC: CommandSpec = CommandSpec {
        name: "video-scenes",
        summary: "The shots of a video: one poster per scene (its best frame) as WebP, JPEG, \
                  PNG or AVIF, then a WebVTT chapters file with a cue per scene.",
        inputs: INPUTS,
        options: &[&THRESHOLD, &MIN_SCENE_SECONDS, &FORMAT],
        // The last output: nothing reads a VTT, so nothing follows it.
        output: Some(MediaFormat::Vtt),
        in_process: false,
    };

    /// The chapters, and beside them at least one poster of the displayed size.
    fn predict(input: Shape, options: &Options) -> Prediction {
        Prediction {
            files: 2,
            exact: false,
            format: Some(MediaFormat::Vtt),
            shape: Shape {
                size: None,
                frames: Some(1),
                seconds: None,
            },
            beside: Some(Beside {
                format: poster_format(options).media_format(),
                size: input.size,
                after: false,
            }),
        }
    }

    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        let info = crate::media::video::inspect::inspect(media, input, INPUTS).await?;
        let analysis = |f: f64| progress(f * ANALYSIS_SHARE);
        let found = scenes::detect(media, input, &info, settings(options), &analysis).await?;
        let mut made = posters(media, input, &info, &found, options, out_dir, progress).await?;
        let vtt = crate::media::output_path(out_dir, MediaFormat::Vtt);
        let written = tokio::fs::write(&vtt, chapters(&found, &info)).await;
        if let Err(e) = written {
            for file in &made {
                let _ = tokio::fs::remove_file(&file.path).await;
            }
            return Err(e.into());
        }
        made.push(MediaFile {
            path: vtt,
            format: MediaFormat::Vtt,
        });
        Ok(made)
    }
}

/// The detection settings the options give (`video-storyboard` reads them too).
pub(crate) fn settings(options: &Options) -> Settings {
    Settings {
        threshold: options.number(&THRESHOLD),
        min_seconds: options.number(&MIN_SCENE_SECONDS),
    }
}

fn poster_format(options: &Options) -> ImageFormat {
    options.image_format(&FORMAT).unwrap_or(ImageFormat::Webp)
}

/// The second a scene's frame `frame` is taken at: a quarter of a frame in, so the
/// frame shown then is that frame and not the one before it, whatever the rounding.
pub(crate) fn frame_time(found: &Scenes, frame: u64) -> f64 {
    found.seconds(frame) + found.seconds(1) / 4.0
}

/// One poster per scene, in order: the frames decoded by a seek each, a batch of them
/// an ffmpeg run (`video_poster::stills_at`); none left behind on failure.
async fn posters(
    media: &Media,
    input: &MediaFile,
    info: &VideoInfo,
    found: &Scenes,
    options: &Options,
    out_dir: &Path,
    progress: ProgressFn<'_>,
) -> Result<Vec<MediaFile>, MediaError> {
    let bests = found.scenes.iter().map(|s| s.best);
    let seeks: Option<Vec<f64>> = bests.clone().map(|best| found.seek(best)).collect();
    let times: Vec<f64> = bests.map(|best| frame_time(found, best)).collect();
    let frames = match &seeks {
        Some(seeks) => Frames::SeekedTo(seeks),
        None => Frames::ShownAt(&times),
    };
    let encoding = |f: f64| progress(ANALYSIS_SHARE + (1.0 - ANALYSIS_SHARE) * f);
    // Quick: six to hundreds of full-size stills, whose encodes are most of the
    // posters' time (docs/PERFORMANCE.md).
    let written = (poster_format(options), Quality::Quick);
    stills_at(media, input, info, frames, written, out_dir, &encoding).await
}

/// The WebVTT chapters: one cue per scene, `Scene N`, end to end; the last ends with
/// the video.
fn chapters(found: &Scenes, info: &VideoInfo) -> String {
    let mut out = String::from("WEBVTT\n");
    for (n, (start, stop)) in found.spans_ms(info.duration).into_iter().enumerate() {
        out.push_str(&format!(
            "\n{}\n{} --> {}\nScene {}\n",
            n + 1,
            timestamp(start),
            timestamp(stop),
            n + 1
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::scenes::Scene;
    use serde_json::json;

    #[test]
    fn chapters_cover_the_video_scene_by_scene() {
        let scene = |start, end| Scene {
            start,
            end,
            best: start,
        };
        let found = Scenes {
            rate_milli: 25_000,
            scenes: vec![scene(0, 50), scene(50, 130), scene(130, 150)],
            origin: None,
        };
        let info = VideoInfo {
            duration: Some(6.02),
            ..VideoInfo::default()
        };
        let vtt = chapters(&found, &info);
        assert_eq!(
            vtt,
            "WEBVTT\n\n1\n00:00:00.000 --> 00:00:02.000\nScene 1\n\
             \n2\n00:00:02.000 --> 00:00:05.200\nScene 2\n\
             \n3\n00:00:05.200 --> 00:00:06.020\nScene 3\n"
        );
        assert!((frame_time(&found, 50) - 2.01).abs() < 1e-9);
    }

    #[test]
    fn the_plan_is_posters_then_chapters() {
        let clip = Shape {
            size: Some((64, 48)),
            frames: Some(100),
            seconds: Some(4.0),
        };
        let jpeg = Options::of(&[("format", json!("jpeg"))]);
        let predicted = VideoScenes::predict(clip, &jpeg);
        assert_eq!(predicted.format, Some(MediaFormat::Vtt));
        let beside = predicted.beside.unwrap();
        assert_eq!(
            (beside.format, beside.size),
            (MediaFormat::Jpeg, Some((64, 48)))
        );
        let defaults = settings(&Options::default());
        assert_eq!((defaults.threshold, defaults.min_seconds), (27.0, 1.0));
    }
}
