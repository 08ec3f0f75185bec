//! What the database keeps of one output file: where it is stored and what it is, so
//! `attributes.outputs` needs no probe on read.

use serde::{Deserialize, Serialize};

/// One output of a done edit (an element of `edits.outputs` and `result_cache.outputs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredForm")]
pub struct StoredOutput {
    /// Storage key.
    pub key: String,
    /// The asset it came from, in request order.
    pub asset: usize,
    /// `webp`, `mp4`, … (the stored file's extension).
    pub format: String,
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// Seconds, for videos and GIFs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// For videos and GIFs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    /// The placeholders of an image output (docs/API.md, "Placeholders"); none for
    /// videos, nor for outputs recorded before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blurhash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbhash: Option<String>,
    /// `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dominant_color: Option<String>,
    /// The quality `quality: auto` chose, and the SSIMULACRA2 score it measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The faces found in an image output, when the edit asked (`faces: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faces: Option<Vec<crate::media::image::faces::Face>>,
    /// `hlg` or `pq` when the asset it came from is HDR video: the edit reports it on
    /// that asset (`attributes.assets[i].hdr`), as the dry run does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_hdr: Option<String>,
}

/// The two shapes stored: a full record, or (written before outputs carried their
/// metadata) a bare storage key, which reads with the format from its extension and
/// unknown sizes.
#[derive(Deserialize)]
#[serde(untagged)]
// Only ever a moment's value between the JSON and a `StoredOutput`: boxing the full
// record would cost an allocation per output read for no saving.
#[allow(clippy::large_enum_variant)]
enum StoredForm {
    Full {
        key: String,
        asset: usize,
        format: String,
        bytes: u64,
        width: u32,
        height: u32,
        #[serde(default)]
        duration: Option<f64>,
        #[serde(default)]
        frames: Option<u64>,
        #[serde(default)]
        blurhash: Option<String>,
        #[serde(default)]
        thumbhash: Option<String>,
        #[serde(default)]
        dominant_color: Option<String>,
        #[serde(default)]
        quality: Option<u8>,
        #[serde(default)]
        score: Option<f64>,
        faces: Option<Vec<crate::media::image::faces::Face>>,
        #[serde(default)]
        source_hdr: Option<String>,
    },
    Key(String),
}

impl From<StoredForm> for StoredOutput {
    fn from(form: StoredForm) -> StoredOutput {
        match form {
            StoredForm::Full {
                key,
                asset,
                format,
                bytes,
                width,
                height,
                duration,
                frames,
                blurhash,
                thumbhash,
                dominant_color,
                quality,
                score,
                faces,
                source_hdr,
            } => StoredOutput {
                key,
                asset,
                format,
                bytes,
                width,
                height,
                duration,
                frames,
                blurhash,
                thumbhash,
                dominant_color,
                quality,
                score,
                faces,
                source_hdr,
            },
            StoredForm::Key(key) => {
                // `edits/<id>/<attempt>/<asset>-<index>.<ext>`
                let name = key.rsplit('/').next().unwrap_or_default();
                let (stem, format) = name.rsplit_once('.').unwrap_or((name, ""));
                let asset = stem
                    .split_once('-')
                    .and_then(|(a, _)| a.parse().ok())
                    .unwrap_or(0);
                StoredOutput {
                    format: format.to_string(),
                    key,
                    asset,
                    bytes: 0,
                    width: 0,
                    height: 0,
                    duration: None,
                    frames: None,
                    blurhash: None,
                    thumbhash: None,
                    dominant_color: None,
                    quality: None,
                    score: None,
                    faces: None,
                    source_hdr: None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_stored_before_outputs_had_metadata_still_reads() {
        let outputs: Vec<StoredOutput> =
            serde_json::from_str(r#"["edits/e1/1/2-0.webp"]"#).unwrap();
        assert_eq!(outputs[0].key, "edits/e1/1/2-0.webp");
        assert_eq!((outputs[0].asset, outputs[0].format.as_str()), (2, "webp"));
    }

    #[test]
    fn a_full_record_round_trips() {
        let output = StoredOutput {
            key: "edits/e1/1/0-0.mp4".into(),
            asset: 0,
            format: "mp4".into(),
            bytes: 1234,
            width: 640,
            height: 360,
            duration: Some(5.0),
            frames: Some(125),
            blurhash: None,
            thumbhash: None,
            dominant_color: None,
            quality: None,
            score: None,
            faces: None,
            source_hdr: Some("hlg".into()),
        };
        let text = serde_json::to_string(&output).unwrap();
        assert_eq!(serde_json::from_str::<StoredOutput>(&text).unwrap(), output);
        let image = StoredOutput {
            format: "png".into(),
            duration: None,
            frames: None,
            blurhash: Some("LEHV6nWB2yk8pyo0adR*.7kCMdnj".into()),
            thumbhash: Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into()),
            dominant_color: Some("#c81e1e".into()),
            quality: Some(62),
            score: Some(71.3),
            faces: Some(vec![crate::media::image::faces::Face {
                x: 86.0,
                y: 38.0,
                width: 54.0,
                height: 68.0,
                score: 0.93,
            }]),
            ..output
        };
        let text = serde_json::to_string(&image).unwrap();
        assert_eq!(serde_json::from_str::<StoredOutput>(&text).unwrap(), image);
    }

    #[test]
    fn a_record_written_before_placeholders_reads_without_them() {
        let text = r#"{"key":"k","asset":0,"format":"png","bytes":1,"width":2,"height":3}"#;
        let output: StoredOutput = serde_json::from_str(text).unwrap();
        assert_eq!((output.width, output.blurhash), (2, None));
    }
}
