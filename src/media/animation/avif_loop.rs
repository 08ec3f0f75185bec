//! The loop count of an AVIF image sequence.
//!
//! libavif 0.11, the one linked (Debian 12), writes a sequence without an edit list,
//! so readers cannot tell how often it plays (libavif ≥ 1.0 reads "unknown"). This
//! adds to each track the `edts`/`elst` box libavif 1.0 writes for its
//! `repetitionCount` (ISO/IEC 23008-12 §9.6.1): one entry spanning the frames, its
//! `flags` bit 1 ("repeat") set when the animation plays more than once, and the track
//! and movie durations the frames' duration times the plays, or all ones (indefinite)
//! for ever. The boxes after it move, so every offset into `mdat` (`stco`, `iloc`) is
//! moved with them.

use crate::media::error::MediaError;

/// An ISO BMFF box: its type, where it starts, its header's length and its whole size.
#[derive(Debug, Clone, Copy)]
struct BoxAt {
    kind: [u8; 4],
    start: usize,
    header: usize,
    size: usize,
}

impl BoxAt {
    fn body(self, file: &[u8]) -> &[u8] {
        &file[self.start + self.header..self.start + self.size]
    }
}

fn damaged() -> MediaError {
    MediaError::InvalidMedia("libavif wrote an image sequence this service cannot read".into())
}

/// The boxes laid one after another in `bytes`, at offsets from `base`.
fn boxes(bytes: &[u8], base: usize) -> Result<Vec<BoxAt>, MediaError> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() < 8 {
            return Err(damaged());
        }
        let small = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let (size, header) = match small {
            0 => (rest.len(), 8),
            1 if rest.len() >= 16 => (
                usize::try_from(u64::from_be_bytes(rest[8..16].try_into().expect("8 bytes")))
                    .map_err(|_| damaged())?,
                16,
            ),
            n => (n, 8),
        };
        if size < header || size > rest.len() {
            return Err(damaged());
        }
        let kind = rest[4..8].try_into().expect("4 bytes");
        found.push(BoxAt {
            kind,
            start: base + at,
            header,
            size,
        });
        at += size;
    }
    Ok(found)
}

