//! The one wrapper every external program (ffmpeg, ffprobe) runs through.
//!
//! No shell is involved: arguments go to the program as given, so nothing in a file
//! name or option can be interpreted as a command. No variable of the service's own
//! environment is passed on either: every process starts with the allow-list of
//! [`env`], its `HOME` and `TMPDIR` a directory of its own run.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

use crate::media::error::MediaError;
use crate::media::ffmpeg::child::{limited_command, ChildEnv};
use crate::media::ffmpeg::warm::WarmPool;
use lines::{as_text, read_lines};
pub(crate) use resident::Resident;
use stderr::read_tail;
#[cfg(test)]
use stderr::STDERR_TAIL_BYTES;
pub(crate) use stderr::{last_line, stderr_tail};

/// Runs external programs with a timeout, bounded in number by a shared semaphore.
#[derive(Debug, Clone)]
pub(crate) struct ProcessRunner {
    /// One permit per process allowed at once, shared by every clone.
    permits: Arc<Semaphore>,
    timeout: Duration,
    /// Bytes of data memory each process may map (`RLIMIT_DATA`); 0 for no limit.
    memory_limit: u64,
    /// Processes started ahead of their runs (`warm`), shared by every clone.
    warm: Arc<WarmPool>,
    /// What every process's environment holds.
    env: ChildEnv,
}

/// What a successful run printed.
#[derive(Debug)]
pub(crate) struct ProcessOutput {
    pub stdout: Vec<u8>,
}

impl ProcessRunner {
    /// `max_processes` of 0 is taken as 1: zero permits would hang every job.
    pub fn new(max_processes: usize, timeout: Duration) -> Self {
        ProcessRunner {
            permits: Arc::new(Semaphore::new(max_processes.max(1))),
            timeout,
            memory_limit: 0,
            warm: Arc::new(WarmPool::off()),
            env: ChildEnv::new(None),
        }
    }

    /// Makes each run's `HOME` and `TMPDIR` (a fresh directory, removed after the
    /// run) under `dir` rather than the system temp dir. Comes before
    /// [`ProcessRunner::with_warm_processes`], whose processes wait there.
    pub fn with_scratch_dir(mut self, dir: Option<&Path>) -> Self {
        self.env = ChildEnv::new(dir);
        self
    }

