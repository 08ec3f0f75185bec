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
//! - `subtitles`: SRT and WebVTT cues read, retimed, burned (libass) and written as
//!   WebVTT segments.
//! - `limits`: the limits a moving source is checked against (a leaf).
//! - `describe`: what an output file is, for `attributes.outputs`.
//! - `work`: a file's pixels × frames from its headers (the engine's cost estimate).
//! - `cancel`: stopping in-process work whose job was given up.
//! - `memory`: the memory budget in-process steps are charged against before they
//!   allocate.
//! - `cores`: pictures worked in bands of rows, one per core.
//! - `image_transform`: the image commands' entry points on [`Media`].
//! - `engine`, `config`, `error`, `file`: the ground every part stands on — the
//!   [`Media`] handle, its [`MediaConfig`], [`MediaError`] and [`MediaFile`]; `detect`:
//!   `Media`'s format sniff and probe. This file holds only the `mod` lines and the
//!   re-exports for the code outside `media/`: nothing inside the folder imports it
//!   (scripts/import-circles.py counts the arrows running back up).

pub mod animation;
mod blocking;
mod cancel;
mod config;
mod cores;
mod describe;
mod detect;
mod engine;
mod error;
pub(crate) mod ffmpeg;
mod file;
#[doc(hidden)]
pub mod fuzzing;
pub mod image;
mod image_transform;
pub mod lending;
pub(crate) mod libraries;
pub(crate) mod limits;
pub mod memory;
mod pdf;
mod sniff;
pub mod subtitles;
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
pub use config::MediaConfig;
pub(crate) use cores::cores;
pub use describe::Described;
pub use engine::Media;
pub use error::MediaError;
pub use ffmpeg::progress::ProgressFn;
pub(crate) use file::output_path;
pub use file::MediaFile;
pub use image::decode::inspect_image;
pub use image::placeholders::Placeholders;
pub use libraries::check as check_libraries;
pub(crate) use pdf::PageSize;
pub use sniff::sniff;
pub use video::probe::{CodecType, Probe, ProbeFormat, ProbeStream};
pub use work::Work;
