//! What an edit would make of its sources, predicted from their headers by each
//! command's own prediction (`Command::predict`): the body of a dry run
//! (`POST /v1/edits?dryRun=true`, docs/API.md). It refuses what the edit would
//! fail with before any pixel is decoded: an input a command does not take, an image
//! past the pixel limit, a resize to nothing or past the limit, too many outputs.

use crate::commands::{Command, Options, Shape};
use crate::error_code::Code;
use crate::media::{MediaError, MediaFormat};

/// A source as its headers describe it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourceInfo {
    pub format: MediaFormat,
    pub width: u32,
    pub height: u32,
    /// Seconds, for videos and animations.
    pub duration: Option<f64>,
    /// Frames, for videos and animations.
    pub frames: Option<u64>,
}

/// The files one source would become.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputPlan {
    pub format: MediaFormat,
    pub size: Option<(u32, u32)>,
    pub duration: Option<f64>,
    /// How many files (at least, where a command cannot know before it runs).
    pub count: u64,
}

/// The limits a plan is held to: the server's.
#[derive(Debug, Clone, Copy)]
pub struct PlanLimits {
    pub max_image_pixels: u64,
    pub max_outputs: u64,
}

/// Why the edit would fail: at which command (`None`: the source), and the error.
#[derive(Debug)]
pub enum PlanError {
    Media(Option<usize>, MediaError),
    TooManyOutputs(u64),
}

impl PlanError {
    pub fn code(&self) -> Code {
        match self {
            PlanError::Media(_, e) => e.code(),
            PlanError::TooManyOutputs(_) => Code::TooManyOutputs,
        }
    }
}

/// Runs `commands` over `source` in prediction only: the files it would become, by
/// format, in the order the edit writes them (a storyboard's sheet, then its VTT; an
/// HLS master, then its DASH manifest).
pub fn plan_asset(
    commands: &[Command],
    options: &Options,
    source: &SourceInfo,
    limits: PlanLimits,
) -> Result<Vec<OutputPlan>, PlanError> {
    let still = source.format.is_image();
    let mut format = source.format;
    let mut shape = Shape {
        size: Some((source.width, source.height)),
        frames: if still { Some(1) } else { source.frames },
        seconds: if still { None } else { source.duration },
    };
    let mut count: u64 = 1;
    // The last command's file beside its others, and how many of them there are.
    let mut beside = None;
    for (c, command) in commands.iter().enumerate() {
        let at = |e: MediaError| PlanError::Media(Some(c), e);
        let Some(output) = command.output(format, options) else {
            return Err(at(MediaError::unsupported(format, command.inputs())));
        };
        if format.is_image() {
            let (w, h) = shape.size.unwrap_or_default();
            let pixels = u64::from(w) * u64::from(h);
            if pixels > limits.max_image_pixels {
                return Err(at(MediaError::ImageTooLarge {
                    width: w.into(),
                    height: h.into(),
                    limit: limits.max_image_pixels,
                }));
            }
        }
        if let Some(refused) = command.refuse(shape, options) {
            return Err(at(refused));
        }
        let predicted = command.predict(shape, options);
        let beside_size = predicted.beside.map(|b| (b.format, b.size));
        for (made, size) in [(output, predicted.shape.size)]
            .into_iter()
            .chain(beside_size)
        {
            let Some((w, h)) = size else { continue };
            if w == 0 || h == 0 {
                return Err(at(MediaError::OutputTooSmall));
            }
            let pixels = u64::from(w) * u64::from(h);
            if made.is_image() && pixels > limits.max_image_pixels {
                return Err(at(MediaError::OutputTooLarge {
                    width: w.into(),
                    height: h.into(),
                    limit: limits.max_image_pixels,
                }));
            }
        }
        beside = predicted.beside.map(|b| (b, count));
        count = count.saturating_mul(predicted.files);
        if count > limits.max_outputs {
            return Err(PlanError::TooManyOutputs(count));
        }
        format = output;
        shape = predicted.shape;
    }
    let beside_count = beside.map_or(0, |(_, n)| n);
    let last = OutputPlan {
        format,
        size: shape.size,
        duration: if format.is_image() {
            None
        } else {
            shape.seconds
        },
        count: count - beside_count,
    };
    let after = beside.is_some_and(|(b, _)| b.after);
    let beside = beside.map(|(b, n)| OutputPlan {
        format: b.format,
        size: b.size,
        duration: None,
        count: n,
    });
    Ok(match after {
        true => [last].into_iter().chain(beside).collect(),
        false => beside.into_iter().chain([last]).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: PlanLimits = PlanLimits {
        max_image_pixels: 100_000_000,
        max_outputs: 1000,
    };

    fn photo() -> SourceInfo {
        SourceInfo {
            format: MediaFormat::Jpeg,
            width: 4000,
            height: 3000,
            duration: None,
            frames: None,
        }
    }

    #[test]
    fn a_resize_then_a_video_is_predicted_from_the_options() {
        let options = Options::of(&[
            ("scale", 0.5.into()),
            ("duration", 4.0.into()),
            ("fps", 25.0.into()),
        ]);
        let commands = [
            Command::ResizeImage,
            Command::ImageToVideo,
            Command::ExtractFrames,
        ];
        let [plan] = &plan_asset(&commands, &options, &photo(), LIMITS).unwrap()[..] else {
            panic!("one kind of output")
        };
        assert_eq!(plan.format, MediaFormat::Webp);
        assert_eq!(plan.size, Some((2000, 1500)));
        assert_eq!(plan.count, 100, "4 s at 25 fps, one file a frame");
        assert_eq!(plan.duration, None);
    }

    #[test]
    fn what_the_edit_would_fail_with_is_found_at_its_command() {
        let video = [Command::VideoToWebm];
        let error = plan_asset(&video, &Options::default(), &photo(), LIMITS).unwrap_err();
        assert!(matches!(
            error,
            PlanError::Media(Some(0), MediaError::UnsupportedInputFormat { .. })
        ));
        let tiny = Options::of(&[("scale", 0.0001.into())]);
        let error = plan_asset(&[Command::ResizeImage], &tiny, &photo(), LIMITS).unwrap_err();
        assert_eq!(error.code(), Code::OutputTooSmall);
        let small = PlanLimits {
            max_image_pixels: 1_000_000,
            ..LIMITS
        };
        let error = plan_asset(
            &[Command::ImageToWebp],
            &Options::default(),
            &photo(),
            small,
        )
        .unwrap_err();
        assert_eq!(error.code(), Code::ImageTooLarge);
    }

    #[test]
    fn a_storyboard_is_predicted_as_its_sheet_and_its_vtt() {
        let clip = SourceInfo {
            format: MediaFormat::Mp4,
            width: 640,
            height: 360,
            duration: Some(3.0),
            frames: Some(90),
        };
        let storyboard = [Command::VideoStoryboard];
        let plan = plan_asset(&storyboard, &Options::default(), &clip, LIMITS).unwrap();
        assert_eq!(plan.len(), 2, "{plan:?}");
        assert_eq!((plan[0].format, plan[0].count), (MediaFormat::Jpeg, 1));
        assert!(plan[0].size.is_some(), "the sheet has a size");
        assert_eq!((plan[1].format, plan[1].count), (MediaFormat::Vtt, 1));
        assert_eq!(plan[1].size, None, "a VTT has no size");
        let webp = Options::of(&[("format", "webp".into())]);
        let plan = plan_asset(&storyboard, &webp, &clip, LIMITS).unwrap();
        assert_eq!(plan[0].format, MediaFormat::Webp);
    }
}
