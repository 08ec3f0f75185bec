//! `ffprobe` runs and the typed view of its JSON output.
//!
//! Only the fields the service uses are kept; ffprobe prints many numbers as strings
//! (`"nb_frames": "25"`) and `"N/A"` for unknowns, so those become `Option`s.

use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use crate::media::error::MediaError;

/// What ffprobe says about a file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Probe {
    #[serde(default)]
    pub streams: Vec<ProbeStream>,
    pub format: ProbeFormat,
}

/// One stream of the file. Fields ffprobe leaves out (or prints as `N/A`) are `None`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProbeStream {
    pub index: u32,
    pub codec_type: CodecType,
    pub codec_name: Option<String>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub pix_fmt: Option<String>,
    /// The YCbCr matrix (`bt709`, `smpte170m`, …), when the file states it.
    #[serde(default)]
    pub color_space: Option<String>,
    /// The transfer (`bt709`, `arib-std-b67` for HLG, `smpte2084` for PQ, …), the
    /// primaries (`bt2020`, …) and the range (`tv`, `pc`), when the file states them.
    #[serde(default)]
    pub color_transfer: Option<String>,
    #[serde(default)]
    pub color_primaries: Option<String>,
    #[serde(default)]
    pub color_range: Option<String>,
    /// The stream's base frame rate as ffprobe prints it (`"30000/1001"`; `"0/0"` for
    /// audio).
    pub r_frame_rate: Option<String>,
    pub avg_frame_rate: Option<String>,
    /// Frame (or packet) count from the container index; Matroska has none.
    #[serde(default, deserialize_with = "number_or_string")]
    pub nb_frames: Option<u64>,
    /// Seconds; Matroska only has a container duration.
    #[serde(default, deserialize_with = "number_or_string")]
    pub duration: Option<f64>,
    /// Packets counted by demuxing (`-count_packets`); for video, one per frame.
    #[serde(default, deserialize_with = "number_or_string")]
    pub nb_read_packets: Option<u64>,
    /// `"1:1"` for square pixels; `"0:1"` or absent when the file does not say.
    #[serde(default)]
    pub sample_aspect_ratio: Option<String>,
    /// Display matrices and the like; a rotation shows here.
    #[serde(default)]
    pub side_data_list: Vec<SideData>,
    #[serde(default)]
    pub tags: StreamTags,
}

/// One item of a stream's side data.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SideData {
    /// Degrees of a display matrix's rotation.
    #[serde(default, deserialize_with = "number_or_string")]
    pub rotation: Option<f64>,
}

/// The stream tags the service reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct StreamTags {
    /// The legacy rotation tag of MOV/MP4 (degrees).
    #[serde(default, deserialize_with = "number_or_string")]
    pub rotate: Option<f64>,
}

/// The kind of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodecType {
    Video,
    Audio,
    Subtitle,
    Data,
    Attachment,
    #[serde(other)]
    Other,
}

/// The container.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProbeFormat {
    /// ffmpeg's demuxer name, e.g. `"mov,mp4,m4a,3gp,3g2,mj2"` or `"matroska,webm"`.
    pub format_name: String,
    /// Seconds.
    #[serde(default, deserialize_with = "number_or_string")]
    pub duration: Option<f64>,
}

impl Probe {
    /// The first video stream, if any.
    pub fn video(&self) -> Option<&ProbeStream> {
        self.stream(CodecType::Video)
    }

    /// The first audio stream, if any.
    pub fn audio(&self) -> Option<&ProbeStream> {
        self.stream(CodecType::Audio)
    }

    fn stream(&self, kind: CodecType) -> Option<&ProbeStream> {
        self.streams.iter().find(|s| s.codec_type == kind)
    }
}

impl ProbeStream {
    /// `r_frame_rate` as a number; `None` when absent or `0/0`.
    pub fn frame_rate(&self) -> Option<f64> {
        self.r_frame_rate.as_deref().and_then(parse_rate)
    }

