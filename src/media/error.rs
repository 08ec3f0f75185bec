//! Why a media operation failed, and the stable code each failure reports.

use crate::error_code::Code;
use crate::format::MediaFormat;
use crate::media::sniff;

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
