//! Videos: what is known of one (probed by ffprobe, or read from an MP4 or Matroska
//! file's headers in this process), and what the video outputs share.
//!
//! - `info`: [`info::VideoInfo`], what the recipes know of a source, and its limits
//!   check; `inspect` reads it (in process or by ffprobe) and caches it per file.
//! - `probe`: the typed result of `ffprobe`.
//! - `mp4`, `mkv`: the headers of the common outputs, read without a process.
//! - `convert`: the shape of most video commands (inspect, then one ffmpeg run).
//! - `hls`: the HLS playlists of `video-to-hls` (variants, segments, measured rates);
//!   `hls_codecs`: the `CODECS` of its AV1 variants, which ffmpeg leaves out;
//!   `hls_variants`: the variants ffmpeg leaves out of the master (a silent AV1 rung);
//!   `ladder_fit`: the rungs of `ladder: auto`, measured on samples of the video;
//!   `dash`: the DASH manifest over the same segments (`dash: true`).
//! - `chunked`: long Theora and VP9 encodes and HLS ladders split at keyframes,
//!   encoded in parallel, joined without re-encoding.
//! - `hdr`: HLG and PQ sources, and the tone mapping of their 8-bit outputs.
//! - `h264`: what the H.264 outputs share (colour tags, exact frame rates, the 4K box).
//! - `frames`: every frame of a video decoded once by ffmpeg, encoded here.
//! - `shown_frame`: the frame shown at a time; `stills`: the frames shown at some
//!   times, as PNGs, a batch of them an ffmpeg run; `frame_score`: a poster candidate's
//!   worth; `audio`: an audio track and its loudness; `loudness`: the `loudness`
//!   option's measuring pass and normalising filter.
//! - `overlay`: `watermark` and `text` on a video, one ffmpeg run.
//! - `faces`: `blur-faces` on a video: faces found on sampled frames, hidden by ffmpeg.

pub(crate) mod audio;
pub(crate) mod chunked;
pub(crate) mod convert;
pub(crate) mod dash;
pub(crate) mod faces;
pub(crate) mod ffprobe;
pub(crate) mod frame_score;
pub(crate) mod frames;
pub(crate) mod h264;
pub(crate) mod hdr;
pub(crate) mod hdr_source;
pub(crate) mod hls;
pub(crate) mod hls_codecs;
pub(crate) mod hls_variants;
pub(crate) mod info;
pub(crate) mod inspect;
pub(crate) mod inspect_cache;
pub(crate) mod ladder_fit;
pub(crate) mod loudness;
pub(crate) mod mkv;
pub(crate) mod mp4;
pub(crate) mod overlay;
pub(crate) mod probe;
pub(crate) mod scenes;
pub(crate) mod shown_frame;
pub(crate) mod stills;
