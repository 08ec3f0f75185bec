//! What a WebM (Matroska) output's headers say, read in this process: its size, length
//! and frame count for `attributes.outputs`, without the `ffprobe` run (60–100 ms of
//! library loading) that describing a video-to-webm output used to cost.
//!
//! Only what ffmpeg's Matroska muxer writes to a file is answered: an EBML header, one
//! Segment of known size, one video track, clusters of known size. Blocks are counted
//! from their headers (each is one packet, as ffprobe counts them); payloads are
//! skipped, never read. Anything else, and anything malformed, gives `None`, and the
//! caller asks ffprobe. Every read is bounds-checked: nothing here panics on any bytes.

use std::io::{BufReader, Read};
use std::path::Path;

use crate::media::video::info::Extent;

const EBML: u32 = 0x1A45_DFA3;
const SEGMENT: u32 = 0x1853_8067;
const INFO: u32 = 0x1549_A966;
const TIMESTAMP_SCALE: u32 = 0x2A_D7B1;
const DURATION: u32 = 0x4489;
const TRACKS: u32 = 0x1654_AE6B;
const TRACK_ENTRY: u32 = 0xAE;
const TRACK_NUMBER: u32 = 0xD7;
const TRACK_TYPE: u32 = 0x83;
const VIDEO: u32 = 0xE0;
const PIXEL_WIDTH: u32 = 0xB0;
const PIXEL_HEIGHT: u32 = 0xBA;
const CLUSTER: u32 = 0x1F43_B675;
const SIMPLE_BLOCK: u32 = 0xA3;
const BLOCK_GROUP: u32 = 0xA0;
const BLOCK: u32 = 0xA1;
/// `TrackType` of a video track.
const VIDEO_TRACK: u64 = 1;
/// The largest `Info` or `Tracks` element read into memory.
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The size, length and frame count of the Matroska file at `path`, if it is plain.
pub(crate) fn read_extent(path: &Path) -> Option<Extent> {
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut reader = Elements {
        file: BufReader::new(file),
        at: 0,
    };
    let (id, size) = reader.header()?;
    if id != EBML {
        return None;
    }
    reader.skip(size)?;
    let (id, size) = reader.header()?;
    let end = reader.at.checked_add(size)?;
    if id != SEGMENT || end > len {
        return None;
    }
    let mut scale = 1_000_000u64;
    let mut duration = None;
    let mut video: Option<(u64, u32, u32)> = None;
    // Blocks per track number, for the few tracks a file has.
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    while reader.at < end {
        let (id, size) = reader.header()?;
        let element_end = reader.at.checked_add(size)?;
        if element_end > end {
            return None;
        }
        match id {
            INFO => {
                let info = reader.payload(size)?;
                for (id, body) in children(&info)? {
                    match id {
                        TIMESTAMP_SCALE => scale = uint(body)?,
                        DURATION => duration = Some(float(body)?),
                        _ => {}
                    }
                }
            }
            TRACKS => {
                let tracks = reader.payload(size)?;
                for (id, entry) in children(&tracks)? {
                    if id != TRACK_ENTRY {
                        continue;
                    }
                    if let Some(track) = video_track(entry)? {
                        if video.replace(track).is_some() {
                            return None; // more than one video track
                        }
                    }
                }
            }
            CLUSTER => count_blocks(&mut reader, element_end, &mut blocks)?,
            _ => reader.skip(size)?,
        }
        if reader.at != element_end {
            return None;
        }
    }
    let (number, width, height) = video?;
    let frames = blocks.iter().find(|(n, _)| *n == number).map(|(_, c)| *c)?;
    let seconds = duration? * scale as f64 / 1e9;
    (seconds.is_finite() && seconds > 0.0 && width > 0 && height > 0).then_some(Extent {
        width,
        height,
        duration: Some(seconds),
        frames,
    })
}

/// `(number, width, height)` of a `TrackEntry` that is a video track; `Ok(None)` for
/// other tracks (the outer `None`: malformed).
fn video_track(entry: &[u8]) -> Option<Option<(u64, u32, u32)>> {
    let (mut number, mut kind, mut size) = (None, None, None);
    for (id, body) in children(entry)? {
        match id {
            TRACK_NUMBER => number = Some(uint(body)?),
            TRACK_TYPE => kind = Some(uint(body)?),
            VIDEO => {
                let (mut width, mut height) = (None, None);
                for (id, body) in children(body)? {
                    match id {
                        PIXEL_WIDTH => width = Some(u32::try_from(uint(body)?).ok()?),
                        PIXEL_HEIGHT => height = Some(u32::try_from(uint(body)?).ok()?),
                        _ => {}
                    }
                }
                size = Some((width?, height?));
            }
            _ => {}
        }
    }
    if kind != Some(VIDEO_TRACK) {
        return Some(None);
    }
    let (width, height) = size?;
    Some(Some((number?, width, height)))
}

