//! The command library: one file per command, owning everything about it — its wire
//! name, the formats it takes and makes, its options (ranges, defaults), the
//! prediction of its outputs, its cost, and its execution (an ffmpeg recipe or image
//! steps over the shared capabilities of `media`), with its unit tests.
//!
//! This file is the registry: one `mod` line per command below, from which build.rs
//! writes the `commands!` invocation that derives the [`Command`] enum,
//! [`Command::ALL`] and the dispatch of every question to the command's own
//! [`CommandDef`]. Adding a command is one new file (a unit type implementing
//! `CommandDef`) and one `mod` line here; a command file without its line fails the
//! build.

mod options;
mod spec;

#[cfg(test)]
mod real_files;

pub use options::{OptionKind, OptionSpec, Options, SourceFile};
pub use spec::{Beside, CommandSpec, OptionProblem, Prediction, Shape};

pub use blur_faces::FACES;
pub use extract_frames::Fused;
pub(crate) use spec::CommandDef;

use std::path::Path;

use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

/// The still images the image commands read.
const IMAGES: &[MediaFormat] = crate::media::IMAGE_INPUTS;
/// The containers the video commands read.
const VIDEOS: &[MediaFormat] = crate::media::VIDEO_CONTAINERS;

/// The format an image command writes for an `input` image: `asked` (its `format`
/// option), else the input's own where it can be written, else JPEG (PNG once the
/// decoded picture turns out to have transparency, `media::image::pipeline`).
fn image_output(input: MediaFormat, asked: Option<crate::media::ImageFormat>) -> MediaFormat {
    let kept = crate::media::ImageFormat::from_media_format(input);
    asked
        .or(kept)
        .unwrap_or(crate::media::ImageFormat::Jpeg)
        .media_format()
}

/// Declares the commands: `Variant => module`, where `module` (a file of this
/// directory) defines the unit type `Variant` implementing [`CommandDef`].
macro_rules! commands {
    ($($variant:ident => $module:ident,)*) => {
        /// One command of a pipeline.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Command {
            $($variant,)*
        }

        impl Command {
            /// Every command, in the catalog's order.
            pub const ALL: [Command; [$(stringify!($variant)),*].len()] = [$(Command::$variant,)*];

            /// The command's declaration.
            pub fn spec(self) -> &'static CommandSpec {
                match self {
                    $(Command::$variant => &<$module::$variant as CommandDef>::SPEC,)*
                }
            }

            fn output_of(self, input: MediaFormat, options: &Options) -> MediaFormat {
                match self {
                    $(Command::$variant => <$module::$variant as CommandDef>::output(input, options),)*
                }
            }

            /// What this command makes of one input shaped `input`.
            pub fn predict(self, input: Shape, options: &Options) -> Prediction {
                match self {
                    $(Command::$variant => <$module::$variant as CommandDef>::predict(input, options),)*
                }
            }

            /// The work this command does on an input of `work`, in pixels × frames.
            pub fn cost(self, work: Work, options: &Options) -> u64 {
                match self {
                    $(Command::$variant => <$module::$variant as CommandDef>::cost(work, options),)*
                }
            }

            /// The error this command would end with on an input shaped `input`, known
            /// from the shape alone (a crop outside the picture).
            pub fn refuse(self, input: Shape, options: &Options) -> Option<MediaError> {
                match self {
                    $(Command::$variant => <$module::$variant as CommandDef>::refuse(input, options),)*
                }
            }

            /// Rules between this command's options.
            pub fn check(self, options: &Options) -> Result<(), OptionProblem> {
                match self {
                    $(Command::$variant => <$module::$variant as CommandDef>::check(options),)*
                }
            }

            async fn run_unchecked(
                self,
                media: &Media,
                input: &MediaFile,
                options: &Options,
                out_dir: &Path,
                progress: ProgressFn<'_>,
            ) -> Result<Vec<MediaFile>, MediaError> {
                match self {
                    $(Command::$variant => {
                        <$module::$variant as CommandDef>::run(media, input, options, out_dir, progress).await
                    })*
                }
            }
        }
    };
}

