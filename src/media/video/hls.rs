//! HLS playlists as this service writes them (`video-to-hls`): reading a master
//! playlist's variants and a media playlist's segments, and stating each variant's
//! `BANDWIDTH` from the bytes its segments really take.
//!
//! ffmpeg's HLS muxer states a variant's `BANDWIDTH` from the encoders' declared
//! rates (`-maxrate`), which a capped-CRF segment may still exceed for a moment, and
//! leaves it out entirely without one. RFC 8216 §4.3.4.2 wants the peak segment bit
//! rate, so the master playlist is rewritten once the segments exist: `BANDWIDTH` the
//! highest rate of any segment (its init section counted with it, as a player that
//! switches to it must fetch both), `AVERAGE-BANDWIDTH` the rate over the whole
//! playlist.

use std::path::{Path, PathBuf};

use crate::media::error::MediaError;

/// One `#EXT-X-STREAM-INF` of a master playlist.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The attribute list as written (`BANDWIDTH=…,RESOLUTION=…,CODECS="…"`).
    pub attributes: String,
    /// The media playlist's URI, relative to the master.
    pub uri: String,
}

impl Variant {
    /// `RESOLUTION`, when stated.
    pub fn resolution(&self) -> Option<(u32, u32)> {
        let value = attribute(&self.attributes, "RESOLUTION")?;
        let (w, h) = value.split_once('x')?;
        Some((w.parse().ok()?, h.parse().ok()?))
    }
}

/// The value of attribute `name` in an attribute list, quotes removed.
pub fn attribute<'a>(list: &'a str, name: &str) -> Option<&'a str> {
    split_attributes(list)
        .into_iter()
        .find_map(|(k, v)| (k == name).then_some(v.trim_matches('"')))
}

/// `A=1,B="x,y"` → `[("A", "1"), ("B", "\"x,y\"")]`: commas inside quotes do not split.
fn split_attributes(list: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    let bytes = list.as_bytes();
    for i in 0..=bytes.len() {
        let end = i == bytes.len();
        if !end && bytes[i] == b'"' {
            quoted = !quoted;
        }
        if end || (bytes[i] == b',' && !quoted) {
            if let Some((k, v)) = list[start..i].split_once('=') {
                out.push((k.trim(), v.trim()));
            }
            start = i + 1;
        }
    }
    out
}

/// The variants of a master playlist, in order.
pub fn variants(master: &str) -> Vec<Variant> {
    let mut out = Vec::new();
    let mut pending: Option<&str> = None;
    for line in master.lines().map(str::trim) {
        if let Some(attributes) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            pending = Some(attributes);
        } else if !line.is_empty() && !line.starts_with('#') {
            if let Some(attributes) = pending.take() {
                out.push(Variant {
                    attributes: attributes.to_string(),
                    uri: line.to_string(),
                });
            }
        }
    }
    out
}

/// One media segment: its URI (relative to its playlist) and length in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub uri: String,
    pub seconds: f64,
}

/// A media playlist: its init section (`#EXT-X-MAP`), if any, and its segments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MediaPlaylist {
    pub map: Option<String>,
    pub segments: Vec<Segment>,
}

impl MediaPlaylist {
    pub fn parse(text: &str) -> MediaPlaylist {
        let mut playlist = MediaPlaylist::default();
        let mut seconds = None;
        for line in text.lines().map(str::trim) {
            if let Some(map) = line.strip_prefix("#EXT-X-MAP:") {
                playlist.map = attribute(map, "URI").map(str::to_string);
            } else if let Some(inf) = line.strip_prefix("#EXTINF:") {
                let value = inf.split(',').next().unwrap_or("");
                seconds = value.trim().parse::<f64>().ok();
            } else if !line.is_empty() && !line.starts_with('#') {
                playlist.segments.push(Segment {
                    uri: line.to_string(),
                    seconds: seconds.take().unwrap_or(0.0),
                });
            }
        }
        playlist
    }

    /// Seconds of all segments together.
    pub fn seconds(&self) -> f64 {
        self.segments.iter().map(|s| s.seconds).sum()
    }
}

