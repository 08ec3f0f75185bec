//! What an MP4 or MOV file's headers say, read in this process: the common case of a
//! video edit without an `ffprobe` run, whose start (loading ffmpeg's libraries) costs
//! 60–100 ms — most of a short job's fixed cost.
//!
//! Only the plain case is answered: one H.264 video track at a constant frame rate
//! (one `stts` duration, the last sample aside), square pixels, no rotation, no
//! container colour box, no HDR transfer, not fragmented. Anything else, and anything
//! malformed, gives `None` and the caller asks ffprobe, which stays the authority on
//! odd files and on what is wrong with a broken one. Nothing here panics on hostile bytes: every read
//! is bounds-checked.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::media::video::info::Extent;
use crate::media::video::info::VideoInfo;
use sps::Sps;

/// The largest `moov` read; a bigger index is left to ffprobe.
const MAX_MOOV_BYTES: u64 = 16 << 20;
/// Top-level boxes looked at before giving up on finding `moov`.
const MAX_TOP_LEVEL_BOXES: usize = 64;

/// The video facts of `path`, if it is a plain MP4/MOV with an H.264 track.
pub(crate) fn read_info(path: &Path) -> Option<VideoInfo> {
    let moov = read_moov(path)?;
    parse_moov(&moov)
}

/// The frames of `path`'s video track a decoder can start at, from 0 (its sync
/// samples, `stss`), if it is a plain MP4/MOV: where a seek starts decoding. Counted in
/// decode order, which for a closed GOP is also the order shown. `None` for any other
/// file, and for a track without `stss` (every frame is one).
pub(crate) fn keyframes(path: &Path) -> Option<Vec<u64>> {
    let moov = read_moov(path)?;
    let plain = plain(&moov, true)?;
    let stss = plain.tracks[plain.video].stbl.child(b"stss")?;
    let count = stss.u32(4)? as usize;
    // A count past what the box holds is a damaged table: none is read past its end.
    (0..count)
        .map(|i| Some(u64::from(stss.u32(8 + 4 * i)?).saturating_sub(1)))
        .collect()
}

/// The payload of the top-level `moov` box.
fn read_moov(path: &Path) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut at = 0u64;
    for _ in 0..MAX_TOP_LEVEL_BOXES {
        if at + 8 > len {
            return None;
        }
        file.seek(SeekFrom::Start(at)).ok()?;
        let mut head = [0u8; 16];
        file.read_exact(&mut head[..8]).ok()?;
        let mut size = u64::from(u32::from_be_bytes(head[..4].try_into().ok()?));
        let kind: [u8; 4] = head[4..8].try_into().ok()?;
        let mut header = 8;
        if size == 1 {
            file.read_exact(&mut head[8..16]).ok()?;
            size = u64::from_be_bytes(head[8..16].try_into().ok()?);
            header = 16;
        } else if size == 0 {
            size = len - at;
        }
        if size < header || at.checked_add(size)? > len {
            return None;
        }
        if &kind == b"moov" {
            let body = size - header;
            if body > MAX_MOOV_BYTES {
                return None;
            }
            let mut moov = vec![0u8; body as usize];
            file.read_exact(&mut moov).ok()?;
            return Some(moov);
        }
        at += size;
    }
    None
}

/// A bounds-checked reader over a box's bytes.
#[derive(Clone, Copy)]
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn slice(self, at: usize, len: usize) -> Option<&'a [u8]> {
        self.0.get(at..at.checked_add(len)?)
    }
    fn u8(self, at: usize) -> Option<u8> {
        self.0.get(at).copied()
    }
    fn u16(self, at: usize) -> Option<u16> {
        Some(u16::from_be_bytes(self.slice(at, 2)?.try_into().ok()?))
    }
    fn u32(self, at: usize) -> Option<u32> {
        Some(u32::from_be_bytes(self.slice(at, 4)?.try_into().ok()?))
    }
    fn u64(self, at: usize) -> Option<u64> {
        Some(u64::from_be_bytes(self.slice(at, 8)?.try_into().ok()?))
    }

    /// The child boxes: `(type, payload)`; `None` if they do not tile the bytes.
    fn children(self) -> Option<Vec<([u8; 4], Bytes<'a>)>> {
        let mut out = Vec::new();
        let mut at = 0usize;
        while at < self.0.len() {
            let mut size = self.u32(at)? as usize;
            let kind: [u8; 4] = self.slice(at + 4, 4)?.try_into().ok()?;
            let mut header = 8;
            if size == 1 {
                size = usize::try_from(self.u64(at + 8)?).ok()?;
                header = 16;
            } else if size == 0 {
                size = self.0.len() - at;
            }
            if size < header {
                return None;
            }
            out.push((kind, Bytes(self.slice(at + header, size - header)?)));
            at += size;
        }
        Some(out)
    }

    fn child(self, kind: &[u8; 4]) -> Option<Bytes<'a>> {
        self.children()?
            .into_iter()
            .find(|(k, _)| k == kind)
            .map(|(_, b)| b)
    }
}

