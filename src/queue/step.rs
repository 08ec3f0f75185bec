//! One CPU step of a pipeline: a command, or two commands that run as one.

use std::path::Path;

use crate::commands::{Command, Fused, Options};
use crate::error_code::Code;
use crate::media::{Media, MediaError, MediaFile, ProgressFn, Work};

/// One CPU step of a pipeline: a command, or two that run as one (see [`Fused`]).
#[derive(Debug, Clone, Copy)]
pub enum Step {
    One(Command),
    Fused(Fused),
}

impl Step {
    pub fn first(self) -> Command {
        match self {
            Step::One(command) => command,
            Step::Fused(fused) => fused.first,
        }
    }

    /// How many of the pipeline's commands this step runs.
    pub fn commands(self) -> usize {
        match self {
            Step::One(_) => 1,
            Step::Fused(_) => 2,
        }
    }

    /// Runs the step on `input` (see [`Command::run`]).
    pub async fn run(
        self,
        media: &Media,
        input: &MediaFile,
        options: &Options,
        out_dir: &Path,
        progress: ProgressFn<'_>,
    ) -> Result<Vec<MediaFile>, MediaError> {
        match self {
            Step::One(command) => command.run(media, input, options, out_dir, progress).await,
            Step::Fused(fused) => fused.run(media, input, options, out_dir, progress).await,
        }
    }

    pub fn cost(self, work: Work, options: &Options) -> u64 {
        match self {
            Step::One(command) => command.cost(work, options),
            Step::Fused(fused) => fused.cost(work, options),
        }
    }

    /// Where a failure with `code` of this step, starting at command `c` of asset
    /// `i`, happened: a fused step's output-size errors are the second command's
    /// (the first, `extract-frames`, never makes them), as they would be unfused.
    pub fn place(self, i: usize, c: usize, code: Code) -> String {
        let second = matches!(code, Code::OutputTooSmall | Code::OutputTooLarge);
        match self {
            Step::Fused(fused) if second => {
                format!("Asset {i}, command {} ({})", c + 1, fused.then)
            }
            _ => format!("Asset {i}, command {c} ({})", self.first()),
        }
    }
}
