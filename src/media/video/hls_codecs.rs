//! The `CODECS` attribute of AV1 variants. ffmpeg's HLS muxer (5.1) writes `CODECS`
//! for H.264, HEVC and AAC but leaves the attribute out of a variant whose video it
//! does not know, AV1 among them, and a player then cannot tell whether it can play
//! the variant before fetching it (hls.js and Safari skip or guess). So once the
//! segments exist, each such variant's init section is read for its `av1C` box and
//! the attribute written as RFC 6381 and the AV1 ISOBMFF binding say:
//! `av01.<profile>.<level><tier>.<bit depth>`, with `mp4a.40.2` beside it when the
//! variant carries the AAC audio.

use std::path::Path;

use crate::media::error::MediaError;
use crate::media::video::hls::{attribute, MediaPlaylist};

/// The RFC 6381 codec string of the AV1 stream whose `av1C` box is in `init` (an fMP4
/// init section), if it has one.
pub fn av1_codec_string(init: &[u8]) -> Option<String> {
    let at = init.windows(4).position(|w| w == b"av1C")? + 4;
    let config = init.get(at..at + 3)?;
    // marker (1) and version (7); seq_profile (3), seq_level_idx_0 (5); seq_tier_0,
    // high_bitdepth, twelve_bit and the chroma fields.
    if config[0] != 0x81 {
        return None;
    }
    let profile = config[1] >> 5;
    let level = config[1] & 0x1f;
    let tier = if config[2] & 0x80 != 0 { 'H' } else { 'M' };
    let depth = match (config[2] & 0x40 != 0, config[2] & 0x20 != 0) {
        (true, true) => 12,
        (true, false) => 10,
        _ => 8,
    };
    Some(format!("av01.{profile}.{level:02}{tier}.{depth:02}"))
}

/// Gives every variant of the master playlist at `master` that has no `CODECS` and
/// whose init section is AV1 its `CODECS` (module docs); `has_audio`: the variants
/// carry AAC audio. Other variants and lines are kept as they are.
pub async fn state_av1_codecs(master: &Path, has_audio: bool) -> Result<(), MediaError> {
    let text = tokio::fs::read_to_string(master).await?;
    let base = master.parent().unwrap_or(Path::new("."));
    let mut out = String::with_capacity(text.len() + 128);
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let uri = lines.peek().map(|l| l.trim()).unwrap_or_default();
        let missing = line
            .strip_prefix("#EXT-X-STREAM-INF:")
            .is_some_and(|list| attribute(list, "CODECS").is_none())
            && !uri.is_empty()
            && !uri.starts_with('#');
        let codecs = match missing {
            true => av1_of_variant(&base.join(uri)).await?,
            false => None,
        };
        out.push_str(line);
        if let Some(video) = codecs {
            let audio = if has_audio { ",mp4a.40.2" } else { "" };
            out.push_str(&format!(",CODECS=\"{video}{audio}\""));
        }
        out.push('\n');
    }
    tokio::fs::write(master, out).await?;
    Ok(())
}

/// The AV1 codec string of the media playlist at `playlist`, read from its init
/// section; `None` when it has none or it is not AV1.
async fn av1_of_variant(playlist: &Path) -> Result<Option<String>, MediaError> {
    let text = tokio::fs::read_to_string(playlist).await?;
    let Some(map) = MediaPlaylist::parse(&text).map else {
        return Ok(None);
    };
    let init = playlist.parent().unwrap_or(Path::new(".")).join(map);
    Ok(av1_codec_string(&tokio::fs::read(init).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_av1c_box_gives_profile_level_tier_and_depth() {
        // Main profile, level 4.0 (index 8), main tier, 8-bit 4:2:0.
        let init = [b"....av1C".as_slice(), &[0x81, 0x08, 0x0c, 0x00]].concat();
        assert_eq!(av1_codec_string(&init).as_deref(), Some("av01.0.08M.08"));
        // Level 5.1 (index 13), high tier, 10-bit.
        let init = [b"av1C".as_slice(), &[0x81, 0x0d, 0xcc, 0x00]].concat();
        assert_eq!(av1_codec_string(&init).as_deref(), Some("av01.0.13H.10"));
        assert_eq!(av1_codec_string(b"avcC\x01\x64\x00\x1e"), None);
        assert_eq!(av1_codec_string(b"av1C\x81"), None);
    }

    #[tokio::test]
    async fn only_a_variant_without_codecs_whose_init_is_av1_gains_them() {
        let dir = tempfile::tempdir().unwrap();
        let master = dir.path().join("master.m3u8");
        std::fs::write(
            &master,
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1.64001e,mp4a.40.2\"\nv0/index.m3u8\n\
             #EXT-X-STREAM-INF:BANDWIDTH=2,RESOLUTION=320x180\nv1/index.m3u8\n",
        )
        .unwrap();
        for (v, init) in [
            ("v0", b"avcC....".to_vec()),
            ("v1", b"av1C\x81\x00\x0c\x00".to_vec()),
        ] {
            std::fs::create_dir(dir.path().join(v)).unwrap();
            std::fs::write(
                dir.path().join(v).join("index.m3u8"),
                "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2,\nseg0.mp4\n",
            )
            .unwrap();
            std::fs::write(dir.path().join(v).join("init.mp4"), init).unwrap();
        }
        state_av1_codecs(&master, true).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&master).unwrap(),
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1.64001e,mp4a.40.2\"\nv0/index.m3u8\n\
             #EXT-X-STREAM-INF:BANDWIDTH=2,RESOLUTION=320x180,CODECS=\"av01.0.00M.08,mp4a.40.2\"\nv1/index.m3u8\n"
        );
    }
}
