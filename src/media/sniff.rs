//! Format detection from magic bytes.
//!
//! Only the first bytes are read: the format decides which decoder or ffmpeg demuxer
//! we hand the file to, so it must come from content, never from a name or URL.

use std::path::Path;

use tokio::io::AsyncReadExt;

use crate::format::MediaFormat;

mod svg;

/// How many leading bytes [`sniff`] needs: an MPEG-TS file is told by its sync byte
/// at the start of three 188- or 192-byte packets.
pub(crate) const HEAD_LEN: usize = 512;

/// Reads up to [`HEAD_LEN`] bytes from the start of `path` (fewer for a short file).
pub(crate) async fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = tokio::fs::File::open(path).await?;
    let mut head = Vec::with_capacity(HEAD_LEN);
    file.take(HEAD_LEN as u64).read_to_end(&mut head).await?;
    Ok(head)
}

/// The format whose signature `head` starts with, if any.
pub fn sniff(head: &[u8]) -> Option<MediaFormat> {
    let at = |offset: usize, bytes: &[u8]| head.get(offset..offset + bytes.len()) == Some(bytes);
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(MediaFormat::Jpeg);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(MediaFormat::Png);
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some(MediaFormat::Gif);
    }
    if head.starts_with(b"RIFF") && at(8, b"WEBP") {
        return Some(MediaFormat::Webp);
    }
    if head.starts_with(b"RIFF") && at(8, b"WAVE") {
        return Some(MediaFormat::Wav);
    }
    if head.starts_with(b"RIFF") && at(8, b"AVI ") {
        return Some(MediaFormat::Avi);
    }
    if at(4, b"ftyp") && head.len() >= 12 {
        return Some(iso_bmff(head));
    }
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        // The EBML header names its DocType: `webm` or `matroska`.
        let webm = head.windows(4).take(64).any(|w| w == b"webm");
        return Some(if webm {
            MediaFormat::Webm
        } else {
            MediaFormat::Mkv
        });
    }
    if head.starts_with(b"OggS") {
        // Opus alone: the first page opens an Opus stream and no Theora one follows.
        let first_packet = 27 + usize::from(head.get(26).copied().unwrap_or(0));
        let theora = head.windows(6).any(|w| w == b"theora");
        if at(first_packet, b"OpusHead") && !theora {
            return Some(MediaFormat::Opus);
        }
        return Some(MediaFormat::Ogv);
    }
    let synced =
        |first: usize, size: usize| (0..3).all(|i| head.get(first + i * size) == Some(&0x47));
    if synced(0, 188) || synced(4, 192) {
        return Some(MediaFormat::MpegTs);
    }
    if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") || head.starts_with(b"II+\0") {
        return Some(MediaFormat::Tiff);
    }
    if head.starts_with(b"BM") && at(6, &[0, 0, 0, 0]) && head.len() >= 18 {
        let dib = u32::from_le_bytes([head[14], head[15], head[16], head[17]]);
        if [12, 40, 52, 56, 64, 108, 124].contains(&dib) {
            return Some(MediaFormat::Bmp);
        }
    }
    if is_mp3(head) {
        return Some(MediaFormat::Mp3);
    }
    // A bare JPEG XL codestream, or the ISO-BMFF container's signature box.
    if head.starts_with(&[0xFF, 0x0A]) || head.starts_with(JXL_CONTAINER) {
        return Some(MediaFormat::Jxl);
    }
    if head.starts_with(b"%PDF-") {
        return Some(MediaFormat::Pdf);
    }
    if svg::is_svg(head) {
        return Some(MediaFormat::Svg);
    }
    None
}

/// The JPEG XL container's first box: `JXL ` of 12 bytes, `0D 0A 87 0A`.
const JXL_CONTAINER: &[u8] = b"\0\0\0\x0CJXL \r\n\x87\n";

