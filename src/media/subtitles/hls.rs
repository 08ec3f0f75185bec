//! The subtitles of an HLS ladder as a WebVTT rendition beside it (`video-to-hls`):
//! `subs/index.m3u8` and one `subs/seg<k>.vtt` per segment, cut where the first
//! variant's segments are cut, and the master playlist naming it
//! (`#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",…` and `SUBTITLES="subs"` on every
//! variant), so hls.js and Safari offer it and show it by default. It is stored
//! beside the ladder like its other files, reached through the master.

use std::path::Path;

use super::cues::Subtitles;
use super::vtt::segmented_vtt;
use crate::media::error::MediaError;
use crate::media::video::hls::{stream_uris, MediaPlaylist};

/// The rendition's group, and its folder beside the variants' (`v0/`, …).
pub const GROUP: &str = "subs";

/// Writes the rendition of `subtitles` (in `language`, a BCP 47 tag) beside the
/// ladder whose master playlist is `master`, and names it there.
pub async fn add_rendition(
    master: &Path,
    subtitles: &Subtitles,
    language: &str,
) -> Result<(), MediaError> {
    let text = tokio::fs::read_to_string(master).await?;
    let base = master.parent().unwrap_or(Path::new("."));
    let first = stream_uris(&text)?
        .first()
        .map(|uri| base.join(uri))
        .ok_or_else(|| MediaError::InvalidMedia("the HLS output has no variant".into()))?;
    let variant = MediaPlaylist::parse(&tokio::fs::read_to_string(first).await?);
    let lengths: Vec<f64> = variant.segments.iter().map(|s| s.seconds).collect();
    let dir = base.join(GROUP);
    tokio::fs::create_dir_all(&dir).await?;
    for (k, vtt) in segmented_vtt(subtitles, &lengths).into_iter().enumerate() {
        tokio::fs::write(dir.join(format!("seg{k}.vtt")), vtt).await?;
    }
    tokio::fs::write(dir.join("index.m3u8"), media_playlist(&lengths)).await?;
    tokio::fs::write(master, with_rendition(&text, language)).await?;
    Ok(())
}

/// The rendition's media playlist: a VOD list of `lengths` seconds each.
fn media_playlist(lengths: &[f64]) -> String {
    let target = lengths.iter().fold(1.0_f64, |a, &b| a.max(b)).ceil();
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
    );
    for (k, seconds) in lengths.iter().enumerate() {
        out.push_str(&format!("#EXTINF:{seconds:.6},\nseg{k}.vtt\n"));
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

/// `master` with the rendition's `EXT-X-MEDIA` before its first variant and every
/// variant in its group.
pub fn with_rendition(master: &str, language: &str) -> String {
    let media = format!(
        "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"{GROUP}\",NAME=\"Subtitles\",LANGUAGE=\"{language}\",\
         DEFAULT=YES,AUTOSELECT=YES,FORCED=NO,URI=\"{GROUP}/index.m3u8\""
    );
    let mut out = String::with_capacity(master.len() + 256);
    let mut named = false;
    for line in master.lines() {
        if let Some(attributes) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            if !named {
                out.push_str(&media);
                out.push('\n');
                named = true;
            }
            out.push_str(&format!(
                "#EXT-X-STREAM-INF:{attributes},SUBTITLES=\"{GROUP}\"\n"
            ));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_master_names_the_rendition_once_and_every_variant_joins_its_group() {
        let master = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=640x360\nv0/index.m3u8\n\
                      #EXT-X-STREAM-INF:BANDWIDTH=2\nv1/index.m3u8\n";
        let out = with_rendition(master, "en");
        assert_eq!(
            out.matches("#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\"")
                .count(),
            1,
            "{out}"
        );
        assert!(out.contains("LANGUAGE=\"en\""), "{out}");
        assert!(out.contains("URI=\"subs/index.m3u8\""), "{out}");
        assert_eq!(out.matches(",SUBTITLES=\"subs\"\n").count(), 2, "{out}");
        assert!(out.find("#EXT-X-MEDIA").unwrap() < out.find("#EXT-X-STREAM-INF").unwrap());
        let list = media_playlist(&[6.0, 2.04]);
        assert!(list.contains("#EXT-X-TARGETDURATION:6\n"), "{list}");
        assert!(
            list.ends_with("#EXTINF:2.040000,\nseg1.vtt\n#EXT-X-ENDLIST\n"),
            "{list}"
        );
    }
}
