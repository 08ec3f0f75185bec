//! Media operations: content sniffing, in-process image steps and the ffmpeg wrapper.
//!
//! This module knows nothing of edits or commands: the queue maps each command of a
//! pipeline onto one of the operations here. Every operation reads one local file and
//! writes its outputs into a directory the caller owns (the job's temp dir).

mod format;

pub use format::MediaFormat;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A local file together with its detected format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFile {
    pub path: PathBuf,
    pub format: MediaFormat,
}

/// Output format of `resize-image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Jpeg,
    Png,
    Webp,
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
}

/// Why a media operation failed. Every variant maps to a stable snake_case code.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error("the file is {found}, which this command does not accept")]
    UnsupportedInputFormat { found: String },
    #[error("the image is {width}x{height} pixels, more than the limit of {limit} pixels")]
    ImageTooLarge { width: u64, height: u64, limit: u64 },
    #[error("the output would be {width}x{height} pixels, more than the limit of {limit} pixels")]
    OutputTooLarge { width: u64, height: u64, limit: u64 },
    #[error("the output would be smaller than 1 pixel on a side")]
    OutputTooSmall,
    #[error("the file could not be decoded: {0}")]
    InvalidMedia(String),
    #[error("{program} failed: {stderr_tail}")]
    ProcessFailed {
        program: String,
        stderr_tail: String,
    },
    #[error("{program} took longer than {seconds} seconds")]
    Timeout { program: String, seconds: u64 },
    #[error("{program} is not installed")]
    ToolMissing { program: String },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl MediaError {
    /// Stable error code reported in the failed edit's `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            MediaError::UnsupportedInputFormat { .. } => "unsupported_input_format",
            MediaError::ImageTooLarge { .. } => "image_too_large",
            MediaError::OutputTooLarge { .. } => "output_too_large",
            MediaError::OutputTooSmall => "output_too_small",
            MediaError::InvalidMedia(_) => "invalid_media",
            MediaError::ProcessFailed { .. } => "processing_failed",
            MediaError::Timeout { .. } => "processing_timeout",
            MediaError::ToolMissing { .. } => "internal_error",
            MediaError::Io(_) => "internal_error",
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
    config: MediaConfig,
}

impl Media {
    pub fn new(config: MediaConfig) -> Self {
        Media { config }
    }

    pub fn config(&self) -> &MediaConfig {
        &self.config
    }

    /// Detects the format of a local file from its first bytes.
    pub async fn detect(&self, path: &Path) -> Result<MediaFormat, MediaError> {
        let _ = path;
        Err(MediaError::InvalidMedia("not yet implemented".into()))
    }

    /// `resize-image`: scales by `scale`, writes `format` (or the input's own format).
    pub async fn resize_image(
        &self,
        input: &MediaFile,
        scale: f64,
        format: Option<ImageFormat>,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let _ = (input, scale, format, out_dir);
        Err(MediaError::InvalidMedia("not yet implemented".into()))
    }

    /// `image-to-webp`: re-encodes an image as WebP, alpha kept.
    pub async fn image_to_webp(
        &self,
        input: &MediaFile,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let _ = (input, out_dir);
        Err(MediaError::InvalidMedia("not yet implemented".into()))
    }

    /// `image-to-video`: an H.264 MP4 showing the image for `duration` seconds at `fps`.
    pub async fn image_to_video(
        &self,
        input: &MediaFile,
        fps: f64,
        duration: f64,
        out_dir: &Path,
    ) -> Result<MediaFile, MediaError> {
        let _ = (input, fps, duration, out_dir);
        Err(MediaError::InvalidMedia("not yet implemented".into()))
    }
}
