//! What one command declares: [`CommandSpec`] (its data) and [`CommandDef`] (its
//! behaviour). Each command file holds one type implementing `CommandDef`; the
//! `commands!` registry in `mod.rs` derives the [`super::Command`] enum and its
//! dispatch from those, so nothing about a command is written outside its file.

use std::path::Path;

use super::options::{OptionSpec, Options};
use crate::error_code::Code;
use crate::media::{Media, MediaError, MediaFile, MediaFormat, ProgressFn, Work};

/// The data of one command: everything the catalog, the OpenAPI document and the
/// request walk read.
#[derive(Debug)]
pub struct CommandSpec {
    /// The name used on the wire.
    pub name: &'static str,
    /// What it does, in a sentence (`GET /v1/commands`).
    pub summary: &'static str,
    /// The formats it takes.
    pub inputs: &'static [MediaFormat],
    /// The options it reads.
    pub options: &'static [&'static OptionSpec],
    /// The one format it makes whatever it takes, or `None` when that depends on the
    /// input or the options (and its `output` says).
    pub output: Option<MediaFormat>,
    /// Runs in this process only (no ffmpeg): such edits are claimed first within an
    /// organization.
    pub in_process: bool,
}

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
    /// A file made beside the others, one per input and counted in `files` (a
    /// storyboard's sheet beside its VTT): a dry run names it apart, with its own
    /// format and size, so a plan does not say two files of the one format.
    pub beside: Option<Beside>,
}

/// What [`Prediction::beside`] describes: the format and size of that one file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beside {
    pub format: MediaFormat,
    pub size: Option<(u32, u32)>,
    /// Made after the others (a DASH manifest after its HLS master) rather than
    /// before them (a storyboard's sheet before its VTT).
    pub after: bool,
}

impl Prediction {
    /// One file of `format` shaped `shape`.
    pub fn one(format: Option<MediaFormat>, shape: Shape) -> Prediction {
        Prediction {
            files: 1,
            exact: true,
            format,
            shape,
            beside: None,
        }
    }
}

/// Options that are each in range but wrong together (`fps` × `duration` under one
/// frame, `scale` with `width`): a 422 at the option named.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionProblem {
    pub code: Code,
    pub option: &'static str,
    pub detail: String,
}

/// The behaviour of one command. Implemented by a unit type in the command's file.
pub(crate) trait CommandDef {
    const SPEC: CommandSpec;

    /// The format it makes of an input of `input` (one it takes): by default the
    /// spec's one `output`. A command whose spec has none says its own.
    fn output(_input: MediaFormat, _options: &Options) -> MediaFormat {
        Self::SPEC
            .output
            .expect("a command without one output format says its own")
    }

    /// What it makes of one input shaped `input`: by default one file of the same
    /// shape.
    fn predict(input: Shape, _options: &Options) -> Prediction {
        Prediction::one(None, input)
    }

    /// The work it does on an input of `work`, in pixels × frames: what it decodes,
    /// or what it encodes where that is more.
    fn cost(work: Work, _options: &Options) -> u64 {
        work.total()
    }

    /// The error it would end with on an input shaped `input`, when the shape alone
    /// tells (`crop-image`'s box outside the picture): the dry run's `422`.
    fn refuse(_input: Shape, _options: &Options) -> Option<MediaError> {
        None
    }

    /// Rules between its options, checked when an edit is created.
    fn check(_options: &Options) -> Result<(), OptionProblem> {
        Ok(())
    }

    /// Runs it on `input` (a format it takes), writing into `out_dir`.
    async fn run(
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError>;
}
