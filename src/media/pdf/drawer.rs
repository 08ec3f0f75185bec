//! The PDF drawer: a process of ours (`zygote.cpp`, built by `build.rs` and carried in
//! the binary) that loads poppler once and forks a child for each page it is asked
//! for, so a page costs a fork and its drawing rather than a program's start.
//!
//! Why: on a thumbnail, `pdftoppm` spent nine tenths of its 11 ms starting — the
//! kernel mapping 30 libraries, the dynamic loader relocating them, fontconfig parsing
//! its configuration — and 1 ms drawing (`perf`); `pdfinfo` started again to read the
//! size. The drawer's children draw with the same poppler, the same Splash rasterizer
//! and the same settings as `pdftoppm`'s defaults, pixel for pixel, in about 2 ms.
//!
//! What it runs under: a drawer is started like every child process
//! (`ProcessRunner::resident`: an empty environment plus the allow-list, the
//! memory limit, which its children inherit); each request waits for a permit counted
//! against `max_processes` and ends at the process timeout, when the drawer is killed
//! and its child with it (the child dies with its parent). Only the child opens the
//! user's file, and it exits after one page, so nothing of one document reaches the
//! next. Idle drawers wait for their next request, at most one per permit.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::OnceCell;

use crate::media::error::MediaError;
use crate::media::ffmpeg::child::install_carried;
use crate::media::ffmpeg::process::Resident;

/// The drawer as `build.rs` built it.
const DRAWER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pdf_drawer"));
/// How long a drawer may take to load poppler and say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
const NAME: &str = "the PDF drawer";

/// One page asked of the drawer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ask<'a> {
    pub input: &'a Path,
    /// Where the page is written, as a 24-bit BMP.
    pub output: &'a Path,
    /// From 1.
    pub page: u32,
    /// The size to draw in pixels, -1 following the page's shape from the other side;
    /// `(0, 0)` only reads the page's size.
    pub size: (i64, i64),
    /// The most pixels the drawing may have.
    pub max_pixels: u64,
}

/// What the drawer answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Answer {
    /// The page's size in points, turned by its rotation, and the document's pages.
    Size {
        pages: u32,
        width: f64,
        height: f64,
    },
    Drawn {
        width: u32,
        height: u32,
    },
    /// Not drawn: that many pixels is past the limit.
    Large {
        width: u64,
        height: u64,
    },
    /// Not drawn: its bitmap alone is past the process memory limit.
    Memory,
    Encrypted,
    Damaged,
    NoPage,
}

/// Reads one answer line; `None` for anything else.
pub(crate) fn parse_answer(line: &str) -> Option<Answer> {
    let mut words = line.split_whitespace();
    let kind = words.next()?;
    let mut next = || words.next();
    Some(match kind {
        "size" => Answer::Size {
            pages: next()?.parse().ok()?,
            width: next()?.parse().ok()?,
            height: next()?.parse().ok()?,
        },
        "drawn" => Answer::Drawn {
            width: next()?.parse().ok()?,
            height: next()?.parse().ok()?,
        },
        "large" => Answer::Large {
            width: next()?.parse().ok()?,
            height: next()?.parse().ok()?,
        },
        "memory" => Answer::Memory,
        "encrypted" => Answer::Encrypted,
        // A child that died before it answered was drawing something poppler could
        // not read (or ran out of memory doing it).
        "damaged" | "crashed" => Answer::Damaged,
        "no-page" => Answer::NoPage,
        _ => return None,
    })
}

/// The drawers of one engine: the runner's limits they run under, the program,
/// written out once, and the idle processes.
#[derive(Debug)]
pub(crate) struct Drawers {
    limits: Resident,
    dir: PathBuf,
    program: OnceCell<PathBuf>,
    idle: Mutex<Vec<Drawer>>,
}

/// One drawer process, waiting or answering.
#[derive(Debug)]
struct Drawer {
    /// Killed when dropped, and its child with it.
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Its `HOME` and `TMPDIR`, removed after it.
    _home: tempfile::TempDir,
}

