//! The options of an edit, and how each command declares the ones it reads.
//!
//! Options are one object per edit (docs/API.md, "Options"): each command lists the
//! [`OptionSpec`]s it reads in its `SPEC`, with their values, ranges and defaults, and
//! reads them back through the typed getters of [`Options`] (`options.number(&SCALE)`),
//! which fall back on the spec's default. A name two commands both read means the same
//! thing in both; a value must suit every command of the pipeline that reads it
//! (`edits::options` walks a request's object against these tables).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::media::image::Colour;
use crate::media::{ImageFormat, MediaFile};

/// One option a command reads.
#[derive(Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    /// What it does, in a sentence (the catalog and the OpenAPI document).
    pub doc: &'static str,
    pub kind: OptionKind,
}

/// What values an option takes.
#[derive(Debug)]
pub enum OptionKind {
    /// A finite number within `(min, max]`, or `[min, max]` when `min_inclusive`;
    /// a whole one when `integer`.
    Number {
        min: f64,
        min_inclusive: bool,
        max: f64,
        integer: bool,
        /// The value when the request names none (`None`: the option is optional).
        default: Option<f64>,
    },
    /// A whole number in `[min, max]`, or the word `word` (`quality`: 1–100 or
    /// `auto`); optional.
    NumberOr {
        min: f64,
        max: f64,
        word: &'static str,
    },
    /// `true` or `false`.
    Flag { default: bool },
    /// One of `values`.
    Choice {
        values: &'static [&'static str],
        default: Option<&'static str>,
    },
    /// A list of one or more of `values`, each at most once (`video-to-hls`'s
    /// `codecs`); `default` when not given.
    ChoiceList {
        values: &'static [&'static str],
        default: &'static [&'static str],
    },
    /// An image format name: `jpeg` (or `jpg`), `png`, `webp`, `avif`, `gif`.
    ImageFormat,
    /// `#RRGGBB` or `#RRGGBBAA`.
    Colour { default: Option<&'static str> },
    /// A string of `min` to `max` characters.
    Text { min: usize, max: usize },
    /// Another file the command reads besides its input (`watermark`'s `overlay`): a
    /// URL or an upload's `src`, fetched once per edit by the rules of an asset's
    /// source, in `takes` formats; the command finds it with [`Options::source`].
    Source {
        takes: &'static [crate::media::MediaFormat],
    },
}

impl OptionSpec {
    /// A number option in `(min, max]` with a default.
    pub const fn number(
        name: &'static str,
        doc: &'static str,
        min: f64,
        max: f64,
        default: f64,
    ) -> Self {
        let kind = OptionKind::Number {
            min,
            min_inclusive: false,
            max,
            integer: false,
            default: Some(default),
        };
        OptionSpec { name, doc, kind }
    }

    /// A whole number in `[min, max]`, optional unless `default` is given.
    pub const fn integer(
        name: &'static str,
        doc: &'static str,
        min: f64,
        max: f64,
        default: Option<f64>,
    ) -> Self {
        let kind = OptionKind::Number {
            min,
            min_inclusive: true,
            max,
            integer: true,
            default,
        };
        OptionSpec { name, doc, kind }
    }

    /// The JSON value of the default, if there is one.
    pub fn default_value(&self) -> Option<Value> {
        match self.kind {
            OptionKind::Number { default, .. } => default.map(Value::from),
            OptionKind::Flag { default } => Some(Value::Bool(default)),
            OptionKind::Choice { default, .. } | OptionKind::Colour { default } => {
                default.map(Value::from)
            }
            OptionKind::ChoiceList { default, .. } => Some(Value::from(default.to_vec())),
            OptionKind::ImageFormat
            | OptionKind::NumberOr { .. }
            | OptionKind::Text { .. }
            | OptionKind::Source { .. } => None,
        }
    }
}

/// The output image format, read by every command that writes an image.
pub const FORMAT: OptionSpec = OptionSpec {
    name: "format",
    doc: "The output format: jpeg (or jpg), png, webp, avif or jxl; the input's by default.",
    kind: OptionKind::ImageFormat,
};

// Options several commands read, declared once (a name means one thing everywhere).

/// A box side: resize-image's box, crop-image's crop.
pub const WIDTH: OptionSpec = OptionSpec::integer(
    "width",
    "The box's width in pixels (1–16384): resize-image's box (without height the aspect is kept), crop-image's crop.",
    1.0,
    16384.0,
    None,
);

