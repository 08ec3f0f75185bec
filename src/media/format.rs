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
            _ => return None,
        })
    }

    /// A still image (JPEG, PNG, WebP): what the image commands read and write.
    pub fn is_image(self) -> bool {
        matches!(
            self,
            MediaFormat::Jpeg | MediaFormat::Png | MediaFormat::Webp
        )
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
        }
    }
}