/// The measured rates of one variant, in bits per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub peak: u64,
    pub average: u64,
}

impl Rates {
    /// The rates of `playlist` when its init section takes `init` bytes and its
    /// segments `sizes` (one per segment, in order; missing ones count as empty).
    pub fn of(playlist: &MediaPlaylist, init: u64, sizes: &[u64]) -> Rates {
        let (mut peak, mut bytes) = (0u64, init);
        for (i, segment) in playlist.segments.iter().enumerate() {
            let len = sizes.get(i).copied().unwrap_or(0);
            bytes = bytes.saturating_add(len);
            // A segment under a tenth of a second (the tail of a clip) would make a
            // meaningless peak of its few bytes: it counts as a tenth of a second.
            let bits = len.saturating_add(init).saturating_mul(8);
            let rate = bits as f64 / segment.seconds.max(0.1);
            peak = peak.max(rate.ceil() as u64);
        }
        let seconds = playlist.seconds().max(0.1);
        Rates {
            peak: peak.max(1),
            average: (bytes.saturating_mul(8) as f64 / seconds).ceil().max(1.0) as u64,
        }
    }
}

/// Rewrites the master playlist at `master` with each variant's measured
/// `BANDWIDTH` and `AVERAGE-BANDWIDTH`. `InvalidMedia` (a fault of ours) when a
/// playlist or segment it names cannot be read.
pub async fn state_bandwidths(master: &Path) -> Result<(), MediaError> {
    let text = tokio::fs::read_to_string(master).await?;
    let base = master.parent().unwrap_or(Path::new("."));
    let mut measured = Vec::new();
    for uri in stream_uris(&text)? {
        measured.push(measure(&base.join(uri)).await?);
    }
    tokio::fs::write(master, with_bandwidths(&text, &measured)).await?;
    Ok(())
}

/// The URI of each `#EXT-X-STREAM-INF` of a master playlist, in order: the line right
/// after it. `InvalidMedia` when that line is not a URI.
pub fn stream_uris(master: &str) -> Result<Vec<&str>, MediaError> {
    let mut lines = master.lines().peekable();
    let mut uris = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with("#EXT-X-STREAM-INF:") {
            let uri = lines
                .peek()
                .map(|l| l.trim())
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .ok_or_else(|| ours("a variant without a URI"))?;
            uris.push(uri);
        }
    }
    Ok(uris)
}

/// `master` with the `BANDWIDTH` and `AVERAGE-BANDWIDTH` of its `n`th
/// `#EXT-X-STREAM-INF` set from `measured[n]` (first, replacing any stated), every
/// other attribute and line kept. A stream past the end of `measured` keeps its line.
pub fn with_bandwidths(master: &str, measured: &[Rates]) -> String {
    let mut out = String::with_capacity(master.len() + 256);
    let mut measured = measured.iter();
    for line in master.lines() {
        let rewritten = line
            .strip_prefix("#EXT-X-STREAM-INF:")
            .and_then(|attributes| Some((attributes, measured.next()?)));
        let Some((attributes, rates)) = rewritten else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let mut list = vec![
            format!("BANDWIDTH={}", rates.peak),
            format!("AVERAGE-BANDWIDTH={}", rates.average),
        ];
        list.extend(
            split_attributes(attributes)
                .into_iter()
                .filter(|(k, _)| *k != "BANDWIDTH" && *k != "AVERAGE-BANDWIDTH")
                .map(|(k, v)| format!("{k}={v}")),
        );
        out.push_str("#EXT-X-STREAM-INF:");
        out.push_str(&list.join(","));
        out.push('\n');
    }
    out
}

/// The peak and average rates of the media playlist at `playlist`.
async fn measure(playlist: &Path) -> Result<Rates, MediaError> {
    let text = tokio::fs::read_to_string(playlist).await?;
    let parsed = MediaPlaylist::parse(&text);
    let base = playlist.parent().unwrap_or(Path::new("."));
    let init = match &parsed.map {
        Some(uri) => size(base.join(uri)).await?,
        None => 0,
    };
    let mut sizes = Vec::with_capacity(parsed.segments.len());
    for segment in &parsed.segments {
        sizes.push(size(base.join(&segment.uri)).await?);
    }
    Ok(Rates::of(&parsed, init, &sizes))
}

