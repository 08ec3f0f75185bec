//! A GIF's structure, read block by block without decoding a pixel; its frames as
//! viewers show them are drawn by [`frames`], the one GIF decoder of every command.
//!
//! - limits: the screen a viewer needs is the bounding box of the logical screen and
//!   every frame, which a hostile file sets past 4 billion pixels in a frame descriptor
//!   while its screen says 32x32; it is checked here, from the headers, as are the
//!   frame count and the length, before any frame is decoded;
//! - timing: every frame's delay, the last one's included, which `gif-to-video` needs
//!   to end the video exactly where the GIF ends (see [`GifScan::total_cs`]).
//!
//! Delays follow browsers: a delay under 2 centiseconds (or no Graphic Control
//! Extension at all) counts as 10 centiseconds.

use crate::media::MediaError;

pub(crate) mod frames;

/// Browsers show a frame whose delay is below this...
const MIN_DELAY_CS: u64 = 2;
/// ...for this long instead.
const DEFAULT_DELAY_CS: u64 = 10;

/// What the blocks of a GIF say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GifScan {
    /// The logical screen, which is the size ffmpeg (and browsers) show.
    pub screen: (u32, u32),
    /// The bounding box of the screen and every frame: what a decoder that grows its
    /// canvas to fit (Pillow does) would allocate.
    pub extent: (u32, u32),
    /// Image descriptors found, in order.
    pub frames: u64,
    /// When the last frame starts, in centiseconds.
    pub last_start_cs: u64,
    /// Sum of all delays, the last frame's included: the animation's length.
    pub total_cs: u64,
}

impl GifScan {
    /// The animation's length in seconds.
    pub fn seconds(&self) -> f64 {
        self.total_cs as f64 / 100.0
    }
}

/// Reads the blocks of a GIF up to its trailer (or its end, or the first byte that
/// starts no block: browsers stop there too).
///
/// `InvalidMedia` when the header is cut short, the screen is empty, or there is no
/// frame at all.
pub(crate) fn scan(bytes: &[u8]) -> Result<GifScan, MediaError> {
    let mut blocks = Blocks::new(bytes)?;
    let (sw, sh) = blocks.screen;
    let mut scan = GifScan {
        screen: (sw.into(), sh.into()),
        extent: (sw.into(), sh.into()),
        frames: 0,
        last_start_cs: 0,
        total_cs: 0,
    };
    let mut delay = None;
    while let Some(block) = blocks.next_block() {
        match block {
            Block::Control(control) => delay = Some(control.delay_cs),
            Block::Frame(frame) => {
                scan.extent.0 = scan
                    .extent
                    .0
                    .max(u32::from(frame.left) + u32::from(frame.width));
                scan.extent.1 = scan
                    .extent
                    .1
                    .max(u32::from(frame.top) + u32::from(frame.height));
                let cs = shown_cs(delay.take().unwrap_or(0));
                scan.last_start_cs = scan.total_cs;
                scan.total_cs += cs;
                scan.frames += 1;
            }
        }
    }
    if scan.screen.0 == 0 || scan.screen.1 == 0 {
        return Err(MediaError::InvalidMedia(format!(
            "the GIF's screen is {} pixels wide and {} high, so nothing of it can be shown",
            scan.screen.0, scan.screen.1
        )));
    }
    if scan.frames == 0 {
        return Err(MediaError::InvalidMedia("the GIF has no frame".into()));
    }
    Ok(scan)
}

/// How long a frame whose Graphic Control Extension says `delay_cs` is shown, in
/// centiseconds: a delay under 2 (or none) is shown for 10, as browsers show it.
pub(crate) fn shown_cs(delay_cs: u16) -> u64 {
    match u64::from(delay_cs) {
        cs if cs < MIN_DELAY_CS => DEFAULT_DELAY_CS,
        cs => cs,
    }
}

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
    bytes: &'a [u8],
    at: usize,
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
fn table_len(flags: u8) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A GIF of `frames` 1x1 frames, each `(delay, with_local_palette)`.
    fn gif(global: bool, frames: &[(Option<u16>, bool)]) -> Vec<u8> {
        let mut b = b"GIF89a\x01\x00\x01\x00".to_vec();
        b.extend_from_slice(&[if global { 0x80 } else { 0 }, 0, 0]);
        if global {
            b.extend_from_slice(&[255, 0, 0, 0, 255, 0]);
        }
        for (delay, local) in frames {
            if let Some(d) = delay {
                let [lo, hi] = d.to_le_bytes();
                b.extend_from_slice(&[0x21, 0xF9, 4, 0, lo, hi, 0, 0]);
            }
            b.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0]);
            if *local {
                b.push(0x80);
                b.extend_from_slice(&[0, 0, 255, 255, 255, 255]);
            } else {
                b.push(0);
            }
            b.extend_from_slice(&[2, 2, 0x4C, 0x01, 0]);
        }
        b.push(0x3B);
        b
    }

    #[test]
    fn the_last_frame_counts_and_short_delays_count_as_a_tenth_of_a_second() {
        let scan = scan(&gif(true, &[(Some(500), false), (Some(500), false)])).unwrap();
        assert_eq!(
            (scan.frames, scan.last_start_cs, scan.total_cs),
            (2, 500, 1000)
        );
        assert_eq!(scan.seconds(), 10.0);
        let scan = scan_of(&[
            (Some(0), false),
            (Some(1), false),
            (None, false),
            (Some(2), false),
        ]);
        assert_eq!(
            (scan.frames, scan.last_start_cs, scan.total_cs),
            (4, 30, 32)
        );
    }

    fn scan_of(frames: &[(Option<u16>, bool)]) -> GifScan {
        scan(&gif(true, frames)).unwrap()
    }

    #[test]
    fn the_extent_covers_frames_that_reach_past_the_screen() {
        let mut b = gif(true, &[(Some(10), false)]);
        // Move the frame to (65535, 65280): a canvas of billions of pixels.
        let d = b.iter().position(|&x| x == 0x2C).unwrap();
        b[d + 1..d + 5].copy_from_slice(&[0xFF, 0xFF, 0x00, 0xFF]);
        let scan = scan(&b).unwrap();
        assert_eq!(scan.screen, (1, 1));
        assert_eq!(scan.extent, (65536, 65281));
    }

    #[test]
    fn broken_headers_are_invalid_media_and_junk_ends_the_frames() {
        assert!(matches!(
            scan(b"GIF89a\x01"),
            Err(MediaError::InvalidMedia(_))
        ));
        assert!(matches!(
            scan(b"\x89PNG\r\n\x1a\n\0\0\0\0\0"),
            Err(MediaError::InvalidMedia(_))
        ));
        let mut zero = gif(true, &[(Some(10), false)]);
        zero[6] = 0;
        assert!(
            matches!(scan(&zero), Err(MediaError::InvalidMedia(m)) if m.contains("0 pixels wide"))
        );
        let no_frames = gif(true, &[]);
        assert!(matches!(scan(&no_frames), Err(MediaError::InvalidMedia(_))));
        let mut twice = gif(true, &[(Some(10), false)]);
        twice.pop();
        twice.extend_from_slice(&gif(false, &[(Some(20), true)]));
        let both = scan(&twice).unwrap();
        assert_eq!((both.frames, both.total_cs), (2, 30));
        let mut junk = gif(true, &[(Some(10), false), (Some(10), false)]);
        let second = junk.iter().rposition(|&x| x == 0x21).unwrap();
        junk[second] = 0x47;
        assert_eq!(scan(&junk).unwrap().frames, 1);
    }
}
