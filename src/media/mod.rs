//! Media operations: content sniffing, in-process image steps and the ffmpeg wrapper.
//!
//! This module knows nothing of edits; the commands (`crate::commands`) are built
//! from the capabilities here. Every operation reads one local file and writes its
//! outputs into a directory the caller owns (the job's temp dir).
//!
//! - `sniff`: the format of a file from its first bytes (every kind: a leaf).
//! - `image`: still pictures — decoders and encoders (`image::codec`), headers and
//!   pixel limits (`image::decode`), colour, YCbCr, resizing and the per-frame
//!   operations, placeholders.
//! - `animation`: animated GIF, WebP, APNG and AVIF, frame by frame.
//! - `video`: facts about videos — `ffprobe`'s typed view, the in-process MP4 and
//!   Matroska readers, output descriptions — the H.264 outputs' shared settings,
//!   frames decoded by ffmpeg, and overlays on video.
//! - `ffmpeg`: the external programs — the one process wrapper, warm processes,
//!   progress reports, and the head and limit checks of every transcode.
//! - `limits`: the limits a moving source is checked against (a leaf).
//! - `describe`: what an output file is, for `attributes.outputs`.
//! - `work`: a file's pixels × frames from its headers (the engine's cost estimate).
//! - `cancel`: stopping in-process work whose job was given up.
//! - `memory`: the memory budget in-process steps are charged against before they
//!   allocate.
//! - `cores`: pictures worked in bands of rows, one per core.
//! - `image_transform`: the image commands' entry points on [`Media`].

pub mod animation;
mod blocking;
mod cancel;
mod cores;
mod describe;
pub(crate) mod ffmpeg;
#[doc(hidden)]
pub mod fuzzing;
pub mod image;
mod image_transform;
pub(crate) mod libraries;
pub(crate) mod limits;
pub mod memory;
mod sniff;
pub(crate) mod video;
mod work;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod testutil;

pub use crate::format::{
    ImageFormat, MediaFormat, AUDIO_FORMATS, IMAGES_AND_VIDEOS, IMAGE_INPUTS, STILL_IMAGES,
    VIDEOS_AND_AUDIO, VIDEO_CONTAINERS,
};
pub(crate) use blocking::blocking;
pub use describe::Described;
pub use ffmpeg::progress::ProgressFn;
pub use image::decode::inspect_image;
pub use image::placeholders::Placeholders;
pub use libraries::check as check_libraries;
pub use sniff::sniff;
pub use video::probe::{CodecType, Probe, ProbeFormat, ProbeStream};
pub use work::Work;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub(crate) use cores::{band_count, cores, join_bands};
use ffmpeg::process::ProcessRunner;

use crate::error_code::Code;

/// A local file together with its detected format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFile {
    pub path: PathBuf,
    pub format: MediaFormat,
}

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
    /// The most memory one in-process step may be charged (`media::memory`).
    pub max_step_memory_bytes: u64,
    /// The memory the in-process steps running at once share.
    pub memory_budget_bytes: u64,
}

