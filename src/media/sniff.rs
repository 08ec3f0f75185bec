//! Format detection from magic bytes.
//!
//! Only the first bytes are read: the format decides which decoder or ffmpeg demuxer
//! we hand the file to, so it must come from content, never from a name or URL.

use std::path::Path;

use tokio::io::AsyncReadExt;

use super::MediaFormat;

/// How many leading bytes [`sniff`] needs (ISO-BMFF brand ends at byte 12).
pub(crate) const HEAD_LEN: usize = 16;

/// Reads up to [`HEAD_LEN`] bytes from the start of `path` (fewer for a short file).
pub(crate) async fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = tokio::fs::File::open(path).await?;
    let mut head = Vec::with_capacity(HEAD_LEN);
    file.take(HEAD_LEN as u64).read_to_end(&mut head).await?;
    Ok(head)
}

/// The format whose signature `head` starts with, if any.
pub fn sniff(head: &[u8]) -> Option<MediaFormat> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(MediaFormat::Jpeg);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(MediaFormat::Png);
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some(MediaFormat::Gif);
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return Some(MediaFormat::Webp);
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        // QuickTime files name themselves `qt  `; every other brand (isom, mp42, M4V ...)
        // is MP4 for our purposes, and ffmpeg's demuxer reads both the same way.
        return Some(if &head[8..12] == b"qt  " {
            MediaFormat::Mov
        } else {
            MediaFormat::Mp4
        });
    }
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        return Some(MediaFormat::Webm);
    }
    if head.starts_with(b"OggS") {
        return Some(MediaFormat::Ogv);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_recognises_each_image_signature() {
        assert_eq!(
            sniff(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]),
            Some(MediaFormat::Jpeg)
        );
        assert_eq!(
            sniff(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some(MediaFormat::Png)
        );
        assert_eq!(sniff(b"GIF87a\x01\0\x01\0"), Some(MediaFormat::Gif));
        assert_eq!(sniff(b"GIF89a\x01\0\x01\0"), Some(MediaFormat::Gif));
        assert_eq!(sniff(b"RIFF\x24\0\0\0WEBPVP8 "), Some(MediaFormat::Webp));
    }

    #[test]
    fn sniff_tells_quicktime_from_other_iso_bmff_brands() {
        assert_eq!(
            sniff(b"\0\0\0\x14ftypqt  \0\0\x02\0"),
            Some(MediaFormat::Mov)
        );
        assert_eq!(
            sniff(b"\0\0\0\x20ftypisom\0\0\x02\0"),
            Some(MediaFormat::Mp4)
        );
        assert_eq!(sniff(b"\0\0\0\x18ftypmp42\0\0\0\0"), Some(MediaFormat::Mp4));
    }

    #[test]
    fn sniff_recognises_matroska_and_ogg() {
        assert_eq!(
            sniff(&[0x1A, 0x45, 0xDF, 0xA3, 0x9F]),
            Some(MediaFormat::Webm)
        );
        assert_eq!(sniff(b"OggS\0\x02"), Some(MediaFormat::Ogv));
    }

    #[test]
    fn sniff_refuses_unknown_short_and_near_miss_content() {
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"hello world, not media"), None);
        assert_eq!(sniff(&[0xFF, 0xD8]), None);
        assert_eq!(sniff(b"RIFF\x24\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"\0\0\0\x14ftyp"), None);
        assert_eq!(sniff(b"GIF88a"), None);
    }
}
