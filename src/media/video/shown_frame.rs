//! The frame a player shows at a given second, found from the packets around it.
//!
//! ffmpeg's accurate seek (`-ss` before the input) drops every frame that *starts*
//! before the seek point, so `-ss 1.02` on a 10 fps clip begins with the frame of 1.1,
//! not the frame of 1.0 that is on screen at 1.02. `trim-video` and `video-poster`
//! promise the frame shown at their time: they read the timestamps of the video
//! packets near it (`ffprobe -read_intervals`, which only demuxes), take the last frame
//! starting at or before it, and seek to that frame's own start. Whether that frame is
//! a keyframe tells `trim-video` whether it can cut without re-encoding.

use std::ffi::OsString;

use serde::Deserialize;

use crate::media::engine::Media;
use crate::media::error::MediaError;
use crate::media::ffmpeg::input::{demuxer, file_url};
use crate::media::file::MediaFile;

/// Seconds of packets read past the time asked: enough for any frame starting before
/// it to have been demuxed, B-frames coming after it in decode order included.
const READ_PAST: f64 = 1.0;

/// The frame shown at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ShownFrame {
    /// When it starts, in seconds from the start of the file (its first timestamp).
    pub start: f64,
    /// Whether it is a keyframe: a cut there can copy the stream.
    pub key: bool,
}

#[derive(Deserialize)]
struct Listing {
    #[serde(default)]
    packets: Vec<Packet>,
    #[serde(default)]
    streams: Vec<Stream>,
    format: Option<Format>,
}

#[derive(Deserialize)]
struct Packet {
    pts: Option<i64>,
    #[serde(default)]
    flags: String,
}

#[derive(Deserialize)]
struct Stream {
    time_base: String,
}

#[derive(Deserialize)]
struct Format {
    start_time: Option<String>,
}

/// The frame of `input`'s first video stream shown `at` seconds from its start: the
/// last one starting at or before it (the last frame for a time past the end, the
/// first for a time before it). `InvalidMedia` when no video packet can be read there.
pub(crate) async fn frame_shown_at(
    media: &Media,
    input: &MediaFile,
    at: f64,
) -> Result<ShownFrame, MediaError> {
    let mut shown = frames_shown_at(media, input, &[at]).await?;
    Ok(shown.remove(0))
}

/// [`frame_shown_at`] for each of `times`, in their order, from one ffprobe run that
/// reads the packets around every one of them (`video-scenes`' posters: one run for
/// all, not one each). `InvalidMedia` when no video packet can be read.
pub(crate) async fn frames_shown_at(
    media: &Media,
    input: &MediaFile,
    times: &[f64],
) -> Result<Vec<ShownFrame>, MediaError> {
    let head = probe_head(media, input).await?;
    let origin = head.format.and_then(|f| f.start_time?.parse::<f64>().ok());
    let origin = origin.filter(|o| o.is_finite()).unwrap_or(0.0);
    let froms: Vec<f64> = times.iter().map(|at| origin + at.max(0.0)).collect();
    let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "v:0"]
        .map(OsString::from)
        .to_vec();
    args.extend(["-read_intervals".into(), intervals(&froms).into()]);
    args.extend(["-show_entries", "packet=pts,flags", "-of", "json"].map(OsString::from));
    args.extend(["-protocol_whitelist", "file", "-f", demuxer(input.format)].map(OsString::from));
    args.push(file_url(&input.path));
    let output = media.runner().run(&media.config().ffprobe, args).await?;
    let listing: Listing = serde_json::from_slice(&output.stdout)
        .map_err(|_| MediaError::InvalidMedia("ffprobe's packet list was not JSON".into()))?;
    // Every packet of every interval: a packet of another interval is a real frame
    // too, and each interval holds every frame from its keyframe to past its time.
    let packets: Vec<(f64, bool)> = listing
        .packets
        .iter()
        .filter_map(|p| Some((p.pts? as f64 * head.time_base, p.flags.contains('K'))))
        .collect();
    froms
        .iter()
        .map(|&from| {
            let (start, key) = pick(&packets, from).ok_or_else(|| {
                MediaError::InvalidMedia("no video frame could be read at that time".into())
            })?;
            Ok(ShownFrame {
                start: (start - origin).max(0.0),
                key,
            })
        })
        .collect()
}

/// ffprobe's `-read_intervals` for the frames shown at `froms` (absolute seconds), in
/// order of time: each from its time to [`READ_PAST`] after it. An absolute end: an
/// offset (`%+1`) counts from the first packet read, which is the keyframe the seek
/// lands on, possibly long before the time.
fn intervals(froms: &[f64]) -> String {
    let mut sorted = froms.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    let each: Vec<String> = sorted
        .iter()
        .map(|from| format!("{from:.6}%{:.6}", from + READ_PAST))
        .collect();
    each.join(",")
}

/// The frame shown at `at` among `packets` (start, keyframe): the last starting at or
/// before it, else the first.
fn pick(packets: &[(f64, bool)], at: f64) -> Option<(f64, bool)> {
    // Timestamps are exact multiples of the time base; a microsecond absorbs the
    // rounding of `at` as written on the command line.
    let before = packets
        .iter()
        .filter(|(start, _)| *start <= at + 1e-6)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    before
        .or_else(|| packets.iter().min_by(|a, b| a.0.total_cmp(&b.0)))
        .copied()
}

struct Head {
    time_base: f64,
    format: Option<Format>,
}

/// The video stream's time base and the file's first timestamp.
async fn probe_head(media: &Media, input: &MediaFile) -> Result<Head, MediaError> {
    let mut args: Vec<OsString> = ["-v", "error", "-select_streams", "v:0"]
        .map(OsString::from)
        .to_vec();
    args.extend(
        [
            "-show_entries",
            "stream=time_base:format=start_time",
            "-of",
            "json",
            "-protocol_whitelist",
            "file",
            "-f",
            demuxer(input.format),
        ]
        .map(OsString::from),
    );
    args.push(file_url(&input.path));
    let output = media.runner().run(&media.config().ffprobe, args).await?;
    let listing: Listing = serde_json::from_slice(&output.stdout)
        .map_err(|_| MediaError::InvalidMedia("ffprobe's stream list was not JSON".into()))?;
    let time_base = listing
        .streams
        .first()
        .and_then(|s| crate::media::video::probe::parse_rate(&s.time_base))
        .filter(|tb| tb.is_finite() && *tb > 0.0)
        .ok_or_else(|| MediaError::InvalidMedia("it has no video stream".into()))?;
    Ok(Head {
        time_base,
        format: listing.format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_shown_is_the_last_to_start_at_or_before_the_time() {
        // Decode order with a B-frame: 0.0 (key), 0.2, 0.1, 0.3 (key).
        let packets = [(0.0, true), (0.2, false), (0.1, false), (0.3, true)];
        assert_eq!(pick(&packets, 0.15), Some((0.1, false)));
        assert_eq!(pick(&packets, 0.3), Some((0.3, true)));
        assert_eq!(
            pick(&packets, 9.0),
            Some((0.3, true)),
            "past the end: the last"
        );
        let late = [(0.5, true), (0.6, false)];
        assert_eq!(
            pick(&late, 0.1),
            Some((0.5, true)),
            "before the first: the first"
        );
        assert_eq!(pick(&[], 1.0), None);
    }

    #[test]
    fn the_intervals_read_are_in_order_of_time_each_past_its_time() {
        assert_eq!(
            intervals(&[20.5, 2.0, 20.5]),
            "2.000000%3.000000,20.500000%21.500000"
        );
    }
}
