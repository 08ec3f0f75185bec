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

use crate::media::video::info::VideoInfo;
use crate::media::video::probe::ProbeStream;
use crate::media::{Media, MediaFile};

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

/// The HDR transfer of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transfer {
    /// Hybrid log-gamma (ARIB STD-B67): iPhones' and most Android phones' HDR.
    Hlg,
    /// Perceptual quantizer (SMPTE ST 2084): HDR10 and Dolby Vision's base layer.
    Pq,
}

/// What an HDR source's pictures are, as its stream states it: the transfer, and the
/// primaries, matrix and range the tone mapping reads them with (BT.2020, its
/// non-constant-luminance matrix and limited range where the stream does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hdr {
    pub transfer: Transfer,
    primaries: &'static str,
    matrix: &'static str,
    full_range: bool,
}

impl Hdr {
    /// The HDR facts of a probed video stream; `None` for SDR (any transfer but HLG's
    /// and PQ's: the transfer alone decides, since a 10-bit BT.2020 SDR video is read
    /// correctly by the plain conversion).
    pub fn from_probe(stream: &ProbeStream) -> Option<Hdr> {
        let transfer = match stream.color_transfer.as_deref()? {
            "arib-std-b67" => Transfer::Hlg,
            "smpte2084" => Transfer::Pq,
            _ => return None,
        };
        let primaries = match stream.color_primaries.as_deref() {
            Some("bt709") => "bt709",
            Some("smpte432") => "smpte432",
            _ => "bt2020",
        };
        let matrix = match stream.color_space.as_deref() {
            Some("bt709") => "bt709",
            _ => "bt2020nc",
        };
        Some(Hdr {
            transfer,
            primaries,
            matrix,
            full_range: stream.color_range.as_deref() == Some("pc"),
        })
    }

    /// The name the API reports: `hlg` or `pq`.
    pub fn name(self) -> &'static str {
        match self.transfer {
            Transfer::Hlg => "hlg",
            Transfer::Pq => "pq",
        }
    }

    /// ffmpeg's (and zscale's) name of the transfer.
    fn trc(self) -> &'static str {
        match self.transfer {
            Transfer::Hlg => "arib-std-b67",
            Transfer::Pq => "smpte2084",
        }
    }

    /// The filters that make BT.709 SDR pictures (yuv420p, limited range) of this
    /// source's. The source's colour is stated to the first `zscale` rather than read
    /// from each frame, so a frame that lost its tags on the way is read the same.
    pub fn tone_map(self) -> String {
        let range = if self.full_range { "full" } else { "limited" };
        format!(
            "zscale=tin={trc}:pin={primaries}:min={matrix}:rin={range}:t=linear:npl=100,\
             format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,\
             zscale=t=bt709:m=bt709:r=tv,format=yuv420p",
            trc = self.trc(),
            primaries = self.primaries,
            matrix = self.matrix,
        )
    }

    /// Output options that tag a 10-bit output as the source is (`keepHdr`).
    pub fn source_tags(self) -> Vec<String> {
        let range = if self.full_range { "pc" } else { "tv" };
        [
            "-color_primaries",
            self.primaries,
            "-color_trc",
            self.trc(),
            "-colorspace",
            self.matrix,
            "-color_range",
            range,
        ]
        .map(String::from)
        .into()
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
    use crate::media::video::probe::parse;

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
