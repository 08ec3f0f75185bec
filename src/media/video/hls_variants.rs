//! The variants ffmpeg's HLS muxer (5.1) leaves out of the master playlist. It names a
//! variant only when it knows a bit rate for it (the encoder's declared rate or
//! `-maxrate`, plus the audio's), and skips one it knows none for with the warning
//! "Bandwidth info not available": a silent AV1 rung, as SVT-AV1 at a CRF declares no
//! rate. Its media playlist and segments are written all the same, so the master is
//! given its `#EXT-X-STREAM-INF` back, in the variants' order, with its `RESOLUTION`;
//! its `BANDWIDTH` and `CODECS` are then stated from its files like every variant's
//! (`hls::state_bandwidths`, `hls_codecs`).

use std::path::Path;

use crate::media::error::MediaError;
use crate::media::video::hls::stream_uris;

/// Gives the master playlist at `master` every variant `v<i>/index.m3u8` (of the
/// `sizes`, in order) that was written beside it and that it leaves out.
pub async fn restore_variants(master: &Path, sizes: &[(u32, u32)]) -> Result<(), MediaError> {
    let text = tokio::fs::read_to_string(master).await?;
    let base = master.parent().unwrap_or(Path::new("."));
    let mut written = Vec::with_capacity(sizes.len());
    for i in 0..sizes.len() {
        let playlist = base.join(variant_uri(i));
        written.push(tokio::fs::try_exists(&playlist).await.unwrap_or(false));
    }
    let restored = with_variants(&text, sizes, &written)?;
    if restored != text {
        tokio::fs::write(master, restored).await?;
    }
    Ok(())
}

/// The name of variant `i`'s media playlist, as the ladder's muxer writes it.
fn variant_uri(i: usize) -> String {
    format!("v{i}/index.m3u8")
}

/// `master` with a line pair for every variant `i` whose playlist was `written` and
/// that it does not name, placed after the variants before it. `InvalidMedia` when a
/// variant has no URI.
pub fn with_variants(
    master: &str,
    sizes: &[(u32, u32)],
    written: &[bool],
) -> Result<String, MediaError> {
    let named = stream_uris(master)?;
    let missing: Vec<usize> = (0..sizes.len())
        .filter(|&i| written.get(i).copied().unwrap_or(false))
        .filter(|&i| !named.contains(&variant_uri(i).as_str()))
        .collect();
    if missing.is_empty() {
        return Ok(master.to_string());
    }
    let entry = |i: usize| {
        let (w, h) = sizes[i];
        format!(
            "#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION={w}x{h}\n{}\n",
            variant_uri(i)
        )
    };
    let index_of = |uri: &str| (0..sizes.len()).find(|&i| variant_uri(i) == uri);
    let mut out = String::with_capacity(master.len() + 128 * missing.len());
    let mut pending = missing.into_iter().peekable();
    let mut lines = master.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("#EXT-X-STREAM-INF:") {
            // The missing variants that come before this one go first.
            let uri = lines.peek().map(|l| l.trim()).unwrap_or("");
            let this = index_of(uri).unwrap_or(usize::MAX);
            while let Some(i) = pending.next_if(|&i| i < this) {
                out.push_str(&entry(i));
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    for i in pending {
        out.push_str(&entry(i));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_ffmpeg_left_out_is_named_again_in_its_place_and_others_are_kept() {
        let master = "#EXTM3U\n#EXT-X-VERSION:7\n\
            #EXT-X-STREAM-INF:BANDWIDTH=660000,RESOLUTION=320x240,CODECS=\"avc1.64000d\"\n\
            v0/index.m3u8\n\n";
        let sizes = [(320, 240), (320, 240)];
        let out = with_variants(master, &sizes, &[true, true]).unwrap();
        assert_eq!(
            out,
            "#EXTM3U\n#EXT-X-VERSION:7\n\
             #EXT-X-STREAM-INF:BANDWIDTH=660000,RESOLUTION=320x240,CODECS=\"avc1.64000d\"\n\
             v0/index.m3u8\n\n\
             #EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=320x240\nv1/index.m3u8\n"
        );
        // Left out first: it goes before the variants after it.
        let later = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=9\nv1/index.m3u8\n";
        let out = with_variants(later, &[(640, 360), (320, 180)], &[true, true]).unwrap();
        assert!(
            out.ends_with(
                "RESOLUTION=640x360\nv0/index.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=9\nv1/index.m3u8\n"
            ),
            "{out}"
        );
        // Nothing missing, or not written: unchanged.
        assert_eq!(with_variants(master, &sizes[..1], &[true]).unwrap(), master);
        assert_eq!(
            with_variants(master, &sizes, &[true, false]).unwrap(),
            master
        );
    }
}
