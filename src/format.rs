//! The media formats the service reads and writes, detected from content.
//!
//! A leaf module: the API (content types, the catalog), the edits layer and the
//! media layer all name formats, so the names live below all of them.

use serde::{Deserialize, Serialize};

/// A container or image format, as detected from a file's bytes (never from a URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaFormat {
    Jpeg,
    Png,
    Webp,
    Gif,
    Mp4,
    Mov,
    Ogv,
    Webm,
    /// Matroska other than WebM (`.mkv`): read, never written.
    Mkv,
    /// Read, never written.
    Avi,
    /// MPEG transport stream (`.ts`, `.mts`): read, never written.
    MpegTs,
    /// 3GPP/3GPP2 (`.3gp`, `.3g2`), ISO-BMFF like MP4: read, never written.
    ThreeGp,
    /// HEIC/HEIF (iPhone photos): read, never written.
    Heif,
    /// Read, and written by `resize-image` (`format: "avif"`).
    Avif,
    /// JPEG XL: read (by jxl-oxide, animations included) and written (`format: "jxl"`).
    Jxl,
    /// Read (first page), never written.
    Tiff,
    /// Read, never written.
    Bmp,
    /// Read (drawn at the size an edit needs, `media::image::codec::svg`), never written.
    Svg,
    /// A page of a PDF, drawn by poppler (`media::pdf`) then read as a BMP: never written.
    Pdf,
    /// An HLS master playlist (`video-to-hls`): written, never read. Its media
    /// playlists and fMP4 segments are stored beside it (`storage::OutputKey`).
    Hls,
    /// A DASH manifest (`video-to-hls` with `dash: true`): written, never read. It
    /// names the segments of the HLS output stored just before it.
    Mpd,
    /// A WebVTT file (`video-storyboard`'s cues): written, never read.
    Vtt,
    /// AAC audio in an MPEG-4 file (`.m4a`): written by `video-to-audio`.
    M4a,
    /// MP3 audio: written by `video-to-audio`.
    Mp3,
    /// Opus audio in Ogg (`.opus`): written by `video-to-audio`.
    Opus,
    /// WAV (PCM) audio: read by the audio commands, never written.
    Wav,
}

/// The still images the image commands read: decoded in-process.
pub const STILL_IMAGES: &[MediaFormat] = &[
    MediaFormat::Jpeg,
    MediaFormat::Png,
    MediaFormat::Webp,
    MediaFormat::Tiff,
    MediaFormat::Bmp,
    MediaFormat::Heif,
    MediaFormat::Avif,
    MediaFormat::Jxl,
    MediaFormat::Svg,
];

/// What the image commands read: the still images, GIF (its first frame for
/// `image-to-video`; every frame through `resize-image` and `image-to-webp`), and a
/// PDF's page (drawn to a picture before the command runs).
pub const IMAGE_INPUTS: &[MediaFormat] = &[
    MediaFormat::Jpeg,
    MediaFormat::Png,
    MediaFormat::Webp,
    MediaFormat::Gif,
    MediaFormat::Tiff,
    MediaFormat::Bmp,
    MediaFormat::Heif,
    MediaFormat::Avif,
    MediaFormat::Jxl,
    MediaFormat::Svg,
    MediaFormat::Pdf,
];

/// The video containers every video command reads, each through its own named ffmpeg
/// demuxer (`probe::demuxer`).
pub const VIDEO_CONTAINERS: &[MediaFormat] = &[
    MediaFormat::Mp4,
    MediaFormat::Mov,
    MediaFormat::Webm,
    MediaFormat::Mkv,
    MediaFormat::Avi,
    MediaFormat::MpegTs,
    MediaFormat::ThreeGp,
    MediaFormat::Ogv,
];

/// The audio-only formats the audio commands read besides the video containers.
pub const AUDIO_FORMATS: &[MediaFormat] = &[
    MediaFormat::M4a,
    MediaFormat::Mp3,
    MediaFormat::Opus,
    MediaFormat::Wav,
];

/// What `video-to-audio` and `audio-waveform` read: the video containers (their first
/// audio track) and the audio formats.
pub const VIDEOS_AND_AUDIO: &[MediaFormat] =
    &concat::<{ VIDEO_CONTAINERS.len() + AUDIO_FORMATS.len() }>(VIDEO_CONTAINERS, AUDIO_FORMATS);

/// What `watermark` and `text` read: every image input and every video container.
pub const IMAGES_AND_VIDEOS: &[MediaFormat] =
    &concat::<{ IMAGE_INPUTS.len() + VIDEO_CONTAINERS.len() }>(IMAGE_INPUTS, VIDEO_CONTAINERS);

