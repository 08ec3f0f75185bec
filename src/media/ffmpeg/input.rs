//! How ffmpeg and ffprobe are told to read a local file: always through the demuxer of
//! its sniffed format and the `file:` protocol, never by guessing.

use std::ffi::OsString;
use std::path::Path;

use crate::format::MediaFormat;

/// The ffmpeg demuxer for a sniffed format, passed as `-f` so that ffmpeg never probes
/// content itself: a guessed playlist or concat format could make it open other files
/// or URLs.
pub(crate) fn demuxer(format: MediaFormat) -> &'static str {
    match format {
        MediaFormat::Jpeg => "jpeg_pipe",
        MediaFormat::Png => "png_pipe",
        MediaFormat::Webp => "webp_pipe",
        MediaFormat::Gif => "gif",
        // ISO-BMFF: MP4, QuickTime, 3GPP (HEIF and AVIF are not given to ffmpeg).
        MediaFormat::Mp4 | MediaFormat::Mov | MediaFormat::ThreeGp => "mov",
        MediaFormat::Heif | MediaFormat::Avif => "mov",
        MediaFormat::Webm | MediaFormat::Mkv => "matroska",
        MediaFormat::Ogv => "ogg",
        MediaFormat::Avi => "avi",
        MediaFormat::MpegTs => "mpegts",
        MediaFormat::Tiff => "tiff_pipe",
        MediaFormat::Bmp => "bmp_pipe",
        MediaFormat::M4a => "mov",
        MediaFormat::Mp3 => "mp3",
        MediaFormat::Opus => "ogg",
        MediaFormat::Wav => "wav",
        // Our own text outputs, never sniffed from a source nor given to ffmpeg: the
        // raw `data` demuxer, which opens nothing else, should one ever be.
        MediaFormat::Hls | MediaFormat::Mpd | MediaFormat::Vtt => "data",
        // Drawn by resvg or poppler only: ffmpeg's SVG decoder (librsvg) would follow links.
        MediaFormat::Svg | MediaFormat::Pdf => "data",
        // Decoded in-process by jxl-oxide only (`image::codec::jxl`).
        MediaFormat::Jxl => "data",
    }
}

/// A local path as an ffmpeg URL: the `file:` protocol, so that a name like
/// `concat:a|b` or one starting with `-` is read as a plain file name.
pub(crate) fn file_url(path: &Path) -> OsString {
    let mut url = OsString::from("file:");
    url.push(path.as_os_str());
    url
}
