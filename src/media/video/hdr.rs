//! HDR sources: video in HLG or PQ (BT.2020, 10-bit, as phones record it), and the one
//! tone-mapping stage every 8-bit output starts with.
//!
//! Why a stage of its own: an 8-bit output of an HDR source read as if it were BT.709
//! (what ffmpeg does without being told) comes out dull and off in hue, mean ΔE2000 8
//! to 16 from the same frame tone-mapped properly on the clips of tests/it/hdr.rs, and
//! a WebM or HLS output would still be tagged HLG or PQ, which a browser that honours
//! the tags shows wrongly a second time. The operator is ffmpeg's reference chain:
//! `zscale` to linear light (100 nits nominal peak), `tonemap=hable` without
//! desaturation in BT.709 primaries, back to BT.709's transfer and matrix, limited
//! range; every output of such a source is then tagged BT.709 ([`sdr_tags`]).
//!
//! The stage is put in by [`shown_pictures`], the head of every video output's filter
//! chain, so a chunked encode, a warm process and a whole-file run read the same graph.

use crate::media::engine::Media;
use crate::media::file::MediaFile;
use crate::media::video::hdr_source::Hdr;
use crate::media::video::info::VideoInfo;

impl Media {
    /// `hlg` or `pq` for a video source in HDR, as an asset's probed facts report it;
    /// `None` for anything else, and for a file that cannot be read (the edit itself
    /// then says why).
    pub async fn hdr_of(&self, file: &MediaFile) -> Option<&'static str> {
        if !file.format.is_video() {
            return None;
        }
        let info = crate::media::video::inspect::read_info(self, file)
            .await
            .ok()?;
        info.hdr.map(Hdr::name)
    }
}

/// The head of every video output's filter chain: an HDR source's pictures tone-mapped
/// to BT.709 SDR, then pixels made square
/// ([`SQUARE_PIXELS`](crate::media::ffmpeg::transcode::SQUARE_PIXELS)).
pub(crate) fn shown_pictures(info: &VideoInfo) -> String {
    use crate::media::ffmpeg::transcode::SQUARE_PIXELS;
    match info.hdr {
        Some(hdr) => format!("{},{SQUARE_PIXELS}", hdr.tone_map()),
        None => SQUARE_PIXELS.to_string(),
    }
}

/// The tone mapping followed by a comma for an HDR source, to put before a chain that
/// does not start with [`shown_pictures`] (one that squares pixels in its own scaler);
/// empty for SDR.
pub(crate) fn tone_map_head(info: &VideoInfo) -> String {
    info.hdr
        .map(|hdr| format!("{},", hdr.tone_map()))
        .unwrap_or_default()
}

/// [`shown_pictures`] for an output that keeps a source's HDR (`keepHdr`): pixels made
/// square, nothing tone-mapped.
pub(crate) fn kept_pictures() -> String {
    crate::media::ffmpeg::transcode::SQUARE_PIXELS.to_string()
}

/// The colour tags of an 8-bit video output: BT.709 for a tone-mapped HDR source, so
/// that no player reads it as HLG or PQ again (ffmpeg would copy the source's tags);
/// none otherwise (an SDR source's own tags pass through as before).
pub(crate) fn sdr_tags(info: &VideoInfo) -> Vec<String> {
    if info.hdr.is_none() {
        return Vec::new();
    }
    crate::media::video::h264::BT709_TAGS
        .map(String::from)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::video::probe::{parse, ProbeStream};

    fn stream(trc: &str, primaries: &str, space: &str) -> ProbeStream {
        let json = format!(
            r#"{{"streams":[{{"index":0,"codec_type":"video","color_transfer":"{trc}",
                "color_primaries":"{primaries}","color_space":"{space}"}}],
                "format":{{"format_name":"mov"}}}}"#
        );
        parse(json.as_bytes()).unwrap().streams.remove(0)
    }

    #[test]
    fn hlg_and_pq_are_told_by_the_transfer_and_sdr_is_left_alone() {
        let hlg = Hdr::from_probe(&stream("arib-std-b67", "bt2020", "bt2020nc")).unwrap();
        assert_eq!(hlg.name(), "hlg");
        let pq = Hdr::from_probe(&stream("smpte2084", "bt2020", "bt2020nc")).unwrap();
        assert_eq!(pq.name(), "pq");
        assert_eq!(Hdr::from_probe(&stream("bt709", "bt709", "bt709")), None);
        assert_eq!(
            Hdr::from_probe(&stream("bt2020-10", "bt2020", "bt2020nc")),
            None
        );
    }

    #[test]
    fn the_tone_map_reads_the_source_as_stated_and_ends_in_bt709() {
        let pq = Hdr::from_probe(&stream("smpte2084", "bt2020", "bt2020nc")).unwrap();
        let chain = pq.tone_map();
        assert!(
            chain.starts_with("zscale=tin=smpte2084:pin=bt2020:min=bt2020nc:rin=limited"),
            "{chain}"
        );
        assert!(chain.contains("tonemap=tonemap=hable:desat=0"), "{chain}");
        assert!(chain.ends_with("zscale=t=bt709:m=bt709:r=tv,format=yuv420p"));
        let tags = pq.source_tags().join(" ");
        assert_eq!(
            tags,
            "-color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -color_range tv"
        );
    }
}
