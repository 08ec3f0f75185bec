//! The command library: one file per command, owning everything about it — its wire
//! name, the formats it takes and makes, its options (ranges, defaults), the
//! prediction of its outputs, its cost, and its execution (an ffmpeg recipe or image
//! steps over the shared capabilities of `media`), with its unit tests.
//!
//! This file is the closed set and its registry: [`Command`] dispatches each question
//! to the command's own file. Adding a command is one new file, one variant and its
//! arms in the matches below.

mod extract_frames;
mod gif_to_video;
mod image_to_video;
mod image_to_webp;
mod modify_video_speed;
mod options;
mod resize_image;
mod video_to_gif;
mod video_to_ogg;
mod video_to_webm;

#[cfg(test)]
mod real_files;

pub use options::{OptionKind, OptionSpec, Options};

use std::path::Path;

use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

/// One command of a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    ImageToVideo,
    GifToVideo,
    ImageToWebp,
    ResizeImage,
    ModifyVideoSpeed,
    VideoToGif,
    VideoToOgg,
    VideoToWebm,
    ExtractFrames,
}

/// The still images the image commands read.
const IMAGES: &[MediaFormat] = crate::media::IMAGE_INPUTS;
/// The containers the video commands read.
const VIDEOS: &[MediaFormat] = crate::media::VIDEO_CONTAINERS;

/// What is known of a file before it exists: enough for the budgets and a dry run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Shape {
    /// Displayed width and height.
    pub size: Option<(u32, u32)>,
    /// Frames (1 for a still image).
    pub frames: Option<u64>,
    /// Seconds, for videos and animations.
    pub seconds: Option<f64>,
}

/// What a command makes of one input: how many files (exactly, when `exact`, or at
/// least), their format, and their shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub files: u64,
    pub exact: bool,
    pub format: Option<MediaFormat>,
    pub shape: Shape,
}

impl Prediction {
    /// One file of `format` shaped `shape`.
    fn one(format: Option<MediaFormat>, shape: Shape) -> Prediction {
        Prediction {
            files: 1,
            exact: true,
            format,
            shape,
        }
    }
}

impl Command {
    pub const ALL: [Command; 9] = [
        Command::ImageToVideo,
        Command::GifToVideo,
        Command::ImageToWebp,
        Command::ResizeImage,
        Command::ModifyVideoSpeed,
        Command::VideoToGif,
        Command::VideoToOgg,
        Command::VideoToWebm,
        Command::ExtractFrames,
    ];

