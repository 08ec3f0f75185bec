//! What a process that stays between runs (the PDF drawer, `media::pdf::drawer`) is
//! held to, taken from the runner (`ProcessRunner::resident`): it is made under every
//! run's limits and environment, and each of its runs waits for a permit of the same
//! semaphore and ends at the same timeout as a run does.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::media::error::MediaError;
use crate::media::ffmpeg::child::{limited_command, ChildEnv};

/// The runner's limits, for a process of its own.
#[derive(Debug, Clone)]
pub(crate) struct Resident {
    pub(super) permits: Arc<Semaphore>,
    pub(super) timeout: Duration,
    pub(super) memory_limit: u64,
    pub(super) env: ChildEnv,
}

impl Resident {
    /// A command for `program` with the memory limit and the allow-listed environment
    /// (`home` its `HOME` and `TMPDIR`), stdin and stdout piped, stderr dropped, killed
    /// when dropped.
    pub fn command(&self, program: &Path, home: &Path) -> Command {
        let mut command = limited_command(program, self.memory_limit, &self.env, home);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        command
    }

    /// One run's permit, counted against `max_processes` like any process's.
    pub async fn permit(&self) -> Result<SemaphorePermit<'_>, MediaError> {
        // The semaphore is never closed, so acquiring only fails if that changes.
        Ok(self
            .permits
            .acquire()
            .await
            .map_err(std::io::Error::other)?)
    }

    /// How long one run may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh directory for a process's `HOME` and `TMPDIR`, removed when dropped.
    pub fn run_dir(&self) -> std::io::Result<tempfile::TempDir> {
        self.env.run_dir()
    }

    /// Bytes of data memory each process may map; 0 for no limit.
    pub fn memory_limit(&self) -> u64 {
        self.memory_limit
    }
}
