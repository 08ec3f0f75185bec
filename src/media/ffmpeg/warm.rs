//! Warm processes: ffmpeg and ffprobe started before their work is known, waiting
//! with every library loaded for the command line of their run.
//!
//! Why: Debian's ffmpeg links 215 shared libraries, and resolving their symbols takes
//! 45–50 ms of one core before `main` runs (`perf`: `do_lookup_x`). On a short job
//! that is a tenth of the edit — 125 thumbnails of a 720p clip take 0.49 s — spent
//! with the other cores idle. A warm process did that while the service was idle.
//!
//! How: a process is started with `warm_shim.c` preloaded (`LD_PRELOAD`). The shim
//! stands in front of glibc's `__libc_start_main`, which runs once the dynamic loader
//! has loaded and relocated everything: it says it is ready with one byte on
//! descriptor 3 (a Unix socket to this process), reads its run's environment and
//! arguments from it (each ending in a NUL byte; an empty string between the two;
//! until end of file) and calls `main` with them. The memory limit and the stdio
//! pipes are set when it is started, as for a process started cold; so is its
//! environment, the allow-list of `ffmpeg::child` with a neutral `HOME` and `TMPDIR`
//! (its run has no directory yet), which the run's own replaces. The shim writes the
//! environment it runs with over the one it was started with, where
//! `/proc/PID/environ` reads it: `LD_PRELOAD` is gone from there once the shim is in.
//!
//! Anything that does not fit falls back to a cold start: a program the shim cannot
//! enter (a static binary, a data dir mounted `noexec`) never says ready and
//! is not started warm again; a warm process that died while it waited is skipped.
//! If this service dies, its warm processes read end of file and exit.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::process::Child;

use crate::media::ffmpeg::child::{install_carried, limited_command, ChildEnv};

/// The shim as `build.rs` built it; empty where it could not be built.
const SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warm_shim.so"));
/// The descriptor the shim reads its command line from (`CONTROL_FD` in the shim).
const CONTROL_FD: i32 = 3;
/// What `ps` shows for a process that waits; its length is the room the shim has to
/// show the real command line in its place (longer ones are cut).
const WAITING: &str = "(warm: waiting for its run)";
const SHOWN_COMMAND_LINE_BYTES: usize = 4096;
/// How long a process may take to load its libraries and say it is ready; one that
/// takes longer is not kept (a machine that slow gains nothing from the wait).
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// The warm processes of every program, `per_program` of each kept ready.
#[derive(Debug)]
pub(crate) struct WarmPool {
    per_program: usize,
    /// Where the shim was written; `None` when warm starts are off.
    shim: Option<PathBuf>,
    /// `RLIMIT_DATA` of every process, as for cold starts.
    memory_limit: u64,
    /// The environment of every process, as for cold starts.
    env: ChildEnv,
    programs: Mutex<HashMap<PathBuf, Stock>>,
}

/// The warm processes of one program.
#[derive(Debug, Default)]
struct Stock {
    ready: Vec<Warm>,
    /// Being started, not yet ready.
    starting: usize,
    /// It was started once and never said ready: it always starts cold.
    refused: bool,
}

/// A process waiting for its command line.
#[derive(Debug)]
pub(crate) struct Warm {
    child: Child,
    control: UnixStream,
}

impl WarmPool {
    /// No warm processes: every run starts its process.
    pub fn off() -> WarmPool {
        WarmPool::new(0, None, 0, ChildEnv::new(None))
    }

    /// Keeps `per_program` processes of each program run so far ready, with the shim
    /// written into `dir`. Off when `per_program` is 0, when there is no `dir` or the
    /// shim cannot be written there.
    pub fn new(
        per_program: usize,
        dir: Option<&Path>,
        memory_limit: u64,
        env: ChildEnv,
    ) -> WarmPool {
        let shim = match dir {
            Some(dir) if per_program > 0 => install_shim(dir),
            _ => None,
        };
        WarmPool {
            per_program,
            shim,
            memory_limit,
            env,
            programs: Mutex::default(),
        }
    }

    /// A process of `program` that is ready for `args`, if one waits. An argument
    /// with a NUL byte cannot cross the shim's line; its run starts cold and fails
    /// there as any such run does.
    pub fn take(&self, program: &Path, args: &[OsString]) -> Option<Warm> {
        if args.iter().any(|arg| arg.as_bytes().contains(&0)) {
            return None;
        }
        let mut programs = self.stocks();
        let stock = programs.get_mut(program)?;
        while let Some(mut warm) = stock.ready.pop() {
            if matches!(warm.child.try_wait(), Ok(None)) {
                return Some(warm);
            }
        }
        None
    }

