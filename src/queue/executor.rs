//! The one executor of a pipeline of commands, for edits and renders alike: the
//! commands in order, neighbours that fuse (see [`Fused`](crate::commands::Fused)) as
//! one step, each step on every file the one before made, each in a directory of its
//! own. What a step costs and where it runs is its host's: an edit's asset runs every
//! file at once as far as its organization's fair slots allow, charged to the edit's
//! budgets and reported as progress (`pipeline`); a render runs its one file in the
//! slot it holds and caches the result (`render`).

use std::future::Future;
use std::path::Path;

use super::step::Step;
use crate::commands::{Command, Fused};
use crate::media::MediaFile;
use crate::queue::error::JobError;

/// Where a step stands in its pipeline.
#[derive(Debug, Clone, Copy)]
pub struct StepAt {
    /// The index of the step's first command.
    pub c: usize,
    pub step: Step,
    /// The pipeline's last step: its files are the outputs.
    pub last: bool,
}

/// Runs the steps of a pipeline.
pub trait StepHost {
    /// Runs `at`'s step on every one of `files`, writing into `dir`.
    fn run_step(
        &self,
        at: StepAt,
        files: &[MediaFile],
        dir: &Path,
    ) -> impl Future<Output = Result<Vec<MediaFile>, JobError>> + Send;
}

/// The steps of `commands`, in order.
pub fn steps(commands: &[Command]) -> Vec<StepAt> {
    let mut steps = Vec::new();
    let mut c = 0;
    while c < commands.len() {
        let step = match commands
            .get(c + 1)
            .and_then(|then| Fused::of(commands[c], *then))
        {
            Some(fused) => Step::Fused(fused),
            None => Step::One(commands[c]),
        };
        let last = c + step.commands() == commands.len();
        steps.push(StepAt { c, step, last });
        c += step.commands();
    }
    steps
}

/// Runs `commands` on `source` through `host`, in `dir`: the files of the last step.
pub async fn execute(
    host: &impl StepHost,
    commands: &[Command],
    source: MediaFile,
    dir: &Path,
) -> Result<Vec<MediaFile>, JobError> {
    let mut files = vec![source];
    for at in steps(commands) {
        let step_dir = dir.join(format!("step-{}", at.c));
        tokio::fs::create_dir_all(&step_dir).await.map_err(|e| {
            tracing::error!(error = %e, "creating a step directory failed");
            JobError::internal(true)
        })?;
        files = host.run_step(at, &files, &step_dir).await?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_that_fuse_are_one_step_and_the_last_step_is_marked() {
        let commands = [
            Command::ExtractFrames,
            Command::ResizeImage,
            Command::ImageToWebp,
        ];
        assert_eq!(steps_of(&commands), [(0, 2, false), (2, 1, true)]);
        assert_eq!(steps_of(&[Command::ResizeImage]), [(0, 1, true)]);
    }

    fn steps_of(commands: &[Command]) -> Vec<(usize, usize, bool)> {
        steps(commands)
            .iter()
            .map(|at| (at.c, at.step.commands(), at.last))
            .collect()
    }
}
