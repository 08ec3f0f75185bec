//! A GIF's blocks, walked one at a time: frames, their graphic controls, extensions.

use crate::media::error::MediaError;

/// An image descriptor.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub left: u16,
    pub top: u16,
    pub width: u16,
    pub height: u16,
    pub interlaced: bool,
    /// Where the local colour table is in the file, if the frame has one.
    pub palette: Option<std::ops::Range<usize>>,
    /// Offset of the LZW minimum code size, which the data sub-blocks follow.
    pub data: usize,
}

/// What a Graphic Control Extension says of the frame after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Control {
    /// Centiseconds, as written (see [`shown_cs`]).
    pub delay_cs: u16,
    /// 0 or 1: left as it is; 2: cleared; 3: put back as it was before the frame.
    pub disposal: u8,
    /// The colour index that leaves the canvas under it as it was.
    pub transparent: Option<u8>,
}

pub(crate) enum Block {
    Control(Control),
    Frame(Frame),
}

/// Walks the blocks after the header and the global colour table.
#[derive(Clone)]
pub(crate) struct Blocks<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    pub screen: (u16, u16),
    /// Where the (first header's) global colour table is.
    pub global_palette: Option<std::ops::Range<usize>>,
    /// The loop count of a NETSCAPE2.0 extension (0: forever), when one was passed.
    pub loops: Option<u16>,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Self, MediaError> {
        if bytes.len() < 13 || !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
            return Err(MediaError::InvalidMedia(
                "the GIF header is missing or truncated".into(),
            ));
        }
        let le16 = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let flags = bytes[10];
        let has_global_palette = flags & 0x80 != 0;
        let mut at = 13;
        if has_global_palette {
            at += table_len(flags);
        }
        Ok(Blocks {
            bytes,
            at,
            screen: (le16(6), le16(8)),
            global_palette: has_global_palette.then(|| 13..at.min(bytes.len())),
            loops: None,
        })
    }

    /// The next frame or delay; `None` at the trailer, the end, or a byte that starts
    /// no block. Other extensions are skipped.
    pub(crate) fn next_block(&mut self) -> Option<Block> {
        loop {
            let bytes = self.bytes;
            match *bytes.get(self.at)? {
                0x21 => {
                    let label = *bytes.get(self.at + 1)?;
                    let first = self.at + 2;
                    self.at = skip_sub_blocks(bytes, first)?;
                    // A GCE's one sub-block: size 4, packed byte, delay (LE), index.
                    if label == 0xF9 && bytes.get(first) == Some(&4) {
                        let gce = bytes.get(first + 1..first + 5)?;
                        return Some(Block::Control(Control {
                            delay_cs: u16::from_le_bytes([gce[1], gce[2]]),
                            disposal: (gce[0] >> 2) & 0x07,
                            transparent: (gce[0] & 1 != 0).then_some(gce[3]),
                        }));
                    }
                    // NETSCAPE2.0 (or ANIMEXTS1.0): 11 bytes, then [3, 1, loops LE].
                    let app = bytes.get(first..first + 16);
                    if let (0xFF, Some(app), None) = (label, app, self.loops) {
                        let named = &app[1..12] == b"NETSCAPE2.0" || &app[1..12] == b"ANIMEXTS1.0";
                        if app[0] == 11 && named && app[12] == 3 && app[13] == 1 {
                            self.loops = Some(u16::from_le_bytes([app[14], app[15]]));
                        }
                    }
                }
                0x2C => {
                    let d = bytes.get(self.at + 1..self.at + 10)?;
                    let le16 = |i: usize| u16::from_le_bytes([d[i], d[i + 1]]);
                    let flags = d[8];
                    let descriptor_end = self.at + 10;
                    let has_palette = flags & 0x80 != 0;
                    let mut at = descriptor_end;
                    if has_palette {
                        at += table_len(flags);
                    }
                    let palette = has_palette.then(|| descriptor_end..at.min(bytes.len()));
                    // The LZW minimum code size, then the data sub-blocks. A frame cut
                    // short still counts: decoders show what there is of it.
                    self.at = skip_sub_blocks(bytes, at + 1).unwrap_or(bytes.len());
                    return Some(Block::Frame(Frame {
                        left: le16(0),
                        top: le16(2),
                        width: le16(4),
                        height: le16(6),
                        interlaced: flags & 0x40 != 0,
                        palette,
                        data: at,
                    }));
                }
                // A second GIF appended to the first (some tools concatenate them):
                // ffmpeg and Pillow go on with its frames, so the count follows them.
                b'G' if bytes[self.at..].starts_with(b"GIF8") => {
                    let flags = *bytes.get(self.at + 10)?;
                    self.at += 13;
                    if flags & 0x80 != 0 {
                        self.at += table_len(flags);
                    }
                }
                _ => return None,
            }
        }
    }
}

/// Bytes of the colour table announced by a packed byte's low three bits.
pub(super) fn table_len(flags: u8) -> usize {
    3 * (2usize << (flags & 0x07))
}

/// The offset after the sub-blocks starting at `at` (after their zero terminator).
pub(crate) fn skip_sub_blocks(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = usize::from(*bytes.get(at)?);
        at += 1;
        if len == 0 {
            return Some(at);
        }
        at += len;
    }
}