    /// Starts processes of `program` in the background until `per_program` are ready
    /// or starting. Called after a run ends, so that the start does not take the
    /// cores from the run that made room for it.
    pub fn refill(self: &Arc<Self>, program: &Path) {
        let Some(shim) = self.shim.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let missing = {
            let mut programs = self.stocks();
            let stock = programs.entry(program.to_path_buf()).or_default();
            let have = stock.ready.len() + stock.starting;
            let missing = if stock.refused {
                0
            } else {
                self.per_program.saturating_sub(have)
            };
            stock.starting += missing;
            missing
        };
        for _ in 0..missing {
            let pool = self.clone();
            let (program, shim) = (program.to_path_buf(), shim.clone());
            runtime.spawn(async move {
                let started = start(&program, &shim, pool.memory_limit, &pool.env).await;
                let mut programs = pool.stocks();
                let stock = programs.entry(program.clone()).or_default();
                stock.starting -= 1;
                match started {
                    Ok(warm) => stock.ready.push(warm),
                    Err(Failed::Spawn(e)) => {
                        tracing::debug!(program = %program.display(), error = %e, "starting a warm process failed");
                    }
                    Err(Failed::NotReady) => {
                        if !stock.refused {
                            tracing::info!(program = %program.display(), "the program cannot be started warm; it starts cold");
                        }
                        stock.refused = true;
                    }
                }
            });
        }
    }

    /// Every program's stock; a panic while it was held left nothing half done.
    fn stocks(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Stock>> {
        self.programs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many processes of `program` are ready now.
    #[cfg(test)]
    pub fn ready(&self, program: &Path) -> usize {
        self.stocks()
            .get(program)
            .map_or(0, |stock| stock.ready.len())
    }

    /// The process ids of the ready processes of `program`.
    #[cfg(test)]
    pub fn ready_pids(&self, program: &Path) -> Vec<u32> {
        self.stocks().get(program).map_or(Vec::new(), |stock| {
            stock
                .ready
                .iter()
                .filter_map(|warm| warm.child.id())
                .collect()
        })
    }

    /// Kills the ready processes of `program` and leaves them in its stock, as if
    /// they had died while they waited.
    #[cfg(test)]
    pub async fn kill_ready(&self, program: &Path) {
        let mut ready = std::mem::take(&mut self.stocks().entry(program.into()).or_default().ready);
        for warm in &mut ready {
            warm.child.kill().await.unwrap();
        }
        self.stocks().entry(program.into()).or_default().ready = ready;
    }
}

impl Warm {
    /// Hands the process its run's environment (`env`, which replaces the one it
    /// was started with) and its command line (`program` first, as `argv[0]`); it
    /// runs from here, with the stdio pipes it was started with.
    pub async fn start(
        mut self,
        program: &Path,
        args: &[OsString],
        env: &[(&str, OsString)],
    ) -> io::Result<Child> {
        let mut line = Vec::new();
        // An entry is never empty (it holds at least `=`): the first empty string
        // ends the environment.
        for (name, value) in env {
            line.extend_from_slice(name.as_bytes());
            line.push(b'=');
            line.extend_from_slice(value.as_bytes());
            line.push(0);
        }
        line.push(0);
        for arg in std::iter::once(program.as_os_str()).chain(args.iter().map(OsString::as_os_str))
        {
            line.extend_from_slice(arg.as_bytes());
            line.push(0);
        }
        self.control.write_all(&line).await?;
        self.control.shutdown().await?;
        Ok(self.child)
    }
}

enum Failed {
    Spawn(io::Error),
    /// It started but never said ready: the shim was not loaded, or the process died.
    NotReady,
}

/// Starts `program` with the shim preloaded and waits until it is ready. Its own
/// arguments only matter where the shim did not load: `-version` makes ffmpeg and
/// ffprobe print their version and end before they read the next argument.
async fn start(
    program: &Path,
    shim: &Path,
    memory_limit: u64,
    env: &ChildEnv,
) -> Result<Warm, Failed> {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(Failed::Spawn)?;
    let fd = theirs.as_raw_fd();
    let mut command = limited_command(program, memory_limit, env, env.neutral());
    // SAFETY: between fork and exec only dup2 and fcntl run, both async-signal-safe,
    // on a descriptor the child inherited.
    unsafe {
        command.pre_exec(move || {
            let moved = if fd == CONTROL_FD {
                libc::fcntl(fd, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, CONTROL_FD)
            };
            if moved < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command
        .arg("-version")
        .arg(format!("{WAITING:<SHOWN_COMMAND_LINE_BYTES$}"))
        // Only the shim: a library the service itself was started with is no more
        // for ffmpeg than any other variable of the service's.
        .env("LD_PRELOAD", shim)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(Failed::Spawn)?;
    drop(theirs);
    ours.set_nonblocking(true).map_err(Failed::Spawn)?;
    let mut control = UnixStream::from_std(ours).map_err(Failed::Spawn)?;
    let mut ready = [0u8; 1];
    match tokio::time::timeout(READY_TIMEOUT, control.read_exact(&mut ready)).await {
        Ok(Ok(_)) if ready == *b"R" => Ok(Warm { child, control }),
        // `child` is dropped here, which kills it.
        _ => Err(Failed::NotReady),
    }
}

/// Writes the shim into `dir` (see `child::install_carried`). `None` where there is
/// no shim, it cannot be written, or its path cannot stand in `LD_PRELOAD` (which
/// splits on spaces and colons).
fn install_shim(dir: &Path) -> Option<PathBuf> {
    if SHIM.is_empty()
        || dir
            .as_os_str()
            .as_bytes()
            .iter()
            .any(|b| matches!(b, b' ' | b':'))
    {
        return None;
    }
    match install_carried(dir, "warm", ".so", SHIM, false) {
        Ok(path) => Some(path),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "writing the warm-process shim failed; ffmpeg starts cold");
            None
        }
    }
}

#[cfg(test)]
#[path = "warm/tests.rs"]
mod tests;