    /// The rotations stated, in degrees: a `rotate` tag, display matrices.
    fn rotations(&self) -> impl Iterator<Item = f64> + '_ {
        let matrices = self.side_data_list.iter().filter_map(|s| s.rotation);
        self.tags.rotate.into_iter().chain(matrices)
    }

    /// Whether frames are shown turned (a display matrix or a `rotate` tag).
    pub fn is_rotated(&self) -> bool {
        self.rotations().any(|d| d.rem_euclid(360.0) != 0.0)
    }

    /// A pixel's width over its height, when the file states one (`0:1`, `N/A` and
    /// garbage state none).
    fn pixel_aspect(&self) -> Option<f64> {
        let ratio = self.sample_aspect_ratio.as_deref()?;
        parse_rate(&ratio.replace(':', "/")).filter(|sar| sar.is_finite() && *sar > 0.0)
    }

    /// The size a `width`×`height` picture of this stream is shown at: its pixels made
    /// square as `transcode::SQUARE_PIXELS` does (the longer side of a pixel kept), and
    /// turned a quarter when a rotation of 90° or 270° is stated, as ffmpeg turns it.
    pub fn shown_size(&self, width: u32, height: u32) -> (u32, u32) {
        let sar = self.pixel_aspect().unwrap_or(1.0);
        let stretched = |side: u32, by: f64| {
            (f64::from(side) * by)
                .round()
                .clamp(1.0, f64::from(u32::MAX)) as u32
        };
        let (w, h) = if sar >= 1.0 {
            (stretched(width, sar), height)
        } else {
            (width, stretched(height, 1.0 / sar))
        };
        // ffmpeg turns only quarter turns within a degree (its `autorotate`).
        let quarter = |d: f64| (d.rem_euclid(180.0) - 90.0).abs() < 1.0;
        if self.rotations().any(quarter) {
            (h, w)
        } else {
            (w, h)
        }
    }

    /// Whether pixels are square: a 1:1 sample aspect ratio, or none stated.
    pub fn has_square_pixels(&self) -> bool {
        self.pixel_aspect().map_or(true, |sar| sar == 1.0)
    }
}

/// `"30000/1001"` → 29.97…; `None` for a zero denominator or garbage.
pub(crate) fn parse_rate(rate: &str) -> Option<f64> {
    let (num, den) = rate.split_once('/').unwrap_or((rate, "1"));
    let (num, den): (f64, f64) = (num.trim().parse().ok()?, den.trim().parse().ok()?);
    (den != 0.0).then(|| num / den)
}

/// Parses `ffprobe -print_format json -show_format -show_streams` output.
pub(crate) fn parse(json: &[u8]) -> Result<Probe, MediaError> {
    serde_json::from_slice(json)
        .map_err(|e| MediaError::InvalidMedia(format!("unexpected ffprobe output: {e}")))
}

/// Accepts `25`, `"25"` and `"N/A"` (→ `None`).
fn number_or_string<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
{
    Ok(
        match Option::<serde_json::Value>::deserialize(deserializer)? {
            Some(serde_json::Value::String(s)) => s.parse().ok(),
            Some(serde_json::Value::Number(n)) => n.to_string().parse().ok(),
            _ => None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_an_mp4_with_video_and_audio() {
        let probe = parse(include_bytes!("../testdata/h264_aac.mp4.json")).unwrap();
        assert_eq!(probe.format.format_name, "mov,mp4,m4a,3gp,3g2,mj2");
        assert_eq!(probe.format.duration, Some(1.0));
        let video = probe.video().unwrap();
        assert_eq!(video.codec_name.as_deref(), Some("h264"));
        assert_eq!((video.width, video.height), (Some(64), Some(48)));
        assert_eq!(video.pix_fmt.as_deref(), Some("yuv420p"));
        assert_eq!(video.frame_rate(), Some(25.0));
        assert_eq!(video.avg_frame_rate.as_deref(), Some("25/1"));
        assert_eq!(video.nb_frames, Some(25));
        assert_eq!(video.duration, Some(1.0));
        let audio = probe.audio().unwrap();
        assert_eq!(audio.codec_name.as_deref(), Some("aac"));
        assert_eq!(audio.width, None);
        assert_eq!(audio.frame_rate(), None);
    }

    #[test]
    fn parse_reads_a_webm_without_stream_counts() {
        let probe = parse(include_bytes!("../testdata/vp9.webm.json")).unwrap();
        assert_eq!(probe.format.format_name, "matroska,webm");
        assert_eq!(probe.format.duration, Some(1.0));
        let video = probe.video().unwrap();
        assert_eq!(video.codec_name.as_deref(), Some("vp9"));
        assert_eq!(video.nb_frames, None);
        assert_eq!(video.duration, None);
        assert!(probe.audio().is_none());
    }

    #[test]
    fn parse_tolerates_unknowns_and_refuses_garbage() {
        let probe = parse(
            br#"{"streams":[{"index":0,"codec_type":"unknownkind","nb_frames":"N/A","duration":"N/A"}],
                "format":{"format_name":"x","duration":"N/A"}}"#,
        )
        .unwrap();
        assert_eq!(probe.streams[0].codec_type, CodecType::Other);
        assert_eq!(probe.streams[0].nb_frames, None);
        assert_eq!(probe.format.duration, None);
        assert!(matches!(
            parse(b"not json"),
            Err(MediaError::InvalidMedia(_))
        ));
    }

    #[test]
    fn parse_rate_handles_fractions() {
        assert_eq!(parse_rate("25/1"), Some(25.0));
        assert!((parse_rate("30000/1001").unwrap() - 29.97).abs() < 0.001);
        assert_eq!(parse_rate("1/2"), Some(0.5));
        assert_eq!(parse_rate("0/0"), None);
        assert_eq!(parse_rate("abc"), None);
    }
}