impl Drawers {
    /// Drawers under `limits` whose program is written into `dir` at their first use.
    pub fn new(limits: Resident, dir: PathBuf) -> Drawers {
        Drawers {
            limits,
            dir,
            program: OnceCell::new(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Asks a drawer for `ask`: an idle one, or one started now (again once, if the
    /// idle one had died while it waited).
    pub async fn ask(&self, ask: Ask<'_>) -> Result<Answer, MediaError> {
        let limits = &self.limits;
        let _permit = limits.permit().await?;
        let idle = self.idle.lock().expect("drawers lock").pop();
        if let Some(mut drawer) = idle {
            match tokio::time::timeout(limits.timeout(), drawer.ask(&ask)).await {
                Ok(Ok(answer)) => return Ok(self.keep(drawer, answer)),
                Ok(Err(e)) => tracing::debug!(error = %e, "an idle PDF drawer was gone"),
                Err(_) => return Err(timeout(limits)),
            }
        }
        let mut drawer = self.start().await?;
        match tokio::time::timeout(limits.timeout(), drawer.ask(&ask)).await {
            Ok(Ok(answer)) => Ok(self.keep(drawer, answer)),
            Ok(Err(e)) => Err(MediaError::Io(e)),
            Err(_) => Err(timeout(limits)),
        }
    }

    /// Puts `drawer` back among the idle ones; `answer` passes through.
    fn keep(&self, drawer: Drawer, answer: Answer) -> Answer {
        self.idle.lock().expect("drawers lock").push(drawer);
        answer
    }

    /// The memory limit each drawer runs under, in bytes (0: none).
    pub fn memory_limit(&self) -> u64 {
        self.limits.memory_limit()
    }

    async fn start(&self) -> Result<Drawer, MediaError> {
        let limits = &self.limits;
        let program = self
            .program
            .get_or_try_init(|| async {
                let dir = self.dir.clone();
                let write = move || install_carried(&dir, "pdf-drawer", "", DRAWER, true);
                tokio::task::spawn_blocking(write)
                    .await
                    .map_err(std::io::Error::other)?
            })
            .await?;
        let home = limits.run_dir()?;
        let mut tries = 0;
        let mut child = loop {
            match limits.command(program, home.path()).spawn() {
                Ok(child) => break child,
                // Another thread's child, forked while the program was being written,
                // held it open for writing until its own exec: the program is whole.
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 20 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(MediaError::ToolMissing {
                        program: NAME.into(),
                    })
                }
                Err(e) => return Err(MediaError::Io(e)),
            }
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(MediaError::Io(std::io::Error::other(
                "drawer pipes missing",
            )));
        };
        let mut drawer = Drawer {
            _child: child,
            stdin,
            stdout: BufReader::new(stdout),
            _home: home,
        };
        let ready = tokio::time::timeout(READY_TIMEOUT, drawer.line()).await;
        match ready {
            Ok(Ok(line)) if line == "ready" => Ok(drawer),
            Ok(Ok(line)) if line.is_empty() && limits.memory_limit() > 0 => {
                Err(MediaError::MemoryLimitExceeded {
                    program: NAME.into(),
                    limit_mib: limits.memory_limit() >> 20,
                })
            }
            Ok(Ok(line)) => Err(MediaError::ProcessFailed {
                program: NAME.into(),
                stderr_tail: format!("it said {line:?} instead of ready"),
            }),
            Ok(Err(e)) => Err(MediaError::Io(e)),
            Err(_) => Err(timeout(limits)),
        }
    }
}

fn timeout(limits: &Resident) -> MediaError {
    MediaError::Timeout {
        program: NAME.into(),
        seconds: limits.timeout().as_secs_f64().ceil() as u64,
    }
}

impl Drawer {
    async fn ask(&mut self, ask: &Ask<'_>) -> std::io::Result<Answer> {
        use std::os::unix::ffi::OsStrExt;
        let mut request = Vec::new();
        let (width, height) = ask.size;
        let numbers = [
            ask.page.to_string(),
            width.to_string(),
            height.to_string(),
            ask.max_pixels.to_string(),
        ];
        let paths = [
            ask.input.as_os_str().as_bytes(),
            ask.output.as_os_str().as_bytes(),
        ];
        for field in paths
            .into_iter()
            .chain(numbers.iter().map(String::as_bytes))
        {
            if field.contains(&0) {
                return Err(std::io::Error::other("a NUL byte in a drawer request"));
            }
            request.extend_from_slice(field);
            request.push(0);
        }
        self.stdin.write_all(&request).await?;
        self.stdin.flush().await?;
        let line = self.line().await?;
        parse_answer(&line)
            .ok_or_else(|| std::io::Error::other(format!("the PDF drawer answered {line:?}")))
    }

    /// The next line it printed, without its ending; empty at end of file.
    async fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        self.stdout.read_line(&mut line).await?;
        Ok(line.trim_end().to_string())
    }
}