    /// Runs every process under a limit of `bytes` of data memory (heap and private
    /// anonymous mappings, `RLIMIT_DATA`): a file that makes ffmpeg allocate without
    /// bound fails its own process with "Cannot allocate memory" and its edit with
    /// `memory_limit_exceeded`, and nothing else on the machine notices. Address space
    /// (`RLIMIT_AS`) would also count the arenas glibc reserves per thread, which on a
    /// many-core machine trip a fair limit for no real use.
    pub fn with_memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = bytes;
        self
    }

    /// Keeps `per_program` processes of every program run so far started and waiting
    /// for their arguments (see `warm`), with the shim they load written into `dir`.
    /// Comes after [`ProcessRunner::with_memory_limit`], whose limit they run under.
    pub fn with_warm_processes(mut self, per_program: usize, dir: Option<&Path>) -> Self {
        self.warm = Arc::new(WarmPool::new(
            per_program,
            dir,
            self.memory_limit,
            self.env.clone(),
        ));
        self
    }

    /// What a process that stays between runs is held to (see [`Resident`]).
    pub fn resident(&self) -> Resident {
        Resident {
            permits: self.permits.clone(),
            timeout: self.timeout,
            memory_limit: self.memory_limit,
            env: self.env.clone(),
        }
    }

    /// Starts the warm processes of `program` before its first run.
    pub fn prewarm(&self, program: &Path) {
        self.warm.refill(program);
    }

    #[cfg(test)]
    pub fn warm_ready(&self, program: &Path) -> usize {
        self.warm.ready(program)
    }

    #[cfg(test)]
    pub fn warm_pids(&self, program: &Path) -> Vec<u32> {
        self.warm.ready_pids(program)
    }

    #[cfg(test)]
    pub async fn kill_warm(&self, program: &Path) {
        self.warm.kill_ready(program).await
    }

    /// Runs `program` with `args`, stdin closed, and collects its output.
    ///
    /// Waits for a permit first; the timeout counts from the start of the process, not
    /// from the wait, so a busy service does not time jobs out. `ToolMissing` when the
    /// program is not installed, `Timeout` (the process is killed) past the timeout,
    /// `ProcessFailed` with the tail of stderr on a non-zero exit or a signal.
    pub async fn run<I, S>(&self, program: &Path, args: I) -> Result<ProcessOutput, MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut stdout = Vec::new();
        self.run_inner(program, args, &mut |line: &[u8]| {
            stdout.extend_from_slice(line)
        })
        .await?;
        Ok(ProcessOutput { stdout })
    }

    /// Like [`ProcessRunner::run`], but hands each line of stdout (without its line
    /// ending) to `on_line` as it is printed, e.g. ffmpeg's `-progress pipe:1` reports.
    /// stdout is not kept.
    pub async fn run_streaming<I, S>(
        &self,
        program: &Path,
        args: I,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_inner(program, args, &mut as_text(on_line)).await
    }

    /// Runs the process, handing each raw stdout line (line ending included) to
    /// `on_line`, and keeps the last [`STDERR_KEEP_BYTES`] of stderr for the error.
    async fn run_inner<I, S>(
        &self,
        program: &Path,
        args: I,
        on_line: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_reading(program, args, |stdout| async move {
            Ok(read_lines(stdout, on_line).await?)
        })
        .await
    }

    /// Runs the process with its stdout handed to `consume` (e.g. decoded frames that
    /// ffmpeg writes to a pipe), and keeps the last [`STDERR_KEEP_BYTES`] of stderr for
    /// the error. An error of `consume` ends the run at once and kills the process.
    pub async fn run_reading<I, S, F, Fut>(
        &self,
        program: &Path,
        args: I,
        consume: F,
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
        F: FnOnce(ChildStdout) -> Fut,
        Fut: Future<Output = Result<(), MediaError>>,
    {
        // No input: stdin is closed.
        type NoFeed = fn(ChildStdin) -> std::future::Ready<Result<(), MediaError>>;
        self.run_piped(program, args, None::<NoFeed>, consume).await
    }

    /// Like [`ProcessRunner::run`], with stdin a pipe that `feed` writes while the
    /// process runs (and closes when it returns): the process starts — ffmpeg loads its
    /// libraries, its encoder sets up — while `feed` still prepares its input. An error
    /// of `feed` ends the run at once, kills the process and is the run's error; `feed`
    /// finding the pipe closed (the process exited early) leaves the verdict to the
    /// process's exit.
    pub async fn run_fed<I, S, G, FutG>(
        &self,
        program: &Path,
        args: I,
        feed: G,
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
        G: FnOnce(ChildStdin) -> FutG,
        FutG: Future<Output = Result<(), MediaError>>,
    {
        self.run_fed_streaming(program, args, feed, &mut |_| {})
            .await
    }

    /// [`ProcessRunner::run_fed`] with each line of stdout (line ending trimmed) handed
    /// to `on_line`, as [`ProcessRunner::run_streaming`] does: ffmpeg's progress.
    pub async fn run_fed_streaming<I, S, G, FutG>(
        &self,
        program: &Path,
        args: I,
        feed: G,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
        G: FnOnce(ChildStdin) -> FutG,
        FutG: Future<Output = Result<(), MediaError>>,
    {
        self.run_piped(program, args, Some(feed), |stdout| async move {
            Ok(read_lines(stdout, &mut as_text(on_line)).await?)
        })
        .await
    }

    /// Runs the process: stdin fed by `feed` (closed when there is none), stdout
    /// handed to `consume`, the tail of stderr kept for the error.
    async fn run_piped<I, S, G, FutG, F, Fut>(
        &self,
        program: &Path,
        args: I,
        feed: Option<G>,
        consume: F,
    ) -> Result<(), MediaError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
        G: FnOnce(ChildStdin) -> FutG,
        FutG: Future<Output = Result<(), MediaError>>,
        F: FnOnce(ChildStdout) -> Fut,
        Fut: Future<Output = Result<(), MediaError>>,
    {
        let name = program_name(program);
        // The semaphore is never closed, so acquiring only fails if that changes.
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(std::io::Error::other)?;

        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        // Declared before the child, so dropped after it: removed once it has ended.
        let home = self.env.run_dir()?;
        let mut child = self
            .spawn(program, &args, feed.is_some(), home.path())
            .await?;
        if feed.is_none() {
            // A warm process was started with a pipe for stdin: closing it is what
            // a cold start's null stdin reads as.
            drop(child.stdin.take());
        }
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(MediaError::Io(std::io::Error::other("child pipes missing")));
        };

        let work = async {
            // Both pipes are drained at once: a process blocked on a full stderr pipe
            // would never finish its stdout.
            let stderr = async { Ok::<_, MediaError>(read_tail(stderr).await?) };
            let stdin = child.stdin.take();
            let feeding = async {
                let (Some(feed), Some(stdin)) = (feed, stdin) else {
                    return Ok(());
                };
                match feed(stdin).await {
                    Err(MediaError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                    other => other,
                }
            };
            let ((), stderr, ()) = tokio::try_join!(consume(stdout), stderr, feeding)?;
            let status = child.wait().await?;
            Ok::<_, MediaError>((status, stderr))
        };
        // On timeout `work` is dropped, then `child` at the end of this function,
        // which kills the process.
        let started = std::time::Instant::now();
        let finished = tokio::time::timeout(self.timeout, work).await;
        tracing::debug!(program = %name, ms = started.elapsed().as_millis() as u64, "ran");
        // The next run's process starts now that this one's cores are free.
        self.warm.refill(program);
        let (status, stderr) = match finished {
            Ok(result) => result?,
            Err(_elapsed) => {
                return Err(MediaError::Timeout {
                    program: name,
                    seconds: self.timeout.as_secs_f64().ceil() as u64,
                })
            }
        };

        if !status.success() {
            let tail = stderr_tail(&stderr);
            let stderr_tail = if tail.is_empty() {
                format!("it exited with {status} and printed nothing")
            } else {
                tail
            };
            if self.memory_limit > 0 && stderr_tail.contains("Cannot allocate memory") {
                return Err(MediaError::MemoryLimitExceeded {
                    program: name,
                    limit_mib: self.memory_limit >> 20,
                });
            }
            return Err(MediaError::ProcessFailed {
                program: name,
                stderr_tail,
            });
        }
        Ok(())
    }

    /// The process of one run: a warm one handed `args` when one is ready, else
    /// `program` started now; either way with `home` as its `HOME` and `TMPDIR`.
    /// Dropping it (on timeout, or when the job's future is dropped at shutdown)
    /// kills it: no ffmpeg is left running without us.
    async fn spawn(
        &self,
        program: &Path,
        args: &[OsString],
        stdin: bool,
        home: &Path,
    ) -> Result<tokio::process::Child, MediaError> {
        if let Some(warm) = self.warm.take(program, args) {
            match warm.start(program, args, &self.env.entries(home)).await {
                Ok(child) => return Ok(child),
                // It died while it waited: start one cold.
                Err(e) => tracing::debug!(error = %e, "a warm process was gone"),
            }
        }
        limited_command(program, self.memory_limit, &self.env, home)
            .args(args)
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => MediaError::ToolMissing {
                    program: program_name(program),
                },
                _ => MediaError::Io(e),
            })
    }
}

/// The file name of `program`, for messages (`/usr/bin/ffmpeg` → `ffmpeg`).
fn program_name(program: &Path) -> String {
    program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned()
}

mod lines;
mod resident;
mod stderr;
#[cfg(test)]
mod tests;