// The commands, in the catalog's order: one `mod` line each. build.rs reads these
// lines and writes the registry (`commands!` below) from every one whose file
// implements `CommandDef`; a command file without its line fails the build.
mod audio_waveform;
mod blur_faces;
mod crop_image;
mod extract_frames;
mod gif_to_video;
mod image_to_video;
mod image_to_webp;
mod modify_video_speed;
mod resize_image;
mod rotate_image;
mod text;
mod trim_video;
mod video_poster;
mod video_preview;
mod video_storyboard;
mod video_to_audio;
mod video_to_gif;
mod video_to_hls;
mod video_to_ogg;
mod video_to_webm;
mod watermark;

include!(concat!(env!("OUT_DIR"), "/command_registry.rs"));

impl Command {
    /// The name used on the wire.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// What it does, in a sentence.
    pub fn summary(self) -> &'static str {
        self.spec().summary
    }

    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Formats this command accepts as input.
    pub fn inputs(self) -> &'static [MediaFormat] {
        self.spec().inputs
    }

    pub fn accepts(self, format: MediaFormat) -> bool {
        self.inputs().contains(&format)
    }

    /// The options this command reads.
    pub fn options(self) -> &'static [&'static OptionSpec] {
        self.spec().options
    }

    /// Whether the command runs in this process only (no ffmpeg): such edits are
    /// claimed first within an organization.
    pub fn in_process(self) -> bool {
        self.spec().in_process
    }

    /// Whether a render URL may run it: in this process, reading no file but its input.
    pub fn renders(self) -> bool {
        let reads_another = |o: &&OptionSpec| matches!(o.kind, OptionKind::Source { .. });
        self.in_process() && !self.options().iter().any(reads_another)
    }

    /// The format this command makes of an input of `input` (its format option
    /// included), or `None` for an input it does not take.
    pub fn output(self, input: MediaFormat, options: &Options) -> Option<MediaFormat> {
        self.accepts(input).then(|| self.output_of(input, options))
    }

    /// `UnsupportedInputFormat` for an input this command does not take.
    fn check_input(self, input: &MediaFile) -> Result<(), MediaError> {
        if self.accepts(input.format) {
            return Ok(());
        }
        Err(MediaError::unsupported(input.format, self.inputs()))
    }

    /// Runs the command on `input`, writing into `out_dir`: one file, or one per
    /// frame for `extract-frames`. `UnsupportedInputFormat` for an input it does not
    /// take.
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
        self.run_unchecked(media, input, options, out_dir, progress)
            .await
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
    fn an_option_name_means_one_kind_of_value_across_commands() {
        // A name two commands read is one option: the same spec, or specs of the
        // same kind of value (their defaults and ranges may differ). A format is a
        // name from a list, whether the list is the image formats or a command's own
        // (`video-to-audio`'s m4a, mp3, opus).
        let specs: Vec<&OptionSpec> = Command::ALL
            .iter()
            .flat_map(|c| c.options().iter().copied())
            .collect();
        let kind = |spec: &OptionSpec| match spec.kind {
            OptionKind::ImageFormat => std::mem::discriminant(&OptionKind::Choice {
                values: &[],
                default: None,
            }),
            ref other => std::mem::discriminant(other),
        };
        for a in &specs {
            for b in specs.iter().filter(|b| b.name == a.name) {
                assert_eq!(kind(a), kind(b), "`{}` is two kinds of option", a.name);
            }
        }
    }

    #[test]
    fn every_command_names_the_format_it_makes_of_every_input_it_takes() {
        // A command whose spec has no one output must say its own (the default panics).
        for command in Command::ALL {
            for input in command.inputs() {
                let made = command.output(*input, &Options::default());
                assert!(made.is_some(), "{command} of {input:?}");
            }
        }
    }
}
