//! Subtitles: the cues of an SRT or WebVTT file, read here (not by ffmpeg) so that a
//! malformed file is refused when the edit is created, by the line where it fails.
//!
//! - `cues`: the cues themselves (a leaf).
//! - `parse`: SRT and WebVTT text into [`Subtitles`] (a leaf).
//! - `retime`: the cues as a command's output shows them (`trim-video` shifts and cuts
//!   them, `modify-video-speed` scales them).
//! - `burn`: an ASS script of the cues, the bundled font beside it, and the ffmpeg
//!   filter (libass) that draws them into the frames.
//! - `vtt`: WebVTT written back, whole or cut in segments for an HLS rendition.
//! - `hls`: that rendition written beside an HLS ladder and named in its master.

mod burn;
mod cues;
pub mod hls;
mod parse;
mod retime;
mod vtt;

pub use burn::burn_filter;
pub use cues::{Cue, Subtitles};
pub use parse::{parse, SubtitlesError, MAX_BYTES};
pub use vtt::{segmented_vtt, whole_vtt};