    /// The name used on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Command::ImageToVideo => image_to_video::NAME,
            Command::GifToVideo => gif_to_video::NAME,
            Command::ImageToWebp => image_to_webp::NAME,
            Command::ResizeImage => resize_image::NAME,
            Command::ModifyVideoSpeed => modify_video_speed::NAME,
            Command::VideoToGif => video_to_gif::NAME,
            Command::VideoToOgg => video_to_ogg::NAME,
            Command::VideoToWebm => video_to_webm::NAME,
            Command::ExtractFrames => extract_frames::NAME,
        }
    }

    /// What it does, in a sentence.
    pub fn summary(self) -> &'static str {
        match self {
            Command::ImageToVideo => image_to_video::SUMMARY,
            Command::GifToVideo => gif_to_video::SUMMARY,
            Command::ImageToWebp => image_to_webp::SUMMARY,
            Command::ResizeImage => resize_image::SUMMARY,
            Command::ModifyVideoSpeed => modify_video_speed::SUMMARY,
            Command::VideoToGif => video_to_gif::SUMMARY,
            Command::VideoToOgg => video_to_ogg::SUMMARY,
            Command::VideoToWebm => video_to_webm::SUMMARY,
            Command::ExtractFrames => extract_frames::SUMMARY,
        }
    }

    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Formats this command accepts as input.
    pub fn inputs(self) -> &'static [MediaFormat] {
        match self {
            Command::ImageToVideo => image_to_video::INPUTS,
            Command::GifToVideo => gif_to_video::INPUTS,
            Command::ImageToWebp => image_to_webp::INPUTS,
            Command::ResizeImage => resize_image::INPUTS,
            Command::ModifyVideoSpeed => modify_video_speed::INPUTS,
            Command::VideoToGif => video_to_gif::INPUTS,
            Command::VideoToOgg => video_to_ogg::INPUTS,
            Command::VideoToWebm => video_to_webm::INPUTS,
            Command::ExtractFrames => extract_frames::INPUTS,
        }
    }

    pub fn accepts(self, format: MediaFormat) -> bool {
        self.inputs().contains(&format)
    }

    /// The options this command reads.
    pub fn options(self) -> &'static [OptionSpec] {
        match self {
            Command::ImageToVideo => image_to_video::OPTIONS,
            Command::ResizeImage => resize_image::OPTIONS,
            Command::ModifyVideoSpeed => modify_video_speed::OPTIONS,
            Command::GifToVideo
            | Command::ImageToWebp
            | Command::VideoToGif
            | Command::VideoToOgg
            | Command::VideoToWebm
            | Command::ExtractFrames => &[],
        }
    }

    /// Whether the command runs in this process only (no ffmpeg): such edits are
    /// claimed first within an organization.
    pub fn in_process(self) -> bool {
        matches!(self, Command::ImageToWebp | Command::ResizeImage)
    }

    /// The format this command makes of an input of `input` (the format option of
    /// `resize-image` included), or `None` for an input it does not take.
    pub fn output(self, input: MediaFormat, options: &Options) -> Option<MediaFormat> {
        if !self.accepts(input) {
            return None;
        }
        Some(match self {
            Command::ImageToVideo => image_to_video::OUTPUT,
            Command::GifToVideo => gif_to_video::OUTPUT,
            Command::ImageToWebp => image_to_webp::OUTPUT,
            Command::ResizeImage => resize_image::output(input, options),
            Command::ModifyVideoSpeed => modify_video_speed::OUTPUT,
            Command::VideoToGif => video_to_gif::OUTPUT,
            Command::VideoToOgg => video_to_ogg::OUTPUT,
            Command::VideoToWebm => video_to_webm::OUTPUT,
            Command::ExtractFrames => extract_frames::OUTPUT,
        })
    }

    /// What this command makes of one input shaped `input`.
    pub fn predict(self, input: Shape, options: &Options) -> Prediction {
        match self {
            Command::ImageToVideo => image_to_video::predict(input, options),
            Command::GifToVideo => gif_to_video::predict(input),
            Command::ImageToWebp => Prediction::one(Some(image_to_webp::OUTPUT), input),
            Command::ResizeImage => resize_image::predict(input, options),
            Command::ModifyVideoSpeed => modify_video_speed::predict(input, options),
            Command::VideoToGif => video_to_gif::predict(input),
            Command::VideoToOgg => Prediction::one(Some(video_to_ogg::OUTPUT), input),
            Command::VideoToWebm => Prediction::one(Some(video_to_webm::OUTPUT), input),
            Command::ExtractFrames => extract_frames::predict(input),
        }
    }

    /// The work this command does on an input of `work`, in pixels × frames: what it
    /// decodes, or what it encodes where that is more.
    pub fn cost(self, work: Work, options: &Options) -> u64 {
        match self {
            Command::ImageToVideo => image_to_video::cost(work, options),
            Command::ResizeImage => resize_image::cost(work, options),
            Command::GifToVideo
            | Command::ImageToWebp
            | Command::ModifyVideoSpeed
            | Command::VideoToGif
            | Command::VideoToOgg
            | Command::VideoToWebm
            | Command::ExtractFrames => work.total(),
        }
    }

    /// `UnsupportedInputFormat` for an input this command does not take.
    fn check_input(self, input: &MediaFile) -> Result<(), MediaError> {
        if self.accepts(input.format) {
            return Ok(());
        }
        Err(MediaError::unsupported(input.format, self.inputs()))
    }

    /// Runs the command on `input`, writing into `out_dir`; `extract-frames` gives one
    /// file per frame, every other command one file. `UnsupportedInputFormat` for an
    /// input it does not take.
    pub async fn run(
        self,
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        self.check_input(input)?;
        // An animation bomb is refused from its headers, before any command decodes it.
        media.check_animation(input).await?;
        let one = match self {
            Command::ImageToVideo => image_to_video::run(media, input, options, out_dir).await,
            Command::GifToVideo => gif_to_video::run(media, input, out_dir, progress).await,
            Command::ImageToWebp => image_to_webp::run(media, input, out_dir).await,
            Command::ResizeImage => resize_image::run(media, input, options, out_dir).await,
            Command::ModifyVideoSpeed => {
                modify_video_speed::run(media, input, options, out_dir, progress).await
            }
            Command::VideoToGif => video_to_gif::run(media, input, out_dir, progress).await,
            Command::VideoToOgg => video_to_ogg::run(media, input, out_dir, progress).await,
            Command::VideoToWebm => video_to_webm::run(media, input, out_dir, progress).await,
            Command::ExtractFrames => {
                return extract_frames::run(media, input, out_dir, progress).await
            }
        };
        Ok(vec![one?])
    }
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
        let frames = resize_image::frame_output(options, max_pixels);
        extract_frames::run_into(media, input, frames, out_dir, progress).await
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_found_by_its_own_name() {
        for command in Command::ALL {
            assert_eq!(Command::from_name(command.name()), Some(command));
        }
        assert_eq!(Command::from_name("resize"), None);
    }

    #[test]
    fn option_names_are_unique_across_commands() {
        let mut names: Vec<_> = Command::ALL
            .iter()
            .flat_map(|c| c.options().iter().map(|o| o.name))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "an option name is declared twice");
    }
}
