//! A DASH manifest over an HLS ladder as `video-to-hls` writes it (`dash: true`): a
//! static MPD that names the very init sections and fMP4 segments the HLS media
//! playlists name, so the ladder is stored once and reached both ways.
//!
//! It is written from what was encoded, once the master playlist is final: each
//! variant (`BANDWIDTH`, `RESOLUTION`, `CODECS` as the master states them, AV1's
//! included) becomes a `Representation` with a `SegmentList` of its init section and
//! segments and a `SegmentTimeline` of their lengths (the `EXTINF`s, in ms, placed by
//! their running sum so rounding never drifts), grouped in one video `AdaptationSet`
//! per codec (players switch rungs within a codec, not across). A subtitle rendition
//! (`EXT-X-MEDIA:TYPE=SUBTITLES`) becomes a text `AdaptationSet` over its segmented
//! WebVTT files, in its `LANGUAGE`.
//!
//! Each variant's segments carry its audio beside the video (one fMP4 with both
//! tracks), so a `Representation` is multiplexed: its `codecs` names both and no
//! separate audio `AdaptationSet` exists (one would need audio-only segments, a
//! second copy). dash.js plays such a Representation through one Media Source buffer
//! of both codecs; `ContentComponent` elements are left out, as dash.js refuses a set
//! that declares itself multiplexed.
//!
//! Names are relative to the ladder's folder (where the master is), one per line
//! (`Initialization@sourceURL`, `SegmentURL@media`), so a download signs each the way
//! a playlist's URIs are signed (`api::files::rewrite`).

use std::path::Path;

use crate::media::error::MediaError;
use crate::media::video::hls::{attribute, variants, MediaPlaylist, Segment};

/// The segments of one stream: the folder its playlist names them in (`v0/`, with
/// the slash), its init section, and the segments.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    pub folder: String,
    pub init: Option<String>,
    pub segments: Vec<Segment>,
}

/// One variant of the ladder as a DASH Representation.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendition {
    pub bandwidth: u64,
    pub size: Option<(u32, u32)>,
    pub codecs: String,
    pub track: Track,
}

/// What the manifest describes: the variants in the master's order, and the
/// subtitles (their language and segments) if the ladder has them.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    pub renditions: Vec<Rendition>,
    pub subtitles: Option<(String, Track)>,
}

/// Writes the manifest of the ladder whose master playlist is `master` to `to`.
/// `InvalidMedia` (a fault of ours) when a playlist the master names is missing.
pub async fn write_manifest(master: &Path, to: &Path) -> Result<(), MediaError> {
    let text = tokio::fs::read_to_string(master).await?;
    let base = master.parent().unwrap_or(Path::new("."));
    let mut renditions = Vec::new();
    for variant in variants(&text) {
        let attributes = &variant.attributes;
        renditions.push(Rendition {
            bandwidth: attribute(attributes, "BANDWIDTH")
                .and_then(|b| b.parse().ok())
                .unwrap_or(1),
            size: variant.resolution(),
            codecs: attribute(attributes, "CODECS").unwrap_or("").to_string(),
            track: track(base, &variant.uri).await?,
        });
    }
    if renditions.is_empty() {
        return Err(ours("the master names no variant"));
    }
    let subtitles = match subtitle_rendition(&text) {
        Some((language, uri)) => Some((language, track(base, &uri).await?)),
        None => None,
    };
    let ladder = Ladder {
        renditions,
        subtitles,
    };
    tokio::fs::write(to, manifest(&ladder)).await?;
    Ok(())
}

/// The media playlist at `uri` (relative to `base`) read as a track.
async fn track(base: &Path, uri: &str) -> Result<Track, MediaError> {
    let text = tokio::fs::read_to_string(base.join(uri))
        .await
        .map_err(|_| ours("a playlist the master names was not written"))?;
    let playlist = MediaPlaylist::parse(&text);
    let folder = match uri.rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/"),
        None => String::new(),
    };
    Ok(Track {
        folder,
        init: playlist.map,
        segments: playlist.segments,
    })
}

/// The `LANGUAGE` and `URI` of the master's subtitle rendition, if it has one.
fn subtitle_rendition(master: &str) -> Option<(String, String)> {
    master
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#EXT-X-MEDIA:"))
        .find(|list| attribute(list, "TYPE") == Some("SUBTITLES"))
        .and_then(|list| {
            let language = attribute(list, "LANGUAGE").unwrap_or("und").to_string();
            Some((language, attribute(list, "URI")?.to_string()))
        })
}

