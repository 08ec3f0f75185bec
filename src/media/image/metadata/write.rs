//! Kept metadata put into an encoded output, where each format keeps it: JPEG's APP1
//! segments after SOI, PNG's `eXIf` and `iTXt` chunks after IHDR, WebP's `EXIF` and
//! `XMP ` chunks after the image (the file made an extended `VP8X` one), JPEG XL's
//! `Exif` and `xml ` boxes (the bare codestream put in the container first), AVIF's
//! `Exif` and `mime` items (`avif`). Other formats are returned as they are.

use crate::format::MediaFormat;

/// The name XMP's APP1 segment starts with.
pub(super) const XMP_NAMESPACE: &[u8] = b"http://ns.adobe.com/xap/1.0/\0";

/// The JPEG XL container's signature box and its `ftyp`.
const JXL_SIGNATURE: &[u8] = b"\0\0\0\x0CJXL \r\n\x87\n\0\0\0\x14ftypjxl \0\0\0\0jxl ";

/// The EXIF (a TIFF structure) and XMP packet written, either may be absent.
#[derive(Clone, Copy)]
pub(super) struct Blocks<'a> {
    pub exif: Option<&'a [u8]>,
    pub xmp: Option<&'a [u8]>,
}

/// `encoded`, a `format` output, with `metadata` in it.
pub(super) fn insert(encoded: Vec<u8>, format: MediaFormat, metadata: Blocks<'_>) -> Vec<u8> {
    if metadata.exif.is_none() && metadata.xmp.is_none() {
        return encoded;
    }
    match format {
        MediaFormat::Jpeg => jpeg(encoded, metadata),
        MediaFormat::Png => png(encoded, metadata),
        MediaFormat::Webp => webp(&encoded, metadata).unwrap_or(encoded),
        MediaFormat::Jxl => jxl(encoded, metadata),
        MediaFormat::Avif => {
            super::avif::insert(&encoded, metadata.exif, metadata.xmp).unwrap_or(encoded)
        }
        _ => encoded,
    }
}

fn jpeg(encoded: Vec<u8>, metadata: Blocks<'_>) -> Vec<u8> {
    if !encoded.starts_with(&[0xFF, 0xD8]) {
        return encoded;
    }
    let mut out = encoded[..2].to_vec();
    let mut segment = |prefix: &[u8], body: &[u8]| {
        let len = prefix.len() + body.len() + 2;
        // A segment's length is 16 bits; larger metadata is left out.
        if let Ok(len) = u16::try_from(len) {
            out.extend([0xFF, 0xE1]);
            out.extend(len.to_be_bytes());
            out.extend(prefix);
            out.extend(body);
        }
    };
    if let Some(exif) = metadata.exif {
        segment(b"Exif\0\0", exif);
    }
    if let Some(xmp) = metadata.xmp {
        segment(XMP_NAMESPACE, xmp);
    }
    out.extend_from_slice(&encoded[2..]);
    out
}

/// A PNG chunk: length, type, data, CRC of type and data.
fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend((data.len() as u32).to_be_bytes());
    out.extend(kind);
    out.extend(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend(crc.finalize().to_be_bytes());
}

fn png(encoded: Vec<u8>, metadata: Blocks<'_>) -> Vec<u8> {
    // The signature, then IHDR (13 bytes of data): 33 bytes.
    const AFTER_IHDR: usize = 8 + 12 + 13;
    if encoded.get(12..16) != Some(b"IHDR") || encoded.len() < AFTER_IHDR {
        return encoded;
    }
    let mut out = encoded[..AFTER_IHDR].to_vec();
    if let Some(exif) = metadata.exif {
        png_chunk(&mut out, b"eXIf", exif);
    }
    if let Some(xmp) = metadata.xmp {
        let mut text = b"XML:com.adobe.xmp\0\0\0\0\0".to_vec();
        text.extend(xmp);
        png_chunk(&mut out, b"iTXt", &text);
    }
    out.extend_from_slice(&encoded[AFTER_IHDR..]);
    out
}

/// A RIFF chunk: fourcc, little-endian length, data padded to even.
fn riff_chunk(out: &mut Vec<u8>, fourcc: &[u8; 4], data: &[u8]) {
    out.extend(fourcc);
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
}

/// `VP8X` flags: alpha, EXIF, XMP.
const VP8X_ALPHA: u8 = 0x10;
const VP8X_EXIF: u8 = 0x08;
const VP8X_XMP: u8 = 0x04;

