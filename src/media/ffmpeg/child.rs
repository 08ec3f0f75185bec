//! How every child process is made: its memory limit, and its environment — empty,
//! plus an allow-list. A server runs
//! with credentials in its environment (`AWS_SECRET_ACCESS_KEY`, the database URL,
//! tokens); ffmpeg and ffprobe parse hostile bytes, and a decoder exploit would read
//! whatever they inherited. They get `PATH` (to find their own helpers), `LC_ALL=C`
//! (messages and number formats the same everywhere), and `HOME` and `TMPDIR` naming
//! a fresh empty directory of the run's own, removed when the run ends.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tokio::process::Command;

/// A command for `program` that runs under `memory_limit` bytes of data memory
/// (`RLIMIT_DATA`; 0 for none), with nothing of the service's environment but the
/// allow-list of `env` (`HOME` and `TMPDIR` being `home`). Every child process of
/// the service is made here.
pub(crate) fn limited_command(
    program: &Path,
    memory_limit: u64,
    env: &ChildEnv,
    home: &Path,
) -> Command {
    let mut command = Command::new(program);
    env.apply(&mut command, home);
    if memory_limit > 0 {
        let limit = libc::rlimit {
            rlim_cur: memory_limit as libc::rlim_t,
            rlim_max: memory_limit as libc::rlim_t,
        };
        // SAFETY: between fork and exec only setrlimit runs, which is
        // async-signal-safe and touches no memory of the parent's.
        unsafe {
            command.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_DATA, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    command
}

/// Where `PATH` points when the service itself has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The allow-list, and where the runs' own directories are made.
#[derive(Debug, Clone)]
pub(crate) struct ChildEnv {
    /// The service's own `PATH`, read once: programs are looked up where the
    /// operator installed them.
    path: OsString,
    /// Where each run's directory is made; a waiting warm process, which has no run
    /// yet, is given this directory itself.
    scratch: PathBuf,
}

impl ChildEnv {
    /// Runs' directories under `scratch`; the system temp dir when there is none.
    pub fn new(scratch: Option<&Path>) -> ChildEnv {
        ChildEnv {
            path: std::env::var_os("PATH")
                .filter(|path| !path.is_empty())
                .unwrap_or_else(|| DEFAULT_PATH.into()),
            scratch: scratch.map_or_else(std::env::temp_dir, Path::to_path_buf),
        }
    }

    /// The directory of a process that has no run yet (a warm one, waiting).
    pub fn neutral(&self) -> &Path {
        &self.scratch
    }

    /// A fresh empty directory for one run, removed when dropped.
    pub fn run_dir(&self) -> io::Result<tempfile::TempDir> {
        let make = || {
            tempfile::Builder::new()
                .prefix("run-")
                .tempdir_in(&self.scratch)
        };
        make().or_else(|_| {
            // The scratch dir may not exist yet (or was removed under us).
            std::fs::create_dir_all(&self.scratch)?;
            make()
        })
    }

    /// Every variable a child starts with, `HOME` and `TMPDIR` being `home`; in
    /// the order a cold start has them (`Command` sorts by name), so that a warm
    /// process shows the same.
    pub fn entries(&self, home: &Path) -> [(&'static str, OsString); 4] {
        [
            ("HOME", home.into()),
            ("LC_ALL", "C".into()),
            ("PATH", self.path.clone()),
            ("TMPDIR", home.into()),
        ]
    }

    /// Clears the environment `command` would inherit and sets the allow-list.
    pub fn apply(&self, command: &mut Command, home: &Path) {
        command.env_clear();
        command.envs(self.entries(home));
    }
}

/// Writes `bytes` (a file the binary carries: the warm-process shim, the PDF drawer)
/// into `dir` as `mediaedit-{stem}-{digest}{suffix}`, a name that changes with its
/// content, through a temporary name so that no process ever loads half a file;
/// executable when `executable`. Its path.
pub(crate) fn install_carried(
    dir: &Path,
    stem: &str,
    suffix: &str,
    bytes: &[u8],
    executable: bool,
) -> io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    let digest = hex::encode(&Sha256::digest(bytes)[..6]);
    let path = dir.join(format!("mediaedit-{stem}-{digest}{suffix}"));
    // Its name is its content: one written before (by another node, or another
    // engine of this process) is already this file.
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(path);
    }
    // A name of its own for every writer, threads of one process included.
    let mut staging = tempfile::Builder::new()
        .prefix(&format!(".mediaedit-{stem}-"))
        .tempfile_in(dir)?;
    staging.write_all(bytes)?;
    let mode = if executable { 0o755 } else { 0o644 };
    staging
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    // Closed before it takes its name: a program open for writing cannot be run.
    staging
        .into_temp_path()
        .persist(&path)
        .map_err(|e| e.error)?;
    Ok(path)
}
