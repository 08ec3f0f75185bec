//! What an HDR source is, as its video stream states it: the ground type the probe
//! fills in (`VideoInfo::hdr`) and the tone-mapping stage (`video::hdr`) reads.

use crate::media::video::probe::ProbeStream;

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