/// `a` then `b`, in a constant (`N` their lengths together).
const fn concat<const N: usize>(a: &[MediaFormat], b: &[MediaFormat]) -> [MediaFormat; N] {
    let mut out = [MediaFormat::Jpeg; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

impl MediaFormat {
    /// File extension (without dot) used for stored outputs.
    pub fn extension(self) -> &'static str {
        match self {
            MediaFormat::Jpeg => "jpeg",
            MediaFormat::Png => "png",
            MediaFormat::Webp => "webp",
            MediaFormat::Gif => "gif",
            MediaFormat::Mp4 => "mp4",
            MediaFormat::Mov => "mov",
            MediaFormat::Ogv => "ogv",
            MediaFormat::Webm => "webm",
            MediaFormat::Mkv => "mkv",
            MediaFormat::Avi => "avi",
            MediaFormat::MpegTs => "ts",
            MediaFormat::ThreeGp => "3gp",
            MediaFormat::Heif => "heic",
            MediaFormat::Avif => "avif",
            MediaFormat::Jxl => "jxl",
            MediaFormat::Tiff => "tiff",
            MediaFormat::Bmp => "bmp",
            MediaFormat::Svg => "svg",
            MediaFormat::Pdf => "pdf",
            MediaFormat::Hls => "m3u8",
            MediaFormat::Mpd => "mpd",
            MediaFormat::Vtt => "vtt",
            MediaFormat::M4a => "m4a",
            MediaFormat::Mp3 => "mp3",
            MediaFormat::Opus => "opus",
            MediaFormat::Wav => "wav",
        }
    }

    /// MIME type served with downloads.
    pub fn mime(self) -> &'static str {
        match self {
            MediaFormat::Jpeg => "image/jpeg",
            MediaFormat::Png => "image/png",
            MediaFormat::Webp => "image/webp",
            MediaFormat::Gif => "image/gif",
            MediaFormat::Mp4 => "video/mp4",
            MediaFormat::Mov => "video/quicktime",
            MediaFormat::Ogv => "video/ogg",
            MediaFormat::Webm => "video/webm",
            MediaFormat::Mkv => "video/x-matroska",
            MediaFormat::Avi => "video/x-msvideo",
            MediaFormat::MpegTs => "video/mp2t",
            MediaFormat::ThreeGp => "video/3gpp",
            MediaFormat::Heif => "image/heic",
            MediaFormat::Avif => "image/avif",
            MediaFormat::Jxl => "image/jxl",
            MediaFormat::Tiff => "image/tiff",
            MediaFormat::Bmp => "image/bmp",
            MediaFormat::Svg => "image/svg+xml",
            MediaFormat::Pdf => "application/pdf",
            MediaFormat::Hls => "application/vnd.apple.mpegurl",
            MediaFormat::Mpd => "application/dash+xml",
            MediaFormat::Vtt => "text/vtt",
            MediaFormat::M4a => "audio/mp4",
            MediaFormat::Mp3 => "audio/mpeg",
            MediaFormat::Opus => "audio/ogg; codecs=opus",
            MediaFormat::Wav => "audio/wav",
        }
    }

    /// The format a stored file's extension names, for serving downloads.
    pub fn from_extension(ext: &str) -> Option<MediaFormat> {
        Some(match ext {
            "jpeg" | "jpg" => MediaFormat::Jpeg,
            "png" => MediaFormat::Png,
            "webp" => MediaFormat::Webp,
            "gif" => MediaFormat::Gif,
            "mp4" => MediaFormat::Mp4,
            "mov" => MediaFormat::Mov,
            "ogv" => MediaFormat::Ogv,
            "webm" => MediaFormat::Webm,
            "avif" => MediaFormat::Avif,
            "jxl" => MediaFormat::Jxl,
            "m3u8" => MediaFormat::Hls,
            "mpd" => MediaFormat::Mpd,
            "vtt" => MediaFormat::Vtt,
            "m4a" => MediaFormat::M4a,
            "mp3" => MediaFormat::Mp3,
            "opus" => MediaFormat::Opus,
            _ => return None,
        })
    }

    /// MP4, MOV or 3GP: the ISO-BMFF video files whose headers `mp4` reads in-process
    /// (and whose timing a stream-copied speed change keeps exact).
    pub fn is_iso_bmff_video(self) -> bool {
        matches!(
            self,
            MediaFormat::Mp4 | MediaFormat::Mov | MediaFormat::ThreeGp
        )
    }

    /// Whether ffmpeg can start reading it at the keyframe before any time: every
    /// container but MPEG-TS, which has no index, so a seek lands on bytes and may find
    /// no keyframe after them (an 8 s clip with one keyframe decodes nothing from 4 s).
    /// Only such a video is cut into chunks.
    pub fn seeks_to_keyframes(self) -> bool {
        self != MediaFormat::MpegTs
    }

    /// Whether it is one of the [`VIDEO_CONTAINERS`].
    pub fn is_video(self) -> bool {
        VIDEO_CONTAINERS.contains(&self)
    }

    /// One of the [`AUDIO_FORMATS`]: sound and no pictures.
    pub fn is_audio(self) -> bool {
        AUDIO_FORMATS.contains(&self)
    }

    /// One of the [`STILL_IMAGES`]: what the image commands read.
    pub fn is_image(self) -> bool {
        STILL_IMAGES.contains(&self)
    }

    /// Human name used in error details.
    pub fn name(self) -> &'static str {
        match self {
            MediaFormat::Jpeg => "JPEG",
            MediaFormat::Png => "PNG",
            MediaFormat::Webp => "WebP",
            MediaFormat::Gif => "GIF",
            MediaFormat::Mp4 => "MP4",
            MediaFormat::Mov => "QuickTime MOV",
            MediaFormat::Ogv => "Ogg",
            MediaFormat::Webm => "WebM",
            MediaFormat::Mkv => "Matroska (MKV)",
            MediaFormat::Avi => "AVI",
            MediaFormat::MpegTs => "MPEG-TS",
            MediaFormat::ThreeGp => "3GP",
            MediaFormat::Heif => "HEIC/HEIF",
            MediaFormat::Avif => "AVIF",
            MediaFormat::Jxl => "JPEG XL",
            MediaFormat::Tiff => "TIFF",
            MediaFormat::Bmp => "BMP",
            MediaFormat::Svg => "SVG",
            MediaFormat::Pdf => "PDF",
            MediaFormat::Hls => "HLS",
            MediaFormat::Mpd => "DASH",
            MediaFormat::Vtt => "WebVTT",
            MediaFormat::M4a => "M4A (AAC)",
            MediaFormat::Mp3 => "MP3",
            MediaFormat::Opus => "Opus",
            MediaFormat::Wav => "WAV",
        }
    }
}

