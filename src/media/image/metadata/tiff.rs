//! The two changes the metadata policies make to an EXIF structure (TIFF: a byte-order
//! mark, IFD0's offset, then entries of tag, type, count and value or offset): the
//! Orientation tag set to 1, and a fresh structure of IFD0's Artist and Copyright.

/// Orientation, Artist and Copyright: IFD0 tags.
const ORIENTATION: u16 = 0x0112;
const ARTIST: u16 = 0x013B;
const COPYRIGHT: u16 = 0x8298;
/// TIFF field types: ASCII and SHORT.
const ASCII: u16 = 2;
const SHORT: u16 = 3;

/// A TIFF structure's byte order and IFD0's entries, as read.
struct Ifd0<'a> {
    tiff: &'a [u8],
    big_endian: bool,
    /// Offsets of IFD0's 12-byte entries.
    entries: Vec<usize>,
}

impl<'a> Ifd0<'a> {
    fn read(tiff: &'a [u8]) -> Option<Ifd0<'a>> {
        let big_endian = match tiff.get(..4)? {
            b"MM\0\x2a" => true,
            b"II\x2a\0" => false,
            _ => return None,
        };
        let mut ifd = Ifd0 {
            tiff,
            big_endian,
            entries: Vec::new(),
        };
        let at = ifd.u32(4)? as usize;
        let count = usize::from(ifd.u16(at)?);
        for i in 0..count {
            let entry = at + 2 + 12 * i;
            tiff.get(entry..entry + 12)?;
            ifd.entries.push(entry);
        }
        Some(ifd)
    }

    fn u16(&self, at: usize) -> Option<u16> {
        let b: [u8; 2] = self.tiff.get(at..at + 2)?.try_into().ok()?;
        Some(if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    }

    fn u32(&self, at: usize) -> Option<u32> {
        let b: [u8; 4] = self.tiff.get(at..at + 4)?.try_into().ok()?;
        Some(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    /// The entry of `tag`, if IFD0 has one.
    fn entry(&self, tag: u16) -> Option<usize> {
        self.entries
            .iter()
            .copied()
            .find(|&e| self.u16(e) == Some(tag))
    }

    /// The text of ASCII tag `tag`, without its NUL ending; `None` when empty.
    fn ascii(&self, tag: u16) -> Option<&'a [u8]> {
        let entry = self.entry(tag)?;
        if self.u16(entry + 2)? != ASCII {
            return None;
        }
        let count = self.u32(entry + 4)? as usize;
        let at = if count <= 4 {
            entry + 8
        } else {
            self.u32(entry + 8)? as usize
        };
        let text = self.tiff.get(at..at.checked_add(count)?)?;
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Some(&text[..end]).filter(|t| !t.is_empty())
    }
}

/// `tiff` with IFD0's Orientation set to 1 (upright), where it has one; `None` for a
/// structure that does not parse (it is then dropped, not copied blind).
pub(super) fn upright(tiff: &[u8]) -> Option<Vec<u8>> {
    let ifd = Ifd0::read(tiff)?;
    let mut out = tiff.to_vec();
    if let Some(entry) = ifd.entry(ORIENTATION) {
        if ifd.u16(entry + 2) == Some(SHORT) {
            let one = if ifd.big_endian { [0, 1] } else { [1, 0] };
            out[entry + 8..entry + 10].copy_from_slice(&one);
        }
    }
    Some(out)
}

/// A fresh big-endian TIFF structure holding only IFD0's Artist and Copyright of
/// `tiff`; `None` when it has neither.
pub(super) fn copyright_only(tiff: &[u8]) -> Option<Vec<u8>> {
    let ifd = Ifd0::read(tiff)?;
    let kept: Vec<(u16, &[u8])> = [ARTIST, COPYRIGHT]
        .into_iter()
        .filter_map(|tag| Some((tag, ifd.ascii(tag)?)))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let mut out = b"MM\0\x2a\0\0\0\x08".to_vec();
    out.extend((kept.len() as u16).to_be_bytes());
    let mut data_at = 8 + 2 + 12 * kept.len() as u32 + 4;
    let mut data = Vec::new();
    for (tag, text) in &kept {
        let count = text.len() as u32 + 1;
        out.extend(tag.to_be_bytes());
        out.extend(ASCII.to_be_bytes());
        out.extend(count.to_be_bytes());
        if count <= 4 {
            let mut inline = [0u8; 4];
            inline[..text.len()].copy_from_slice(text);
            out.extend(inline);
        } else {
            out.extend(data_at.to_be_bytes());
            data.extend_from_slice(text);
            data.push(0);
            if data.len() % 2 == 1 {
                data.push(0);
            }
            data_at = 8 + 2 + 12 * kept.len() as u32 + 4 + data.len() as u32;
        }
    }
    out.extend(0u32.to_be_bytes());
    out.extend(data);
    Some(out)
}