/// Counts the blocks of a cluster ending at `end`, per track.
fn count_blocks(reader: &mut Elements, end: u64, blocks: &mut Vec<(u64, u64)>) -> Option<()> {
    while reader.at < end {
        let (id, size) = reader.header()?;
        let block_end = reader.at.checked_add(size)?;
        if block_end > end {
            return None;
        }
        let track = match id {
            SIMPLE_BLOCK => Some(reader.vint(false)?),
            BLOCK_GROUP => {
                let mut track = None;
                while reader.at < block_end {
                    let (id, size) = reader.header()?;
                    let inner_end = reader.at.checked_add(size)?;
                    if id == BLOCK {
                        track = Some(reader.vint(false)?);
                    }
                    reader.skip(inner_end.checked_sub(reader.at)?)?;
                }
                track
            }
            _ => None,
        };
        if let Some(track) = track {
            match blocks.iter_mut().find(|(n, _)| *n == track) {
                Some((_, count)) => *count += 1,
                None => blocks.push((track, 1)),
            }
        }
        reader.skip(block_end.checked_sub(reader.at)?)?;
    }
    Some(())
}

/// Element headers read from a file, payloads skipped by seeking.
struct Elements {
    file: BufReader<std::fs::File>,
    /// The offset of the next byte.
    at: u64,
}

impl Elements {
    fn byte(&mut self) -> Option<u8> {
        let mut b = [0u8];
        self.file.read_exact(&mut b).ok()?;
        self.at += 1;
        Some(b[0])
    }

    /// A variable-length integer: with its length marker for an ID (`keep_marker`),
    /// without it for a size or a track number. An unknown size (all ones) is `None`.
    fn vint(&mut self, keep_marker: bool) -> Option<u64> {
        let mut bytes = [0u8; 8];
        bytes[0] = self.byte()?;
        let len = (bytes[0].leading_zeros() as usize + 1).min(8);
        self.file.read_exact(&mut bytes[1..len]).ok()?;
        self.at += len as u64 - 1;
        vint_in(&bytes[..len], keep_marker).map(|(value, _)| value)
    }

    /// `(id, size)` of the next element.
    fn header(&mut self) -> Option<(u32, u64)> {
        let id = u32::try_from(self.vint(true)?).ok()?;
        Some((id, self.vint(false)?))
    }

    fn skip(&mut self, bytes: u64) -> Option<()> {
        self.file.seek_relative(i64::try_from(bytes).ok()?).ok()?;
        self.at = self.at.checked_add(bytes)?;
        Some(())
    }

    fn payload(&mut self, size: u64) -> Option<Vec<u8>> {
        if size > MAX_HEADER_BYTES {
            return None;
        }
        let mut bytes = vec![0u8; size as usize];
        self.file.read_exact(&mut bytes).ok()?;
        self.at += size;
        Some(bytes)
    }
}

/// The child elements of an in-memory payload: `(id, body)`.
fn children(mut bytes: &[u8]) -> Option<Vec<(u32, &[u8])>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (id, id_len) = vint_in(bytes, true)?;
        let (size, size_len) = vint_in(bytes.get(id_len..)?, false)?;
        let start = id_len + size_len;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        out.push((u32::try_from(id).ok()?, bytes.get(start..end)?));
        bytes = &bytes[end..];
    }
    Some(out)
}

/// [`Elements::vint`] over a slice: `(value, length)`. A first byte of zero (a
/// length past 8) is malformed.
fn vint_in(bytes: &[u8], keep_marker: bool) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    let len = first.leading_zeros() as usize + 1;
    if len > 8 {
        return None;
    }
    let mut value = u64::from(if keep_marker {
        first
    } else {
        first & (0xFFu32 >> len) as u8
    });
    for b in bytes.get(1..len)? {
        value = value << 8 | u64::from(*b);
    }
    let all_ones = (1u64 << (7 * len)) - 1;
    (keep_marker || value != all_ones).then_some((value, len))
}

fn uint(body: &[u8]) -> Option<u64> {
    (body.len() <= 8).then(|| body.iter().fold(0u64, |v, b| v << 8 | u64::from(*b)))
}

fn float(body: &[u8]) -> Option<f64> {
    match body.len() {
        4 => Some(f64::from(f32::from_be_bytes(body.try_into().ok()?))),
        8 => Some(f64::from_be_bytes(body.try_into().ok()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