fn webp(encoded: &[u8], metadata: Blocks<'_>) -> Option<Vec<u8>> {
    let chunks: Vec<(&[u8; 4], &[u8])> = riff_chunks(encoded).collect();
    let (first, data) = *chunks.first()?;
    let mut flags = 0u8;
    let mut body = Vec::new();
    match first {
        b"VP8X" => {
            flags = *data.first()?;
            body.extend(&data[1..]);
        }
        b"VP8 " | b"VP8L" => {
            let (width, height, alpha) = simple_webp_size(first, data)?;
            if alpha {
                flags |= VP8X_ALPHA;
            }
            body.extend([0, 0, 0]);
            body.extend(&(width - 1).to_le_bytes()[..3]);
            body.extend(&(height - 1).to_le_bytes()[..3]);
        }
        _ => return None,
    }
    flags &= !(VP8X_EXIF | VP8X_XMP);
    if metadata.exif.is_some() {
        flags |= VP8X_EXIF;
    }
    if metadata.xmp.is_some() {
        flags |= VP8X_XMP;
    }
    let mut riff = b"WEBP".to_vec();
    let mut vp8x = vec![flags];
    vp8x.extend(&body);
    riff_chunk(&mut riff, b"VP8X", &vp8x);
    let rest = if first == b"VP8X" {
        &chunks[1..]
    } else {
        &chunks[..]
    };
    for (fourcc, data) in rest {
        if !matches!(*fourcc, b"EXIF" | b"XMP ") {
            riff_chunk(&mut riff, fourcc, data);
        }
    }
    if let Some(exif) = metadata.exif {
        riff_chunk(&mut riff, b"EXIF", exif);
    }
    if let Some(xmp) = metadata.xmp {
        riff_chunk(&mut riff, b"XMP ", xmp);
    }
    let mut out = b"RIFF".to_vec();
    out.extend(u32::try_from(riff.len()).ok()?.to_le_bytes());
    out.extend(riff);
    Some(out)
}

/// The canvas of a simple (one-chunk) WebP, and whether it has alpha.
fn simple_webp_size(fourcc: &[u8; 4], data: &[u8]) -> Option<(u32, u32, bool)> {
    if fourcc == b"VP8 " {
        // A key frame: 3-byte tag, start code, then 14-bit width and height.
        let w = u16::from_le_bytes([*data.get(6)?, *data.get(7)?]) & 0x3FFF;
        let h = u16::from_le_bytes([*data.get(8)?, *data.get(9)?]) & 0x3FFF;
        return Some((u32::from(w), u32::from(h), false));
    }
    // VP8L: signature 0x2F, then 14 bits of width − 1, 14 of height − 1, 1 of alpha.
    let bits = u32::from_le_bytes(data.get(1..5)?.try_into().ok()?);
    let width = (bits & 0x3FFF) + 1;
    let height = ((bits >> 14) & 0x3FFF) + 1;
    Some((width, height, (bits >> 28) & 1 == 1))
}

fn jxl(encoded: Vec<u8>, metadata: Blocks<'_>) -> Vec<u8> {
    if !encoded.starts_with(&[0xFF, 0x0A]) {
        return encoded;
    }
    let mut out = JXL_SIGNATURE.to_vec();
    let mut boxed = |kind: &[u8; 4], parts: &[&[u8]]| {
        let len: usize = 8 + parts.iter().map(|p| p.len()).sum::<usize>();
        out.extend((len as u32).to_be_bytes());
        out.extend(kind);
        for part in parts {
            out.extend(*part);
        }
    };
    if let Some(exif) = metadata.exif {
        boxed(b"Exif", &[&[0, 0, 0, 0], exif]);
    }
    if let Some(xmp) = metadata.xmp {
        boxed(b"xml ", &[xmp]);
    }
    // The codestream last, in a box running to the end of the file (size 0).
    out.extend([0, 0, 0, 0]);
    out.extend(b"jxlc");
    out.extend(encoded);
    out
}

/// A PNG's chunks as (type, data), up to a malformed one.
pub(super) fn png_chunks(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        8
    } else {
        usize::MAX
    };
    std::iter::from_fn(move || {
        let len = u32::from_be_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?);
        let kind = bytes.get(at + 4..at + 8)?;
        let data = bytes.get(at + 8..(at + 8).checked_add(len as usize)?)?;
        at += 12 + len as usize;
        Some((kind, data))
    })
}

/// A WebP's chunks as (fourcc, data), up to a malformed one.
pub(super) fn riff_chunks(bytes: &[u8]) -> impl Iterator<Item = (&[u8; 4], &[u8])> {
    let riff = bytes.get(..4) == Some(b"RIFF") && bytes.get(8..12) == Some(b"WEBP");
    let mut at = if riff { 12 } else { usize::MAX };
    std::iter::from_fn(move || {
        let fourcc: &[u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        let len = u32::from_le_bytes(bytes.get(at + 4..at + 8)?.try_into().ok()?) as usize;
        let data = bytes.get(at + 8..(at + 8).checked_add(len)?)?;
        at += 8 + len + (len & 1);
        Some((fourcc, data))
    })
}

/// A JPEG XL container's boxes as (type, data), up to a malformed one (a bare
/// codestream has none). A size of 0 runs to the end; 1 means a 64-bit size follows.
pub(super) fn isobmff_boxes(bytes: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut at = if bytes.starts_with(&JXL_SIGNATURE[..12]) {
        0
    } else {
        usize::MAX
    };
    std::iter::from_fn(move || {
        let size = u32::from_be_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?);
        let kind = bytes.get(at + 4..at + 8)?;
        let (header, size) = match size {
            0 => (8, bytes.len() - at),
            1 => {
                let large = u64::from_be_bytes(bytes.get(at + 8..at + 16)?.try_into().ok()?);
                (16, usize::try_from(large).ok()?)
            }
            n => (8, n as usize),
        };
        let data = bytes.get(at + header..at.checked_add(size)?)?;
        at += size.max(header);
        Some((kind, data))
    })
}