/// The MPD of `ladder` (module docs).
pub fn manifest(ladder: &Ladder) -> String {
    let seconds = ladder
        .renditions
        .iter()
        .map(|r| r.track.segments.iter().map(|s| s.seconds).sum::<f64>())
        .fold(0.0_f64, f64::max);
    let longest = ladder
        .renditions
        .iter()
        .flat_map(|r| r.track.segments.iter().map(|s| s.seconds))
        .fold(1.0_f64, f64::max);
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\" \
         profiles=\"urn:mpeg:dash:profile:isoff-main:2011\" \
         mediaPresentationDuration=\"PT{seconds:.3}S\" minBufferTime=\"PT{:.0}S\">\n\
         <Period id=\"0\" start=\"PT0S\">\n",
        longest.ceil()
    );
    // One set per codec, in the master's order (H.264's before AV1's).
    let mut families: Vec<&str> = Vec::new();
    for rendition in &ladder.renditions {
        let family = family(&rendition.codecs);
        if !families.contains(&family) {
            families.push(family);
        }
    }
    for (set, family) in families.iter().enumerate() {
        out.push_str(&format!(
            "<AdaptationSet id=\"{set}\" contentType=\"video\" mimeType=\"video/mp4\" \
             segmentAlignment=\"true\" startWithSAP=\"1\">\n"
        ));
        for (id, rendition) in ladder.renditions.iter().enumerate() {
            if self::family(&rendition.codecs) != *family {
                continue;
            }
            let size = rendition.size.map_or(String::new(), |(w, h)| {
                format!(" width=\"{w}\" height=\"{h}\" sar=\"1:1\"")
            });
            out.push_str(&format!(
                "<Representation id=\"v{id}\" bandwidth=\"{}\"{size} codecs=\"{}\">\n",
                rendition.bandwidth,
                xml(&rendition.codecs)
            ));
            segment_list(&rendition.track, &mut out);
            out.push_str("</Representation>\n");
        }
        out.push_str("</AdaptationSet>\n");
    }
    if let Some((language, track)) = &ladder.subtitles {
        out.push_str(&format!(
            "<AdaptationSet id=\"{}\" contentType=\"text\" mimeType=\"text/vtt\" lang=\"{}\">\n\
             <Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"subtitle\"/>\n\
             <Representation id=\"subtitles\" bandwidth=\"256\">\n",
            families.len(),
            xml(language)
        ));
        segment_list(track, &mut out);
        out.push_str("</Representation>\n</AdaptationSet>\n");
    }
    out.push_str("</Period>\n</MPD>\n");
    out
}

/// The codec a variant's video is in: `avc1`, `hvc1`, `av01` (the first codec named).
fn family(codecs: &str) -> &str {
    let first = codecs.split(',').next().unwrap_or("");
    first.split('.').next().unwrap_or("").trim()
}

/// `track`'s `SegmentList`: its init section, the timeline of its segments in ms
/// (runs of one length as one `S` with `r`) and each segment's name.
fn segment_list(track: &Track, out: &mut String) {
    out.push_str("<SegmentList timescale=\"1000\">\n");
    if let Some(init) = &track.init {
        out.push_str(&format!(
            "<Initialization sourceURL=\"{}\"/>\n",
            xml(&format!("{}{init}", track.folder))
        ));
    }
    out.push_str("<SegmentTimeline>");
    for (i, (length, repeats)) in runs(&track.segments).into_iter().enumerate() {
        let start = if i == 0 { " t=\"0\"" } else { "" };
        let repeat = match repeats {
            0 => String::new(),
            r => format!(" r=\"{r}\""),
        };
        out.push_str(&format!("<S{start} d=\"{length}\"{repeat}/>"));
    }
    out.push_str("</SegmentTimeline>\n");
    for segment in &track.segments {
        out.push_str(&format!(
            "<SegmentURL media=\"{}\"/>\n",
            xml(&format!("{}{}", track.folder, segment.uri))
        ));
    }
    out.push_str("</SegmentList>\n");
}

/// The segments' lengths in ms, each the difference of the running sums rounded, as
/// runs: (length, how many more of it follow).
fn runs(segments: &[Segment]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let (mut at, mut start) = (0.0_f64, 0u64);
    for segment in segments {
        at += segment.seconds;
        let end = (at * 1000.0).round() as u64;
        let length = end.saturating_sub(start);
        start = end;
        match runs.last_mut() {
            Some((last, repeats)) if *last == length => *repeats += 1,
            _ => runs.push((length, 0)),
        }
    }
    runs
}

/// `text` fit for an XML attribute.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn ours(what: &str) -> MediaError {
    MediaError::InvalidMedia(format!("the HLS output is incomplete: {what}"))
}

#[cfg(test)]
mod tests;
