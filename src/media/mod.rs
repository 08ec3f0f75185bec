//! Media operations: content sniffing, in-process image steps and the ffmpeg wrapper.
//!
//! This module knows nothing of edits; the commands (`crate::commands`) are built
//! from the capabilities here. Every operation reads one local file and writes its
//! outputs into a directory the caller owns (the job's temp dir).
//!
//! - `sniff`: the format of a file from its first bytes.
//! - `decode`: image headers, pixel limits, EXIF orientation and decoding to upright pixels.
//! - `image_ops`: resizing, flattening and the image encoders.
//! - `process`: the one wrapper every external program runs through.
//! - `warm`: ffmpeg and ffprobe started ahead of their runs, libraries loaded.
//! - `probe`: the typed result of `ffprobe`.
//! - `progress`: ffmpeg's `-progress` reports as fractions of the work.
//! - `video`: what the H.264 outputs share (colour tags, exact frame rates, the 4K box).
//! - `transcode`: probe and limit checks and the ffmpeg run every video command uses.
//! - `gif`: a GIF's blocks (limits, timing, default palettes).
//! - `work`: a file's pixels × frames from its headers (the engine's cost estimate).
//! - `cancel`: stopping in-process work whose job was given up.
//! - `cores`: pictures worked in bands of rows, one per core.
//! - `overlay_video`: `watermark` and `text` on a video, one ffmpeg run.
//! - `placeholders`: the blurhash, thumbhash and dominant colour of an image output.

pub(crate) mod animation;
pub(crate) mod apng;
pub(crate) mod avif;
mod bmp;
mod cancel;
pub(crate) mod chunked;
mod colour;
mod cores;
mod decode;
mod describe;
mod exif;
mod format;
pub(crate) mod frames;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod gif;
mod heif;
mod heif_boxes;
pub mod image;
pub(crate) mod image_ops;
mod image_transform;
mod jpeg;
pub(crate) mod libraries;
mod mkv;
mod mp4;
mod overlay_video;
mod placeholders;
pub(crate) mod probe;
mod process;
mod progress;
mod sniff;
mod sys;
mod tiff;
pub(crate) mod transcode;
pub(crate) mod video;
mod warm;
mod work;
pub(crate) mod yuv;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod testutil;

pub use decode::inspect_image;
pub use describe::Described;
pub use format::{
    ImageFormat, MediaFormat, IMAGES_AND_VIDEOS, IMAGE_INPUTS, STILL_IMAGES, VIDEO_CONTAINERS,
};
pub use libraries::check as check_libraries;
pub use placeholders::Placeholders;
pub use probe::{CodecType, Probe, ProbeFormat, ProbeStream};
pub use progress::ProgressFn;
pub use sniff::sniff;
pub use work::Work;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub(crate) use cores::{band_count, cores, join_bands};
use process::ProcessRunner;

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
    /// Where the library warm processes load is written; `None` turns them off.
    pub shim_dir: Option<PathBuf>,
    /// Least work (pixels × frames) of one chunk of a chunked encode; 0 never splits.
    pub min_chunk_work: u64,
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
    #[error("the file could not be decoded: {0}")]
    InvalidMedia(String),
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
            MediaError::InvalidMedia(_) => Code::InvalidMedia,
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
    info_cache: transcode::InfoCache,
}

impl Media {
    /// Builds the media layer; clones share one process semaphore.
    pub fn new(config: MediaConfig) -> Self {
        let runner = ProcessRunner::new(config.max_processes, config.process_timeout)
            .with_memory_limit(config.process_memory_limit)
            .with_scratch_dir(config.scratch_dir.as_deref())
            .with_warm_processes(config.warm_processes, config.shim_dir.as_deref());
        Media {
            inner: Arc::new(Inner {
                config,
                runner,
                info_cache: transcode::InfoCache::default(),
            }),
        }
    }

    /// The configuration this instance was built with.
    pub fn config(&self) -> &MediaConfig {
        &self.inner.config
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

    pub(crate) fn info_cache(&self) -> &transcode::InfoCache {
        &self.inner.info_cache
    }

    pub(crate) fn limits(&self) -> transcode::VideoLimits {
        let config = self.config();
        transcode::VideoLimits {
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
        probe::run(self, path, format, false).await
    }
}

/// Runs CPU-heavy work off the async threads.
///
/// A panic inside is re-raised in the calling task so that the worker's panic boundary
/// sees it as it would any other bug, rather than as a media error.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, MediaError>
where
    F: FnOnce() -> Result<T, MediaError> + Send + 'static,
    T: Send + 'static,
{
    // Dropping this future (the job was given up) raises the flag the work checks
    // between its phases.
    let (_cancel_on_drop, f) = cancel::guarded(f);
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(MediaError::Io(std::io::Error::other(e))),
    }
}

/// A fresh, unused path in `dir` with the extension of `format`.
///
/// A random name rather than a counter: several workers share one data directory.
pub(crate) fn output_path(dir: &Path, format: MediaFormat) -> PathBuf {
    dir.join(format!("{}.{}", uuid::Uuid::new_v4(), format.extension()))
}