/// An ID3v2 tag, or an MPEG audio Layer III frame header: the sync bits, layer III,
/// a bitrate that is neither free nor bad, a sample rate that is not reserved.
fn is_mp3(head: &[u8]) -> bool {
    if head.starts_with(b"ID3") && head.get(3).is_some_and(|v| (2..=4).contains(v)) {
        return true;
    }
    let [a, b, c, ..] = head else {
        return false;
    };
    let bitrate = c >> 4;
    *a == 0xFF
        && b & 0xE0 == 0xE0
        && (b >> 1) & 3 == 1
        && bitrate != 0
        && bitrate != 0xF
        && (c >> 2) & 3 != 3
}

/// What a file the service does not read plainly is, from its signature: named in
/// the refusal (`unsupported_input_format`), so that the sender knows what they sent
/// rather than being told it is in no format at all. `None` for unknown bytes.
pub fn sniff_unread(head: &[u8]) -> Option<&'static str> {
    // An icon directory: reserved 0, type 1 (icon) or 2 (cursor), and at least one
    // image, each entry's reserved byte 0 — or no image at all, when the six bytes of
    // the directory's header are the whole file (Pillow's `no_cursors.cur`).
    let icon = |kind: u8| {
        head.starts_with(&[0, 0, kind, 0])
            && match head.get(4..6) {
                Some([0, 0]) => head.len() == 6,
                Some(_) => head.get(9) == Some(&0),
                None => false,
            }
    };
    let netpbm = |digits: &[u8]| {
        head.first() == Some(&b'P')
            && head.get(1).is_some_and(|d| digits.contains(d))
            && head.get(2).is_some_and(u8::is_ascii_whitespace)
    };
    Some(match () {
        _ if icon(1) => "an ICO icon",
        _ if icon(2) => "a CUR cursor",
        _ if head.starts_with(b"icns") => "an ICNS icon (Apple)",
        _ if head.starts_with(b"qoif") => "a QOI image",
        _ if head.starts_with(b"DDS ") => "a DDS texture",
        _ if head.starts_with(b"\0\0\0\x0CjP  \r\n\x87\n")
            || head.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) =>
        {
            "a JPEG 2000 image"
        }
        _ if netpbm(b"1234567") => "a Netpbm image (PBM, PGM or PPM)",
        // The float member of the family: `PF` (colour) or `Pf` (grey).
        _ if netpbm(b"Ff") => "a PFM image (Portable Float Map)",
        _ if head.starts_with(b"8BPS") => "a Photoshop document (PSD)",
        _ if head.starts_with(b"%!PS") || head.starts_with(&[0xC5, 0xD0, 0xD3, 0xC6]) => {
            "a PostScript document (EPS)"
        }
        _ if head.starts_with(b"FLV\x01") => "an FLV video (Flash)",
        _ => return None,
    })
}

/// "the file is HEIC/HEIF, which this command does not take; it takes JPEG, PNG, WebP".
pub(super) fn unsupported_message(found: Option<&str>, takes: &[MediaFormat]) -> String {
    let names: Vec<&str> = takes.iter().map(|f| f.name()).collect();
    match (found, names.is_empty()) {
        (Some(found), true) => format!("the file is {found}, which this command does not take"),
        (Some(found), false) => format!(
            "the file is {found}, which this command does not take; it takes {}",
            names.join(", ")
        ),
        (None, true) => "the file is in no format this service reads".into(),
        (None, false) => format!(
            "the file is in no format this service reads; this command takes {}",
            names.join(", ")
        ),
    }
}

/// "the file is an ICO icon, which this service does not read; send JPEG, PNG, WebP".
pub(super) fn unread_message(found: &str, takes: &[MediaFormat]) -> String {
    let names: Vec<&str> = takes.iter().map(|f| f.name()).collect();
    if names.is_empty() {
        format!("the file is {found}, which this service does not read")
    } else {
        format!(
            "the file is {found}, which this service does not read; send {}",
            names.join(", ")
        )
    }
}