/// Output format of `resize-image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Jpeg,
    Png,
    Webp,
    Avif,
    /// JPEG XL (libjxl), animations included.
    Jxl,
    /// Only for a GIF source (no `format` names it): animated GIFs stay GIFs.
    Gif,
}

impl ImageFormat {
    /// The names the `format` option takes (`jpg` is `jpeg`), in the order errors and
    /// the command catalog list them.
    pub const OPTION_NAMES: [&'static str; 6] = ["jpeg", "jpg", "png", "webp", "avif", "jxl"];

    /// The format a `format` option names, if it names one.
    pub fn from_option_name(name: &str) -> Option<ImageFormat> {
        Some(match name {
            "jpeg" | "jpg" => ImageFormat::Jpeg,
            "png" => ImageFormat::Png,
            "webp" => ImageFormat::Webp,
            "avif" => ImageFormat::Avif,
            "jxl" => ImageFormat::Jxl,
            _ => return None,
        })
    }

    /// The container format a file written in this image format is detected as.
    pub fn media_format(self) -> MediaFormat {
        match self {
            ImageFormat::Jpeg => MediaFormat::Jpeg,
            ImageFormat::Png => MediaFormat::Png,
            ImageFormat::Webp => MediaFormat::Webp,
            ImageFormat::Avif => MediaFormat::Avif,
            ImageFormat::Jxl => MediaFormat::Jxl,
            ImageFormat::Gif => MediaFormat::Gif,
        }
    }

    /// The image format of `format`, or `None` for formats the image steps cannot read.
    pub fn from_media_format(format: MediaFormat) -> Option<ImageFormat> {
        match format {
            MediaFormat::Jpeg => Some(ImageFormat::Jpeg),
            MediaFormat::Png => Some(ImageFormat::Png),
            MediaFormat::Webp => Some(ImageFormat::Webp),
            MediaFormat::Avif => Some(ImageFormat::Avif),
            MediaFormat::Jxl => Some(ImageFormat::Jxl),
            MediaFormat::Gif => Some(ImageFormat::Gif),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_and_videos_are_the_image_inputs_then_the_containers() {
        let both: Vec<_> = IMAGE_INPUTS
            .iter()
            .chain(VIDEO_CONTAINERS)
            .copied()
            .collect();
        assert_eq!(IMAGES_AND_VIDEOS, both.as_slice());
    }
}
