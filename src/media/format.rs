//! The media formats the service reads and writes, detected from content.

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
    /// Read (first page), never written.
    Tiff,
    /// Read, never written.
    Bmp,
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
];

/// What the image commands read: the still images, and GIF (its first frame for
/// `image-to-video`; every frame through `resize-image` and `image-to-webp`).
pub const IMAGE_INPUTS: &[MediaFormat] = &[
    MediaFormat::Jpeg,
    MediaFormat::Png,
    MediaFormat::Webp,
    MediaFormat::Gif,
    MediaFormat::Tiff,
    MediaFormat::Bmp,
    MediaFormat::Heif,
    MediaFormat::Avif,
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
            MediaFormat::Tiff => "tiff",
            MediaFormat::Bmp => "bmp",
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
            MediaFormat::Tiff => "image/tiff",
            MediaFormat::Bmp => "image/bmp",
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
            _ => return None,
        })
    }

    /// Whether it is one of the [`VIDEO_CONTAINERS`].
    pub fn is_video(self) -> bool {
        VIDEO_CONTAINERS.contains(&self)
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
            MediaFormat::Tiff => "TIFF",
            MediaFormat::Bmp => "BMP",
        }
    }
}