pub const HEIGHT: OptionSpec = OptionSpec::integer(
    "height",
    "The box's height in pixels (1–16384): resize-image's box (without width the aspect is kept), crop-image's crop.",
    1.0,
    16384.0,
    None,
);

/// A number from 0 to 1, 0.5 by default.
const fn unit(name: &'static str, doc: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        doc,
        kind: OptionKind::Number {
            min: 0.0,
            min_inclusive: true,
            max: 1.0,
            integer: false,
            default: Some(0.5),
        },
    }
}

pub const FOCUS_X: OptionSpec = unit(
    "focusX",
    "With gravity focus: the point to centre on, across (0 left … 1 right; default 0.5).",
);
pub const FOCUS_Y: OptionSpec = unit(
    "focusY",
    "With gravity focus: the point to centre on, down (0 top … 1 bottom; default 0.5).",
);

/// The options of an edit: the values the request gave, each checked against every
/// spec of its name among the pipeline's commands. Read through the getters, which
/// give the spec's default for a value not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    given: BTreeMap<&'static str, Value>,
    /// The files of the `Source` options, once the edit has fetched them.
    fetched: BTreeMap<&'static str, SourceFile>,
    /// The edit's subtitles asset, read when the edit was created; per step, as the
    /// running command's input shows them (see `subtitled`).
    pub(super) subtitles: Option<std::sync::Arc<crate::media::subtitles::Subtitles>>,
    /// Whether the running command draws them into its frames (see `subtitled`).
    pub(super) burn: bool,
}

/// The fetched file of a `Source` option, and its bytes' SHA-256: what the result
/// cache's key holds for the option, since the same URL may serve other bytes later.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub file: MediaFile,
    pub sha256: String,
}

impl Options {
    /// Sets `name` to a value already checked against its specs.
    /// Numbers are kept as `f64`, so `2` and `2.0` are one value (and one cache key).
    pub fn set(&mut self, name: &'static str, value: Value) {
        let value = match value.as_f64() {
            Some(n) if value.is_number() => Value::from(n),
            _ => value,
        };
        self.given.insert(name, value);
    }

