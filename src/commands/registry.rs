//! The registry: the [`Command`] enum, [`Command::ALL`] and the dispatch of every
//! question to the command's own [`CommandDef`], derived by the `commands!` macro
//! below from the invocation build.rs writes (one entry per command `mod` line of
//! `commands/mod.rs`), and what every command answers the same way.

use std::path::Path;

use crate::commands::options::{OptionKind, OptionSpec, Options};
use crate::commands::spec::{CommandDef, CommandSpec, OptionProblem, Prediction, Shape};
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

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
                    $(Command::$variant => &<super::$module::$variant as CommandDef>::SPEC,)*
                }
            }

            fn output_of(self, input: MediaFormat, options: &Options) -> MediaFormat {
                match self {
                    $(Command::$variant => <super::$module::$variant as CommandDef>::output(input, options),)*
                }
            }

            /// What this command makes of one input shaped `input`.
            pub fn predict(self, input: Shape, options: &Options) -> Prediction {
                match self {
                    $(Command::$variant => <super::$module::$variant as CommandDef>::predict(input, options),)*
                }
            }

            /// The work this command does on an input of `work`, in pixels × frames.
            pub fn cost(self, work: Work, options: &Options) -> u64 {
                match self {
                    $(Command::$variant => <super::$module::$variant as CommandDef>::cost(work, options),)*
                }
            }

            /// The error this command would end with on an input shaped `input`, known
            /// from the shape alone (a crop outside the picture).
            pub fn refuse(self, input: Shape, options: &Options) -> Option<MediaError> {
                match self {
                    $(Command::$variant => <super::$module::$variant as CommandDef>::refuse(input, options),)*
                }
            }

            /// Rules between this command's options.
            pub fn check(self, options: &Options) -> Result<(), OptionProblem> {
                match self {
                    $(Command::$variant => <super::$module::$variant as CommandDef>::check(options),)*
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
                        <super::$module::$variant as CommandDef>::run(media, input, options, out_dir, progress).await
                    })*
                }
            }
        }
    };
}

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
    pub(super) fn check_input(self, input: &MediaFile) -> Result<(), MediaError> {
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
        if input.format == crate::media::MediaFormat::Pdf {
            // The page's picture lives in a directory of its own, gone after the run.
            let scratch = tempfile::Builder::new()
                .prefix("pdf-")
                .tempdir_in(out_dir)?;
            let predict = |shape| self.predict(shape, options).shape.size;
            let page =
                super::pdf_page::draw(predict, media, input, options, scratch.path()).await?;
            return self
                .run_unchecked(media, &page, options, out_dir, progress)
                .await;
        }
        // An animation bomb is refused from its headers, before any command decodes it.
        media.check_animation(input).await?;
        let outputs = self
            .run_unchecked(media, input, options, out_dir, progress)
            .await?;
        let declared = self
            .options()
            .iter()
            .any(|spec| spec.name == super::metadata::METADATA.name);
        super::metadata::carry(declared, input, options, outputs).await
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