/// `(timescale, duration)` of an `mvhd` or `mdhd` payload.
fn time_header(b: Bytes) -> Option<(u32, u64)> {
    match b.u8(0)? {
        0 => Some((b.u32(12)?, u64::from(b.u32(16)?))),
        1 => Some((b.u32(20)?, b.u64(24)?)),
        _ => None,
    }
}

fn seconds((timescale, duration): (u32, u64)) -> Option<f64> {
    (timescale > 0).then(|| duration as f64 / f64::from(timescale))
}

/// One track: its handler, time header and sample table.
struct Track<'a> {
    handler: [u8; 4],
    media_time: (u32, u64),
    stbl: Bytes<'a>,
    tkhd: Bytes<'a>,
}

fn track(trak: Bytes<'_>) -> Option<Track<'_>> {
    let mdia = trak.child(b"mdia")?;
    let handler: [u8; 4] = mdia.child(b"hdlr")?.slice(8, 4)?.try_into().ok()?;
    Some(Track {
        handler,
        media_time: time_header(mdia.child(b"mdhd")?)?,
        stbl: mdia.child(b"minf")?.child(b"stbl")?,
        tkhd: trak.child(b"tkhd")?,
    })
}

/// The parts of a plain file both readers need: its tracks, the video track's sample
/// entry and frame count, and the movie's time header.
struct Plain<'a> {
    tracks: Vec<Track<'a>>,
    video: usize,
    entry: Entry,
    frames: u64,
    movie: (u32, u64),
}

impl Plain<'_> {
    /// The longest of the tracks and the movie, and of `more` (seconds).
    fn duration(&self, more: Option<f64>) -> Option<f64> {
        self.tracks
            .iter()
            .filter_map(|t| seconds(t.media_time))
            .chain(seconds(self.movie))
            .chain(more)
            .filter(|s| s.is_finite() && *s > 0.0)
            .reduce(f64::max)
    }
}

/// `colour_box`: whether a `colr` box may stand beside the SPS (it may restate or
/// override the colour matrix, which only [`read_info`] reports).
fn plain(moov: &[u8], colour_box: bool) -> Option<Plain<'_>> {
    let moov = Bytes(moov);
    let boxes = moov.children()?;
    if boxes.iter().any(|(k, _)| k == b"mvex") {
        return None; // fragmented: the samples are in the fragments
    }
    let movie = time_header(moov.child(b"mvhd")?)?;
    let tracks: Vec<Track> = boxes
        .iter()
        .filter(|(k, _)| k == b"trak")
        .map(|(_, t)| track(*t))
        .collect::<Option<_>>()?;
    let mut videos = tracks
        .iter()
        .enumerate()
        .filter(|(_, t)| &t.handler == b"vide");
    let (video, track) = videos.next()?;
    if videos.next().is_some() || !identity_matrix(track.tkhd)? {
        return None;
    }
    let entry = sample_entry(track.stbl, colour_box)?;
    let frames = u64::from(track.stbl.child(b"stsz")?.u32(8)?);
    if frames == 0 || seconds(track.media_time)? <= 0.0 {
        return None;
    }
    Some(Plain {
        tracks,
        video,
        entry,
        frames,
        movie,
    })
}

