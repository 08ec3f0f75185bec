//! The limits and tuning every media operation reads (built from `crate::config`).

use std::path::PathBuf;
use std::time::Duration;

/// Limits and tuning shared by all media operations.
#[derive(Debug, Clone)]
pub struct MediaConfig {
    /// Largest width*height accepted for an input image or produced for an output image.
    pub max_image_pixels: u64,
    /// Wall-clock limit for one external process run.
    pub process_timeout: Duration,
    /// How many ffmpeg processes may run at once.
    pub max_processes: usize,
    /// The ffmpeg binary (name looked up in PATH, or a path).
    pub ffmpeg: PathBuf,
    /// The ffprobe binary.
    pub ffprobe: PathBuf,
    /// Longest video (or GIF) source accepted, in seconds.
    pub max_video_seconds: f64,
    /// Largest video (or GIF) frame accepted, in pixels (width × height).
    pub max_video_pixels: u64,
    /// Most frames a video (or GIF) source may have.
    pub max_video_frames: u64,
    /// Most frames `extract-frames` writes for one video.
    pub max_extract_frames: u64,
    /// Frames a second `blur-faces` finds faces in, in a video (`--face-sample-fps`).
    pub face_sample_fps: f64,
    /// Most pixels an animated image may have summed over its frames (canvas ×
    /// frames, from its headers): an animation bomb is refused before decoding.
    pub max_animation_pixels: u64,
    /// Bytes of data memory each ffmpeg/ffprobe process may use; 0 for no limit.
    pub process_memory_limit: u64,
    /// Where each ffmpeg/ffprobe run gets a fresh directory for its `HOME` and
    /// `TMPDIR` (removed after it); `None` for the system temp dir.
    pub scratch_dir: Option<PathBuf>,
    /// ffmpeg (and ffprobe) processes kept started and waiting for their arguments,
    /// per program (`warm`); 0 starts every process when it is needed.
    pub warm_processes: usize,
    /// MP4/MOV and Matroska headers read in this process (`video::mp4`, `video::mkv`);
    /// `false` leaves every file to ffprobe.
    pub header_readers: bool,
    /// Where the library warm processes load is written; `None` turns them off.
    pub shim_dir: Option<PathBuf>,
    /// Least work (pixels × frames) of one chunk of a chunked encode; 0 never splits.
    pub min_chunk_work: u64,
    /// Cores one chunk of an HLS ladder counts for (x264 threads keep about two busy).
    pub ladder_cores_per_chunk: usize,
    /// Cores one chunk of a chunked x264 encode counts for (`--x264-cores-per-chunk`).
    pub x264_cores_per_chunk: usize,
    /// Cores one chunk of a chunked VP9 encode counts for (`--vp9-cores-per-chunk`).
    pub vp9_cores_per_chunk: usize,
    /// The most memory one in-process step may be charged (`media::memory`).
    pub max_step_memory_bytes: u64,
    /// The memory the in-process steps running at once share.
    pub memory_budget_bytes: u64,
}