    /// Options with `pairs` given, unchecked: for code and tests that build options
    /// themselves rather than from a request.
    pub fn of(pairs: &[(&'static str, Value)]) -> Options {
        let mut options = Options::default();
        for (name, value) in pairs {
            options.set(name, value.clone());
        }
        options
    }

    /// The options given, by name, in name order (the fetched files aside).
    pub fn given(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.given.iter().map(|(name, value)| (*name, value))
    }

    /// Whether the request gave `spec`'s option.
    pub fn has(&self, spec: &OptionSpec) -> bool {
        self.given.contains_key(spec.name)
    }

    fn value(&self, spec: &OptionSpec) -> Option<Value> {
        self.given
            .get(spec.name)
            .cloned()
            .or_else(|| spec.default_value())
    }

    /// A number option with a default, given or defaulted. Reading one declared
    /// without a default this way is a fault of the command (it panics).
    pub fn number(&self, spec: &OptionSpec) -> f64 {
        self.optional_number(spec)
            .unwrap_or_else(|| panic!("`{}` is read as if it had a default", spec.name))
    }

    /// A number option given or defaulted; `None` for an optional one not given.
    pub fn optional_number(&self, spec: &OptionSpec) -> Option<f64> {
        self.value(spec)?.as_f64()
    }

    /// A flag option.
    pub fn flag(&self, spec: &OptionSpec) -> bool {
        self.value(spec).and_then(|v| v.as_bool()).unwrap_or(false)
    }

    /// A choice, text or colour option as given or defaulted.
    pub fn text(&self, spec: &OptionSpec) -> Option<String> {
        match self.value(spec)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A list option as given or defaulted (empty when neither).
    pub fn texts(&self, spec: &OptionSpec) -> Vec<String> {
        match self.value(spec) {
            Some(Value::Array(items)) => items
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A colour option.
    pub fn colour(&self, spec: &OptionSpec) -> Option<Colour> {
        Colour::parse(&self.text(spec)?)
    }

    /// An image format option; `None` when not given.
    pub fn image_format(&self, spec: &OptionSpec) -> Option<ImageFormat> {
        ImageFormat::from_option_name(&self.text(spec)?)
    }

    /// The `Source` options given, with their specs: what the edit fetches before its
    /// commands run.
    pub fn sources<'a>(
        &self,
        specs: impl IntoIterator<Item = &'a OptionSpec>,
    ) -> Vec<(&'static str, String, &'static [crate::media::MediaFormat])> {
        let mut found = Vec::new();
        for spec in specs {
            if let (OptionKind::Source { takes }, Some(Value::String(src))) =
                (&spec.kind, self.given.get(spec.name))
            {
                if !found.iter().any(|(name, _, _)| *name == spec.name) {
                    found.push((spec.name, src.clone(), *takes));
                }
            }
        }
        found
    }

    /// Records the fetched file of source option `name`.
    pub fn set_fetched(&mut self, name: &'static str, fetched: SourceFile) {
        self.fetched.insert(name, fetched);
    }

    /// The fetched file of a `Source` option, once fetched.
    pub fn source(&self, spec: &OptionSpec) -> Option<&MediaFile> {
        self.fetched.get(spec.name).map(|f| &f.file)
    }

    /// The options' values for `specs` (given or defaulted), as canonical JSON: the
    /// part of the result cache's key that options make. An edit that names a default
    /// shares results with one that leaves it out. A fetched `Source` option is keyed
    /// by its bytes' SHA-256, not its URL: the same URL serving a new file is a new
    /// key, and the same file under two URLs one key. The edit keys its options once
    /// it has fetched them (`queue::pipeline`).
    pub fn key<'a>(&self, specs: impl IntoIterator<Item = &'a OptionSpec>) -> String {
        let mut values = BTreeMap::new();
        for spec in specs {
            if let Some(fetched) = self.fetched.get(spec.name) {
                let digest = serde_json::json!({ "sha256": fetched.sha256 });
                values.insert(spec.name, digest);
            } else if let Some(value) = self.value(spec) {
                values.insert(spec.name, value);
            }
        }
        if let Some(subtitles) = &self.subtitles {
            use sha2::Digest;
            let cues = serde_json::to_vec(subtitles.as_ref()).expect("cues serialize");
            let digest = hex::encode(sha2::Sha256::digest(cues));
            values.insert("@subtitles", serde_json::json!({ "sha256": digest }));
        }
        serde_json::to_string(&values).expect("option values serialize")
    }
}

/// Read by every image command: report the output's faces.
pub const FACES: OptionSpec = OptionSpec {
    name: "faces",
    doc: "Add `faces` to each image output's attributes: the boxes of the faces found in it (x, y, width, height in the output's pixels, and score 0–1). Default false.",
    kind: OptionKind::Flag { default: false },
};

#[cfg(test)]
mod tests {
    use super::*;

    const SCALE: OptionSpec = OptionSpec::number("scale", "", 0.0, 16.0, 1.0);
    const WIDTH: OptionSpec = OptionSpec::integer("width", "", 1.0, 16384.0, None);

    #[test]
    fn a_value_not_given_reads_as_its_default_and_keys_as_if_given() {
        let mut options = Options::default();
        assert_eq!(options.number(&SCALE), 1.0);
        assert_eq!(options.optional_number(&WIDTH), None);
        let implicit = options.key([&SCALE, &WIDTH]);
        options.set("scale", Value::from(1.0));
        assert_eq!(options.key([&SCALE, &WIDTH]), implicit);
        options.set("width", Value::from(300));
        assert_eq!(options.optional_number(&WIDTH), Some(300.0));
        assert_ne!(options.key([&SCALE, &WIDTH]), implicit);
    }

    #[test]
    fn a_fetched_source_keys_by_its_bytes_digest_not_its_url() {
        const OVERLAY: OptionSpec = OptionSpec {
            name: "overlay",
            doc: "",
            kind: OptionKind::Source { takes: &[] },
        };
        let fetched = |url: &str, sha256: &str| {
            let mut options = Options::of(&[("overlay", Value::from(url))]);
            let file = MediaFile {
                path: "/tmp/overlay".into(),
                format: crate::media::MediaFormat::Png,
            };
            let sha256 = sha256.to_string();
            options.set_fetched("overlay", SourceFile { file, sha256 });
            options.key([&OVERLAY])
        };
        let red = fetched("https://example.com/logo.png", "aa");
        assert_ne!(
            red,
            fetched("https://example.com/logo.png", "bb"),
            "new bytes"
        );
        assert_eq!(
            red,
            fetched("https://example.com/copy.png", "aa"),
            "same bytes"
        );
        assert!(!red.contains("example.com"), "{red}");
    }
}