fn parse_moov(moov: &[u8]) -> Option<VideoInfo> {
    let plain = plain(moov, false)?;
    let video = &plain.tracks[plain.video];
    let base_rate = constant_rate(video.stbl.child(b"stts")?, video.media_time.0)?;
    // As ffmpeg's mov demuxer does for a constant rate.
    let frame_rate = base_rate;
    let duration = plain.duration(Some(plain.frames as f64 / frame_rate));
    let entry = &plain.entry;
    if entry.sps.hdr_transfer {
        return None;
    }
    Some(VideoInfo {
        width: entry.width,
        height: entry.height,
        duration,
        frames: Some(plain.frames),
        frame_rate: Some(frame_rate),
        base_rate: Some(base_rate),
        has_audio: plain.tracks.iter().any(|t| &t.handler == b"soun"),
        codec: Some("h264".into()),
        pix_fmt: Some(entry.sps.pix_fmt()?.into()),
        shown_as_stored: true,
        shown: (entry.width, entry.height),
        matrix: entry.sps.matrix,
        hdr: None,
    })
}

/// What an output's description needs (`media::describe`): its size, length and
/// frame count. Unlike [`read_info`] a variable rate is read too — a gif-to-video
/// output's frames last as the GIF's did — so describing it starts no ffprobe.
pub(crate) fn read_extent(path: &Path) -> Option<Extent> {
    let moov = read_moov(path)?;
    let plain = plain(&moov, true)?;
    Some(Extent {
        width: plain.entry.width,
        height: plain.entry.height,
        duration: plain.duration(None),
        frames: plain.frames,
    })
}

/// A `tkhd` whose display matrix shows frames as stored.
fn identity_matrix(tkhd: Bytes) -> Option<bool> {
    let at = match tkhd.u8(0)? {
        0 => 40,
        1 => 52,
        _ => return None,
    };
    let m: Vec<u32> = (0..9)
        .map(|i| tkhd.u32(at + 4 * i))
        .collect::<Option<_>>()?;
    Some(m == [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000])
}

/// The frame rate every sample time is a multiple of, when every sample but the last
/// lasts the same.
fn constant_rate(stts: Bytes, timescale: u32) -> Option<f64> {
    let count = stts.u32(4)? as usize;
    let delta = match count {
        1 => stts.u32(12)?,
        // The last sample often lasts otherwise (an edit's end).
        2 if stts.u32(16)? == 1 => stts.u32(12)?,
        _ => return None,
    };
    (delta > 0 && timescale > 0).then(|| f64::from(timescale) / f64::from(delta))
}

struct Entry {
    width: u32,
    height: u32,
    sps: Sps,
}

/// The first sample description: an `avc1`/`avc3` entry with square pixels (and no
/// colour box unless `colour_box`), whose SPS agrees on the size.
fn sample_entry(stbl: Bytes, colour_box: bool) -> Option<Entry> {
    let stsd = stbl.child(b"stsd")?;
    if stsd.u32(4)? != 1 {
        return None;
    }
    let entries = Bytes(stsd.0.get(8..)?).children()?;
    let (kind, entry) = entries.first()?;
    if kind != b"avc1" && kind != b"avc3" {
        return None;
    }
    let (width, height) = (u32::from(entry.u16(24)?), u32::from(entry.u16(26)?));
    let children = Bytes(entry.0.get(78..)?).children()?;
    let mut sps = None;
    for (kind, body) in &children {
        match kind {
            b"avcC" => sps = avcc_sps(*body),
            b"pasp" if body.u32(0)? != body.u32(4)? => return None,
            b"colr" if !colour_box => return None,
            _ => {}
        }
    }
    let sps = sps?;
    if (sps.width, sps.height) != (width, height) || !sps.square_pixels || width == 0 {
        return None;
    }
    Some(Entry { width, height, sps })
}

/// The first SPS of an `avcC` payload.
fn avcc_sps(avcc: Bytes) -> Option<Sps> {
    if avcc.u8(5)? & 0x1f == 0 {
        return None;
    }
    let len = avcc.u16(6)? as usize;
    Sps::parse(avcc.slice(8, len)?)
}

mod sps;

#[cfg(test)]
mod tests;