/// Why a media operation failed. Every variant maps to a stable snake_case code.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// `found`: the format's name, `None` when the bytes match no format this service
    /// reads; `takes`: what the command reads (empty when not known).
    #[error("{}", sniff::unsupported_message(.found.as_deref(), .takes))]
    UnsupportedInputFormat {
        found: Option<String>,
        takes: Vec<MediaFormat>,
    },
    /// A format the service does not read, named from its signature (see
    /// `sniff::sniff_unread`); `takes`: what the command reads (empty when not known).
    #[error("{}", sniff::unread_message(.found, .takes))]
    UnreadFormat {
        found: &'static str,
        takes: Vec<MediaFormat>,
    },
    #[error("the image is {width}x{height} pixels, more than the limit of {limit} pixels")]
    ImageTooLarge { width: u64, height: u64, limit: u64 },
    #[error("the output would be {width}x{height} pixels, more than the limit of {limit} pixels")]
    OutputTooLarge { width: u64, height: u64, limit: u64 },
    /// The output fits the pixel limit but not the output format (WebP sides stop at 16383).
    #[error(
        "the output would be {width}x{height} pixels, but {format} allows at most {max_side} pixels on a side"
    )]
    OutputTooLargeForFormat {
        format: &'static str,
        width: u64,
        height: u64,
        max_side: u64,
    },
    #[error("the output would be smaller than 1 pixel on a side")]
    OutputTooSmall,
    /// `crop-image`'s box does not lie wholly inside the upright picture.
    #[error(
        "the crop box of {width}x{height} pixels at ({x}, {y}) does not lie inside the {image_width}x{image_height} picture"
    )]
    CropOutsideImage {
        x: u32,
        y: u32,
        width: u32,
        height: u32,
        image_width: u32,
        image_height: u32,
    },
    /// A numeric argument the caller should have validated (e.g. a zero or NaN fps).
    #[error("{name} must be {expected}")]
    InvalidParameter {
        name: &'static str,
        expected: &'static str,
    },
    #[error("the video lasts {seconds:.1} seconds, more than the limit of {limit} seconds")]
    VideoTooLong { seconds: f64, limit: f64 },
    #[error(
        "the video is {width}x{height} pixels, more than the limit of {limit} pixels per frame"
    )]
    VideoTooLarge { width: u32, height: u32, limit: u64 },
    /// `what` names the limit: of a source, or of `extract-frames`.
    #[error("the video has {frames} frames, more than the {limit} {what}")]
    TooManyFrames {
        frames: u64,
        limit: u64,
        what: &'static str,
    },
    /// An animated image whose canvas × frames passes `max_animation_pixels`.
    #[error(
        "the animation has {frames} frames of {width}x{height} pixels, {} million pixels in all, more than the limit of {} million pixels summed over an animation's frames",
        (u64::from(*.width) * u64::from(*.height)).saturating_mul(*.frames) / 1_000_000,
        .limit / 1_000_000
    )]
    AnimationTooLarge {
        width: u32,
        height: u32,
        frames: u64,
        limit: u64,
    },
    /// An in-process step whose memory estimate passes one step's limit
    /// (`media::memory`).
    #[error(
        "{what} would take about {} MiB of the service's memory, more than the limit of {} MiB for one step; use a smaller source or smaller options",
        .bytes >> 20,
        .limit >> 20
    )]
    MemoryTooLarge {
        what: String,
        bytes: u64,
        limit: u64,
    },
    #[error("the file could not be decoded: {0}")]
    InvalidMedia(String),
    /// An audio command given a file with no audio stream.
    #[error("the file has no audio track: give a video with sound, or an audio file")]
    NoAudioTrack,
    #[error("{program} failed: {stderr_tail}")]
    ProcessFailed {
        program: String,
        stderr_tail: String,
    },
    #[error("{program} needed more memory than the limit of {limit_mib} MiB for this file")]
    MemoryLimitExceeded { program: String, limit_mib: u64 },
    #[error("{program} took longer than {seconds} seconds")]
    Timeout { program: String, seconds: u64 },
    #[error("{program} is not installed")]
    ToolMissing { program: String },
    /// The job was given up while this work ran (see `cancel`); nobody reads it.
    #[error("the work was canceled")]
    Canceled,
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl MediaError {
    /// A `found` file that a command taking only `takes` was given.
    pub fn unsupported(found: MediaFormat, takes: &[MediaFormat]) -> MediaError {
        MediaError::UnsupportedInputFormat {
            found: Some(found.name().to_string()),
            takes: takes.to_vec(),
        }
    }

    /// Stable error code reported in the failed edit's `error.code`.
    pub fn code(&self) -> Code {
        match self {
            MediaError::UnsupportedInputFormat { .. } | MediaError::UnreadFormat { .. } => {
                Code::UnsupportedInputFormat
            }
            MediaError::ImageTooLarge { .. } => Code::ImageTooLarge,
            MediaError::OutputTooLarge { .. } => Code::OutputTooLarge,
            MediaError::OutputTooLargeForFormat { .. } => Code::OutputTooLarge,
            MediaError::OutputTooSmall => Code::OutputTooSmall,
            MediaError::CropOutsideImage { .. } => Code::CropOutsideImage,
            MediaError::InvalidParameter { .. } => Code::InvalidParameter,
            MediaError::VideoTooLong { .. } => Code::VideoTooLong,
            MediaError::VideoTooLarge { .. } => Code::VideoTooLarge,
            MediaError::TooManyFrames { .. } => Code::TooManyFrames,
            MediaError::AnimationTooLarge { .. } => Code::TooMuchWork,
            MediaError::MemoryTooLarge { .. } => Code::TooMuchWork,
            MediaError::InvalidMedia(_) => Code::InvalidMedia,
            MediaError::NoAudioTrack => Code::NoAudioTrack,
            MediaError::ProcessFailed { .. } => Code::ProcessingFailed,
            MediaError::MemoryLimitExceeded { .. } => Code::MemoryLimitExceeded,
            MediaError::Timeout { .. } => Code::ProcessingTimeout,
            MediaError::ToolMissing { .. } => Code::InternalError,
            MediaError::Canceled => Code::InternalError,
            MediaError::Io(_) => Code::InternalError,
        }
    }

    /// Whether trying again later may succeed (only local I/O trouble qualifies).
    pub fn is_retryable(&self) -> bool {
        matches!(self, MediaError::Io(_))
    }
}

