//! What a PNG or WebP says of itself in its first chunk, read before any decoder: the
//! decoders read on past the size before they report it, so a file that claims a huge
//! size and then ends would come out "corrupt" rather than "too large".

/// The size in a PNG's IHDR chunk, which the format requires to come first.
pub(super) fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let be = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    Some((be(16)?, be(20)?))
}

/// Whether the IHDR's compression and filter methods are 0 and its interlace method 0
/// or 1, the only ones PNG defines. True when there is no IHDR to read: the decoder
/// reports that.
pub(super) fn png_methods_are_standard(bytes: &[u8]) -> bool {
    match bytes.get(26..29) {
        Some(&[compression, filter, interlace]) if bytes.get(12..16) == Some(b"IHDR") => {
            compression == 0 && filter == 0 && interlace <= 1
        }
        _ => true,
    }
}

/// The canvas size in a WebP's first chunk: VP8X (extended), VP8 (lossy) or VP8L
/// (lossless).
pub(super) fn webp_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let le24 = |at: usize| -> Option<u32> {
        let b = bytes.get(at..at + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    let le16 = |at: usize| -> Option<u32> {
        let b = bytes.get(at..at + 2)?;
        Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
    };
    match bytes.get(12..16)? {
        b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
        b"VP8 " => Some((le16(26)? & 0x3FFF, le16(28)? & 0x3FFF)),
        b"VP8L" => {
            let b = bytes.get(21..25)?;
            let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        _ => None,
    }
}