async fn size(path: PathBuf) -> Result<u64, MediaError> {
    match tokio::fs::metadata(&path).await {
        Ok(meta) => Ok(meta.len()),
        Err(_) => Err(ours("a playlist names a file that was not written")),
    }
}

fn ours(what: &str) -> MediaError {
    MediaError::InvalidMedia(format!("the HLS output is incomplete: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: &str = "#EXTM3U\n#EXT-X-VERSION:7\n\
        #EXT-X-STREAM-INF:BANDWIDTH=140800,RESOLUTION=640x360,CODECS=\"avc1.42c01e,mp4a.40.2\"\n\
        v0/index.m3u8\n\n";

    #[test]
    fn a_master_playlist_s_variants_are_read_with_quoted_commas_kept() {
        let found = variants(MASTER);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].uri, "v0/index.m3u8");
        assert_eq!(found[0].resolution(), Some((640, 360)));
        assert_eq!(
            attribute(&found[0].attributes, "CODECS"),
            Some("avc1.42c01e,mp4a.40.2")
        );
    }

    #[test]
    fn every_stream_gets_its_rates_first_and_a_stream_without_a_uri_is_ours_to_refuse() {
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"a,b\"\nv0.m3u8\n\
            #EXT-X-STREAM-INF:\nv1.m3u8\n";
        assert_eq!(stream_uris(master).unwrap(), ["v0.m3u8", "v1.m3u8"]);
        let rates = [
            Rates {
                peak: 9,
                average: 5,
            },
            Rates {
                peak: 7,
                average: 3,
            },
        ];
        assert_eq!(
            with_bandwidths(master, &rates),
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=9,AVERAGE-BANDWIDTH=5,CODECS=\"a,b\"\nv0.m3u8\n\
             #EXT-X-STREAM-INF:BANDWIDTH=7,AVERAGE-BANDWIDTH=3\nv1.m3u8\n"
        );
        assert!(stream_uris("#EXT-X-STREAM-INF:BANDWIDTH=1\n#EXT-X-ENDLIST\n").is_err());
        // Sizes past any real file's are held, not overflowed.
        let playlist = MediaPlaylist::parse("#EXTINF:1,\na\n#EXTINF:1,\nb\n");
        let huge = Rates::of(&playlist, u64::MAX, &[u64::MAX, u64::MAX]);
        assert_eq!(huge.peak, u64::MAX);
    }

    #[tokio::test]
    async fn bandwidth_is_the_peak_segment_rate_and_average_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("master.m3u8"), MASTER).unwrap();
        let v0 = dir.path().join("v0");
        std::fs::create_dir(&v0).unwrap();
        std::fs::write(
            v0.join("index.m3u8"),
            "#EXTM3U\n#EXT-X-MAP:URI=\"init_0.mp4\"\n#EXTINF:2.000000,\nseg0.m4s\n\
             #EXTINF:1.000000,\nseg1.m4s\n#EXT-X-ENDLIST\n",
        )
        .unwrap();
        std::fs::write(v0.join("init_0.mp4"), vec![0u8; 100]).unwrap();
        std::fs::write(v0.join("seg0.m4s"), vec![0u8; 1000]).unwrap();
        std::fs::write(v0.join("seg1.m4s"), vec![0u8; 1000]).unwrap();
        state_bandwidths(&dir.path().join("master.m3u8"))
            .await
            .unwrap();
        let text = std::fs::read_to_string(dir.path().join("master.m3u8")).unwrap();
        // seg1: (1000 + 100) bytes in 1 s; the whole: 2100 bytes in 3 s.
        assert!(
            text.contains("BANDWIDTH=8800,AVERAGE-BANDWIDTH=5600,RESOLUTION=640x360,CODECS=\"avc1.42c01e,mp4a.40.2\"\nv0/index.m3u8"),
            "{text}"
        );
        assert!(text.starts_with("#EXTM3U\n#EXT-X-VERSION:7\n"), "{text}");
    }
}