/// An ISO-BMFF file (`ftyp` box) by its brands: QuickTime, HEIF/HEIC, AVIF, 3GPP, or
/// MP4 (every other brand: isom, mp42, M4V, ...).
fn iso_bmff(head: &[u8]) -> MediaFormat {
    let major = &head[8..12];
    let box_end =
        (u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize).min(head.len());
    let compatible: Vec<&[u8]> = head[16.min(box_end)..box_end].chunks_exact(4).collect();
    let has =
        |brands: &[&[u8]]| brands.contains(&major) || compatible.iter().any(|b| brands.contains(b));
    const HEIC: &[&[u8]] = &[
        b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"hevm", b"hevs",
    ];
    match major {
        b"qt  " => MediaFormat::Mov,
        b"avif" | b"avis" => MediaFormat::Avif,
        _ if HEIC.contains(&major) => MediaFormat::Heif,
        b"mif1" | b"msf1" if has(&[b"avif", b"avis"]) => MediaFormat::Avif,
        b"mif1" | b"msf1" => MediaFormat::Heif,
        _ if major.starts_with(b"3g") => MediaFormat::ThreeGp,
        // iTunes audio (and audiobooks): AAC or ALAC, no picture.
        b"M4A " | b"M4B " => MediaFormat::M4a,
        _ => MediaFormat::Mp4,
    }
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
        assert_eq!(sniff(&[0xFF, 0x0A, 0xFA, 0x7F]), Some(MediaFormat::Jxl));
        assert_eq!(
            sniff(b"\0\0\0\x0CJXL \r\n\x87\n\0\0\0\x14ftypjxl "),
            Some(MediaFormat::Jxl)
        );
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
        let ebml = |doc_type: &[u8]| {
            [
                &[0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x82, 0x88][..],
                doc_type,
            ]
            .concat()
        };
        assert_eq!(sniff(&ebml(b"webm")), Some(MediaFormat::Webm));
        assert_eq!(sniff(&ebml(b"matroska")), Some(MediaFormat::Mkv));
        assert_eq!(sniff(b"OggS\0\x02"), Some(MediaFormat::Ogv));
    }

    #[test]
    fn sniff_tells_heic_avif_and_3gp_from_mp4_by_their_brands() {
        assert_eq!(
            sniff(b"\0\0\0\x18ftypheic\0\0\0\0mif1heic"),
            Some(MediaFormat::Heif)
        );
        assert_eq!(
            sniff(b"\0\0\0\x18ftypavif\0\0\0\0avifmif1"),
            Some(MediaFormat::Avif)
        );
        assert_eq!(
            sniff(b"\0\0\0\x18ftypmif1\0\0\0\0mif1avif"),
            Some(MediaFormat::Avif)
        );
        assert_eq!(
            sniff(b"\0\0\0\x14ftypmif1\0\0\0\0mif1"),
            Some(MediaFormat::Heif)
        );
        assert_eq!(
            sniff(b"\0\0\0\x14ftyp3gp4\0\0\x02\0"),
            Some(MediaFormat::ThreeGp)
        );
        assert_eq!(
            sniff(b"\0\0\0\x14ftypM4V \0\0\x02\0"),
            Some(MediaFormat::Mp4)
        );
    }

    #[test]
    fn sniff_recognises_avi_mpeg_ts_tiff_and_bmp() {
        assert_eq!(sniff(b"RIFF\x24\0\0\0AVI LIST"), Some(MediaFormat::Avi));
        let mut ts = vec![0u8; 512];
        for i in 0..3 {
            ts[i * 188] = 0x47;
        }
        assert_eq!(sniff(&ts), Some(MediaFormat::MpegTs));
        ts[188] = 0;
        assert_eq!(sniff(&ts), None, "one sync byte is not a stream");
        assert_eq!(sniff(b"II*\0\x08\0\0\0"), Some(MediaFormat::Tiff));
        assert_eq!(sniff(b"MM\0*\0\0\0\x08"), Some(MediaFormat::Tiff));
        let bmp = b"BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0";
        assert_eq!(sniff(bmp), Some(MediaFormat::Bmp));
        assert_eq!(sniff(b"BMW is not a bitmap"), None);
    }

    #[test]
    fn formats_the_service_does_not_read_are_named_from_their_signatures() {
        let named = [
            (&b"\0\0\x01\0\x01\0\x10\x10\0\0\x01\0"[..], "an ICO icon"),
            (b"\0\0\x02\0\x01\0\x20\x20\0\0\x01\0", "a CUR cursor"),
            (b"icns\0\0\x10\0", "an ICNS icon (Apple)"),
            (b"qoif\0\0\0\x10", "a QOI image"),
            (b"DDS \x7c\0\0\0", "a DDS texture"),
            (b"\0\0\0\x0CjP  \r\n\x87\n\0\0", "a JPEG 2000 image"),
            (b"\xFF\x4F\xFF\x51\0\x2F", "a JPEG 2000 image"),
            (b"P6\n128 128\n255\n", "a Netpbm image (PBM, PGM or PPM)"),
            (b"P4 8 8\n", "a Netpbm image (PBM, PGM or PPM)"),
            (b"Pf\n128 128\n-1.0\n", "a PFM image (Portable Float Map)"),
            (b"PF\n64 32\n2.5\n", "a PFM image (Portable Float Map)"),
            (b"\0\0\x02\0\0\0", "a CUR cursor"),
            (b"\0\0\x01\0\0\0", "an ICO icon"),
            (b"8BPS\0\x01", "a Photoshop document (PSD)"),
            (b"%!PS-Adobe-3.0 EPSF-3.0", "a PostScript document (EPS)"),
            (b"\xC5\xD0\xD3\xC6\x1e\0", "a PostScript document (EPS)"),
            (b"FLV\x01\x05\0\0\0\x09", "an FLV video (Flash)"),
        ];
        for (head, name) in named {
            assert_eq!(sniff(head), None, "{name} is not read");
            assert_eq!(sniff_unread(head), Some(name), "{head:?}");
        }
        for unknown in [
            &b"hello world"[..],
            b"P9 no",
            b"Phoenix",
            b"PFX\n",
            // An empty icon directory is the whole file, or it is no icon.
            b"\0\0\x01\0\0\0\x01\x02",
            b"\0\0\x02\0\0\0\0\0\0\0",
            b"",
        ] {
            assert_eq!(sniff_unread(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn sniff_recognises_audio_files() {
        assert_eq!(
            sniff(b"\0\0\0\x1cftypM4A \0\0\x02\0"),
            Some(MediaFormat::M4a)
        );
        assert_eq!(sniff(b"ID3\x04\0\0\0\0\0\x23"), Some(MediaFormat::Mp3));
        assert_eq!(sniff(&[0xFF, 0xFB, 0x90, 0x64]), Some(MediaFormat::Mp3));
        assert_eq!(sniff(b"RIFF\x24\0\0\0WAVEfmt "), Some(MediaFormat::Wav));
        assert_eq!(sniff(&[0xFF, 0xFB, 0xF0, 0x64]), None, "a bad bitrate");
        let mut opus = b"OggS\0\x02".to_vec();
        opus.resize(26, 0);
        opus.extend([1, 19]);
        opus.extend(b"OpusHead\x01\x02");
        assert_eq!(sniff(&opus), Some(MediaFormat::Opus));
        opus.extend(b"OggS...\x80theora");
        assert_eq!(sniff(&opus), Some(MediaFormat::Ogv), "with a video stream");
    }

    #[test]
    fn sniff_refuses_unknown_short_and_near_miss_content() {
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"hello world, not media"), None);
        assert_eq!(sniff(&[0xFF, 0xD8]), None);
        assert_eq!(sniff(b"\0\0\0\x14ftyp"), None);
        assert_eq!(sniff(b"GIF88a"), None);
    }
}
