//! The external programs (ffmpeg, ffprobe) and what every run of them shares.
//!
//! - `child`: every child process's memory limit and allow-listed environment.
//! - `input`: the demuxer and `file:` URL every run reads its input through.
//! - `process`: the one wrapper every external program runs through (limits, a clean
//!   environment, stderr kept for the error).
//! - `warm`: ffmpeg and ffprobe started ahead of their runs, libraries loaded.
//! - `progress`: ffmpeg's `-progress` reports as fractions of the work.
//! - `transcode`: probe and limit checks and the head of every ffmpeg run a video
//!   command makes.

pub(crate) mod child;
pub(crate) mod input;
pub(crate) mod process;
pub(crate) mod progress;
pub(crate) mod transcode;
pub(crate) mod warm;