/// Entry point for media operations; cheap to clone.
#[derive(Clone)]
pub struct Media {
    inner: Arc<Inner>,
}

struct Inner {
    config: MediaConfig,
    /// Shared by every clone so that `max_processes` bounds the whole service.
    runner: ProcessRunner,
    /// The last video probes, so that one file is probed once (see `transcode`).
    info_cache: video::inspect_cache::InfoCache,
    /// Shared by every clone so that the budget bounds the whole service.
    memory: Arc<memory::MemoryBudget>,
}

impl Media {
    /// Builds the media layer; clones share one process semaphore.
    pub fn new(config: MediaConfig) -> Self {
        let runner = ProcessRunner::new(config.max_processes, config.process_timeout)
            .with_memory_limit(config.process_memory_limit)
            .with_scratch_dir(config.scratch_dir.as_deref())
            .with_warm_processes(config.warm_processes, config.shim_dir.as_deref());
        let memory =
            memory::MemoryBudget::new(config.max_step_memory_bytes, config.memory_budget_bytes);
        Media {
            inner: Arc::new(Inner {
                memory,
                config,
                runner,
                info_cache: video::inspect_cache::InfoCache::default(),
            }),
        }
    }

    /// The configuration this instance was built with.
    pub fn config(&self) -> &MediaConfig {
        &self.inner.config
    }

    /// The memory budget in-process steps are charged against.
    pub fn memory(&self) -> &Arc<memory::MemoryBudget> {
        &self.inner.memory
    }

    /// Starts the warm ffmpeg and ffprobe processes now, so that the first video edit
    /// does not wait for them (they start after each run otherwise).
    pub fn prewarm(&self) {
        self.runner().prewarm(&self.config().ffmpeg);
        self.runner().prewarm(&self.config().ffprobe);
    }

    pub(crate) fn runner(&self) -> &ProcessRunner {
        &self.inner.runner
    }

    pub(crate) fn info_cache(&self) -> &video::inspect_cache::InfoCache {
        &self.inner.info_cache
    }

    pub(crate) fn limits(&self) -> limits::VideoLimits {
        let config = self.config();
        limits::VideoLimits {
            max_seconds: config.max_video_seconds,
            max_pixels: config.max_video_pixels,
            max_frames: config.max_video_frames,
        }
    }

    /// Detects the format of a local file from its first bytes.
    ///
    /// `UnsupportedInputFormat` when the bytes match none of the formats we handle
    /// (including an empty file); `Io` when the file cannot be read.
    pub async fn detect(&self, path: &Path) -> Result<MediaFormat, MediaError> {
        self.detect_for(path, &[]).await
    }

    /// [`Media::detect`] for a source of a command that takes `takes`, which the error
    /// for unrecognised bytes then names.
    pub async fn detect_for(
        &self,
        path: &Path,
        takes: &[MediaFormat],
    ) -> Result<MediaFormat, MediaError> {
        let head = sniff::read_head(path).await?;
        sniff::sniff(&head).ok_or_else(|| match sniff::sniff_unread(&head) {
            Some(found) => MediaError::UnreadFormat {
                found,
                takes: takes.to_vec(),
            },
            None => MediaError::UnsupportedInputFormat {
                found: None,
                takes: takes.to_vec(),
            },
        })
    }

    /// Runs `ffprobe` on a local file and returns its streams and container.
    ///
    /// The file's format is sniffed first and forced on ffprobe, so ffprobe never
    /// guesses (a guessed playlist format could make it open other files or URLs).
    /// `UnsupportedInputFormat` for files we cannot sniff; `ProcessFailed` when ffprobe
    /// rejects the file (most likely corrupt); `InvalidMedia` if its output is not the
    /// JSON we expect.
    pub async fn probe(&self, path: &Path) -> Result<Probe, MediaError> {
        let format = self.detect(path).await?;
        video::probe::run(self, path, format, false).await
    }
}

/// A fresh, unused path in `dir` with the extension of `format`.
///
/// A random name rather than a counter: several workers share one data directory.
pub(crate) fn output_path(dir: &Path, format: MediaFormat) -> PathBuf {
    dir.join(format!("{}.{}", uuid::Uuid::new_v4(), format.extension()))
}