/// `file`, an AVIF image sequence, playing `plays` times (0: for ever).
pub(super) fn with_loop_count(file: &[u8], plays: u32) -> Result<Vec<u8>, MediaError> {
    let top = boxes(file, 0)?;
    let moov = *top
        .iter()
        .find(|b| &b.kind == b"moov")
        .ok_or_else(damaged)?;
    let children = boxes(moov.body(file), moov.start + moov.header)?;
    let mvhd = *children
        .iter()
        .find(|b| &b.kind == b"mvhd")
        .ok_or_else(damaged)?;
    let frames = read_duration(file, mvhd, 20, 12)?;
    let total = match plays {
        0 => u64::MAX,
        n => frames.saturating_mul(u64::from(n)),
    };
    let mut moov_body = Vec::with_capacity(moov.size);
    for child in &children {
        let mut bytes = file[child.start..child.start + child.size].to_vec();
        match &child.kind {
            b"mvhd" => write_duration(&mut bytes, child.header, 20, 12, total)?,
            b"trak" => bytes = with_edit_list(file, *child, frames, total, plays != 1)?,
            _ => {}
        }
        moov_body.extend_from_slice(&bytes);
    }
    let new_moov = boxed(b"moov", &moov_body);
    let delta = new_moov.len() - moov.size;
    let moov_end = moov.start + moov.size;
    // Offsets pointing past the old `moov` (into `mdat`) move by `delta`.
    let mut out = Vec::with_capacity(file.len() + delta);
    for b in &top {
        let mut bytes = if b.start == moov.start {
            new_moov.clone()
        } else {
            file[b.start..b.start + b.size].to_vec()
        };
        if &b.kind == b"meta" {
            shift_iloc(&mut bytes, b.header, moov_end, delta)?;
        }
        if &b.kind == b"moov" {
            shift_chunk_offsets(&mut bytes, 8, moov_end, delta)?;
        }
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// A box of `kind` around `body` (32-bit size).
fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 8);
    out.extend_from_slice(&((body.len() + 8) as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

/// The duration field of a full box (`mvhd`, `tkhd`): at `v1` bytes past the version
/// and flags in version 1 (64 bits), at `v0` in version 0 (32 bits).
fn read_duration(file: &[u8], b: BoxAt, v1: usize, v0: usize) -> Result<u64, MediaError> {
    let body = b.body(file);
    let field = |at: usize, len: usize| body.get(4 + at..4 + at + len).ok_or_else(damaged);
    Ok(match body.first() {
        Some(1) => u64::from_be_bytes(field(v1, 8)?.try_into().expect("8 bytes")),
        Some(0) => u32::from_be_bytes(field(v0, 4)?.try_into().expect("4 bytes")).into(),
        _ => return Err(damaged()),
    })
}

/// Writes `duration` into the box in `bytes` (its header `header` bytes long).
fn write_duration(
    bytes: &mut [u8],
    header: usize,
    v1: usize,
    v0: usize,
    duration: u64,
) -> Result<(), MediaError> {
    let version = *bytes.get(header).ok_or_else(damaged)?;
    let (at, value) = match version {
        1 => (header + 4 + v1, duration.to_be_bytes().to_vec()),
        0 => (
            header + 4 + v0,
            u32::try_from(duration)
                .unwrap_or(u32::MAX)
                .to_be_bytes()
                .to_vec(),
        ),
        _ => return Err(damaged()),
    };
    bytes
        .get_mut(at..at + value.len())
        .ok_or_else(damaged)?
        .copy_from_slice(&value);
    Ok(())
}

/// `trak` rebuilt with its duration `total` and an edit list right after `tkhd` (kept
/// as it is when it has one).
fn with_edit_list(
    file: &[u8],
    trak: BoxAt,
    frames: u64,
    total: u64,
    repeats: bool,
) -> Result<Vec<u8>, MediaError> {
    let children = boxes(trak.body(file), trak.start + trak.header)?;
    if children.iter().any(|b| &b.kind == b"edts") {
        return Ok(file[trak.start..trak.start + trak.size].to_vec());
    }
    let mut body = Vec::with_capacity(trak.size + 44);
    for child in &children {
        let mut bytes = file[child.start..child.start + child.size].to_vec();
        if &child.kind == b"tkhd" {
            write_duration(&mut bytes, child.header, 24, 16, total)?;
            body.extend_from_slice(&bytes);
            let mut elst = vec![1, 0, 0, u8::from(repeats)];
            elst.extend_from_slice(&1u32.to_be_bytes()); // entry_count
            elst.extend_from_slice(&frames.to_be_bytes()); // segment_duration
            elst.extend_from_slice(&0i64.to_be_bytes()); // media_time
            elst.extend_from_slice(&1i16.to_be_bytes()); // media_rate_integer
            elst.extend_from_slice(&0i16.to_be_bytes()); // media_rate_fraction
            body.extend_from_slice(&boxed(b"edts", &boxed(b"elst", &elst)));
        } else {
            body.extend_from_slice(&bytes);
        }
    }
    Ok(boxed(b"trak", &body))
}

/// Moves every `stco`/`co64` entry of the `moov` in `bytes` at or past `from` by
/// `delta`.
fn shift_chunk_offsets(
    bytes: &mut [u8],
    header: usize,
    from: usize,
    delta: usize,
) -> Result<(), MediaError> {
    let children = boxes(&bytes[header..], header)?;
    for child in children {
        let body = child.start + child.header;
        match &child.kind {
            b"trak" | b"mdia" | b"minf" | b"stbl" => {
                let end = child.start + child.size;
                shift_chunk_offsets(&mut bytes[..end], body, from, delta)?;
            }
            b"stco" | b"co64" => {
                let wide = &child.kind == b"co64";
                let width = if wide { 8 } else { 4 };
                let count = read_uint(bytes, body + 4, 4)? as usize;
                for i in 0..count {
                    shift_at(bytes, body + 8 + i * width, width, from, delta)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Moves every file offset of the `iloc` in `meta` (the box in `bytes`, its header
/// `header` bytes long) at or past `from` by `delta`.
fn shift_iloc(
    bytes: &mut [u8],
    header: usize,
    from: usize,
    delta: usize,
) -> Result<(), MediaError> {
    // `meta` is a full box: version and flags before its children.
    let children = boxes(&bytes[header + 4..], header + 4)?;
    let Some(iloc) = children.iter().find(|b| &b.kind == b"iloc") else {
        return Ok(());
    };
    let mut at = iloc.start + iloc.header;
    let version = *bytes.get(at).ok_or_else(damaged)?;
    let sizes = read_uint(bytes, at + 4, 2)? as usize;
    let (offset_size, length_size) = (sizes >> 12, (sizes >> 8) & 0xF);
    let (base_size, index_size) = ((sizes >> 4) & 0xF, sizes & 0xF);
    let index_size = if version == 0 { 0 } else { index_size };
    at += 6;
    let id_size = if version < 2 { 2 } else { 4 };
    let count = read_uint(bytes, at, id_size)?;
    at += id_size;
    for _ in 0..count {
        at += id_size;
        let method = if version == 0 {
            0
        } else {
            let method = read_uint(bytes, at, 2)? & 0xF;
            at += 2;
            method
        };
        at += 2; // data_reference_index
        let base_at = at;
        at += base_size;
        let extents = read_uint(bytes, at, 2)?;
        at += 2;
        // Only offsets into this file (method 0) move; a base offset carries them all.
        let moves = method == 0;
        if moves && base_size > 0 {
            shift_at(bytes, base_at, base_size, from, delta)?;
        }
        for _ in 0..extents {
            at += index_size;
            if moves && base_size == 0 {
                shift_at(bytes, at, offset_size, from, delta)?;
            }
            at += offset_size + length_size;
        }
    }
    Ok(())
}

fn read_uint(bytes: &[u8], at: usize, len: usize) -> Result<u64, MediaError> {
    let field = bytes.get(at..at + len).ok_or_else(damaged)?;
    Ok(field.iter().fold(0, |n, &b| (n << 8) | u64::from(b)))
}

/// Adds `delta` to the `len`-byte big-endian offset at `at` when it is at or past `from`.
fn shift_at(
    bytes: &mut [u8],
    at: usize,
    len: usize,
    from: usize,
    delta: usize,
) -> Result<(), MediaError> {
    if len == 0 {
        return Ok(());
    }
    let value = read_uint(bytes, at, len)?;
    if value < from as u64 {
        return Ok(());
    }
    let moved = value + delta as u64;
    if len < 8 && moved >> (len * 8) != 0 {
        return Err(damaged());
    }
    for (i, byte) in bytes[at..at + len].iter_mut().enumerate() {
        *byte = (moved >> (8 * (len - 1 - i))) as u8;
    }
    Ok(())
}
