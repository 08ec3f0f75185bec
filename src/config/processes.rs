//! How ffmpeg and ffprobe run: their limits, the warm processes waiting for a run,
//! and the headers read without them (docs/API.md's limits table).

use clap::Args;

/// Settings of the ffmpeg and ffprobe processes.
#[derive(Debug, Clone, Args)]
pub struct ProcessConfig {
    /// Bytes of data memory (heap) each ffmpeg or ffprobe process may use; a file that
    /// needs more fails its edit with `memory_limit_exceeded`. 0 turns the limit off.
    #[arg(long, env = "MEDIAEDIT_PROCESS_MEMORY_LIMIT", default_value_t = 2 << 30)]
    pub process_memory_limit: u64,

    /// ffmpeg and ffprobe processes kept started, libraries loaded, waiting for their
    /// next run, per program: a video edit does not wait the 50 ms ffmpeg takes to
    /// load its libraries. Each holds about 10 MiB of its own memory. 0 turns it off.
    #[arg(long, env = "MEDIAEDIT_WARM_PROCESSES", default_value_t = 2)]
    pub warm_processes: usize,

    /// Read MP4/MOV and Matroska/WebM headers (size, duration, frame count) in this
    /// process rather than asking ffprobe, which takes a process start per file.
    /// `false` asks ffprobe for every file (see docs/PERFORMANCE.md for what each saves).
    #[arg(long, env = "MEDIAEDIT_HEADER_READERS", default_value_t = true, action = clap::ArgAction::Set)]
    pub header_readers: bool,

    /// Seconds one ffmpeg run may take before it is killed.
    #[arg(long, env = "MEDIAEDIT_PROCESS_TIMEOUT_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub process_timeout_secs: u64,
}
