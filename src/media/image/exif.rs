//! EXIF orientation, from every container that carries it: JPEG's APP1 segment,
//! WebP's `EXIF` chunk and PNG's `eXIf` chunk.
//!
//! Read here rather than through each decoder, so that all three follow one rule:
//! the payload is a TIFF structure, optionally behind the `Exif\0\0` header (Pillow,
//! ExifTool and some cameras write it inside WebP and PNG too, where the formats' specs
//! leave it out; viewers accept both). Broken or missing EXIF leaves the picture as
//! stored: it must not reject a picture that decodes fine. XMP's `tiff:Orientation` is
//! not read, as browsers do not read it.

use image::metadata::Orientation;

use crate::format::MediaFormat;

/// How the stored pixels of `bytes` must be turned to show the picture upright.
pub(crate) fn orientation(bytes: &[u8], format: MediaFormat) -> Orientation {
    let payload = match format {
        MediaFormat::Jpeg => jpeg_exif(bytes),
        MediaFormat::Webp => webp_exif(bytes),
        MediaFormat::Png => png_exif(bytes),
        _ => None,
    };
    payload
        .map(|p| p.strip_prefix(b"Exif\0\0").unwrap_or(p))
        .and_then(Orientation::from_exif_chunk)
        .unwrap_or(Orientation::NoTransforms)
}

/// The Exif payload (the TIFF structure after `Exif\0\0`) of a JPEG's APP1 segment;
/// `None` when there is none or the segments are malformed (the picture is then shown
/// as stored).
fn jpeg_exif(bytes: &[u8]) -> Option<&[u8]> {
    jpeg_segments(bytes)
        .filter(|(marker, _)| *marker == 0xE1)
        .find_map(|(_, segment)| segment.strip_prefix(b"Exif\0\0"))
}

/// The marker segments of a JPEG up to its first scan, as (marker, payload); the walk
/// stops at the first malformed segment.
pub(crate) fn jpeg_segments(bytes: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut at = if bytes.starts_with(&[0xFF, 0xD8]) {
        2
    } else {
        usize::MAX
    };
    std::iter::from_fn(move || loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        // Any number of 0xFF fill bytes may precede a marker code.
        while *bytes.get(at + 1)? == 0xFF {
            at += 1;
        }
        let marker = bytes[at + 1];
        at += 2;
        match marker {
            // Standalone markers carry no length.
            0x01 | 0xD0..=0xD8 => continue,
            // Metadata segments all come before the first scan.
            0xD9 | 0xDA => return None,
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
        let segment = bytes.get(at + 2..at.checked_add(len)?)?;
        at += len;
        return Some((marker, segment));
    })
}

/// The payload of a WebP's `EXIF` chunk: RIFF chunks are a fourcc, a little-endian
/// length, and the data padded to even.
fn webp_exif(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WEBP" {
        return None;
    }
    let mut at = 12;
    loop {
        let fourcc = bytes.get(at..at + 4)?;
        let len = u32::from_le_bytes(bytes.get(at + 4..at + 8)?.try_into().ok()?) as usize;
        let data = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
        if fourcc == b"EXIF" {
            return Some(data);
        }
        at += 8 + len + (len & 1);
    }
}

/// The payload of a PNG's `eXIf` chunk: PNG chunks are a big-endian length, a type,
/// the data and a CRC. Read up to `IEND`: the chunk may follow the image data.
fn png_exif(bytes: &[u8]) -> Option<&[u8]> {
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return None;
    }
    let mut at = 8;
    loop {
        let len = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let kind = bytes.get(at + 4..at + 8)?;
        let data = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
        match kind {
            b"eXIf" => return Some(data),
            b"IEND" => return None,
            _ => at += 12 + len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::testutil::{jpeg_with_orientation, solid_jpeg};

    #[test]
    fn jpeg_exif_finds_the_app1_payload_after_other_segments() {
        let jpeg = jpeg_with_orientation(40, 20, 6);
        let exif = jpeg_exif(&jpeg).expect("exif segment");
        assert!(exif.starts_with(b"II*\0") || exif.starts_with(b"MM\0*"));
        assert_eq!(
            Orientation::from_exif_chunk(exif),
            Some(Orientation::Rotate90)
        );
    }

    #[test]
    fn jpeg_exif_is_none_without_exif_or_on_garbage() {
        assert_eq!(jpeg_exif(&solid_jpeg(8, 8, [1, 2, 3])), None);
        assert_eq!(jpeg_exif(b""), None);
        assert_eq!(jpeg_exif(&[0xFF, 0xD8, 0xFF, 0xE1, 0xFF]), None);
        assert_eq!(jpeg_exif(&[0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x40, b'E']), None);
    }

    /// A TIFF structure with one IFD entry: orientation `value`.
    fn tiff(value: u16) -> Vec<u8> {
        let mut t = b"II*\0\x08\0\0\0\x01\0".to_vec();
        t.extend_from_slice(&[0x12, 0x01, 3, 0, 1, 0, 0, 0]);
        t.extend_from_slice(&value.to_le_bytes());
        t.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        t
    }

    fn webp_with(exif: &[u8]) -> Vec<u8> {
        let mut b = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x08\0\0\0\0\0\0\0\0\0".to_vec();
        b.extend_from_slice(b"ALPH\x01\0\0\0\0\0");
        b.extend_from_slice(b"EXIF");
        b.extend_from_slice(&(exif.len() as u32).to_le_bytes());
        b.extend_from_slice(exif);
        b
    }

    fn png_with(exif: &[u8]) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.extend_from_slice(&[0, 0, 0, 13]);
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&[0; 13 + 4]);
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(b"IDAT");
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&(exif.len() as u32).to_be_bytes());
        b.extend_from_slice(b"eXIf");
        b.extend_from_slice(exif);
        b.extend_from_slice(&[0; 4]);
        b
    }

    #[test]
    fn webp_and_png_orientation_is_read_with_or_without_the_exif_header() {
        let prefixed: Vec<u8> = [b"Exif\0\0".as_slice(), &tiff(6)].concat();
        for exif in [tiff(6), prefixed] {
            let webp = webp_with(&exif);
            assert_eq!(orientation(&webp, MediaFormat::Webp), Orientation::Rotate90);
            // After the image data, as the PNG spec allows.
            let png = png_with(&exif);
            assert_eq!(orientation(&png, MediaFormat::Png), Orientation::Rotate90);
        }
        assert_eq!(
            orientation(&webp_with(&tiff(3)), MediaFormat::Webp),
            Orientation::Rotate180
        );
    }

    #[test]
    fn missing_or_broken_exif_leaves_the_picture_as_stored() {
        let none = Orientation::NoTransforms;
        assert_eq!(orientation(&webp_with(b"garbage"), MediaFormat::Webp), none);
        assert_eq!(orientation(&webp_with(b"")[..30], MediaFormat::Webp), none);
        assert_eq!(orientation(&png_with(&tiff(99)), MediaFormat::Png), none);
        assert_eq!(
            orientation(b"\x89PNG\r\n\x1a\n\xff\xff\xff\xff", MediaFormat::Png),
            none
        );
        assert_eq!(orientation(b"", MediaFormat::Jpeg), none);
    }
}
