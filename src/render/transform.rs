//! The `{transform}` of a render URL (docs/API.md, "Render"): `preset:NAME`, or a comma
//! list of `resize-image`'s options in short form (`w:300,h:200,fit:cover,g:smart,
//! f:auto,q:80`), or both (`preset:thumb,f:auto`: the list overrides the preset's
//! options). It becomes the `{"commands", "options"}` of an edit and is validated as
//! one (`edits::preset::pipeline_of`), so every value has the range, default and error
//! code it has in an edit, and the pixels are `resize-image`'s own.
//!
//! `exp:UNIXTIME` is no option: it is when the URL stops working (signed with the rest
//! of the transform, so it cannot be moved), read by the renderer and the answer's
//! `Cache-Control`.

use serde_json::{Map, Value};

use crate::commands::{Command, OptionKind, OptionSpec};
use crate::error_code::Code;

/// The short names, and the options they stand for. A full option name is taken too.
const SHORT: &[(&str, &str)] = &[
    ("w", "width"),
    ("h", "height"),
    ("s", "scale"),
    ("g", "gravity"),
    ("f", "format"),
    ("q", "quality"),
    ("ts", "targetScore"),
    ("bg", "background"),
    ("fx", "focusX"),
    ("fy", "focusY"),
    ("we", "withoutEnlargement"),
    ("md", "metadata"),
];

/// The most characters a transform may have.
const MAX_LEN: usize = 1024;
/// The most digits of `exp` (unix seconds): past the year 33 658 is no expiry.
const MAX_EXP_DIGITS: usize = 12;

/// A transform as written, before a preset is looked up.
#[derive(Debug, Clone, PartialEq)]
pub struct Transform {
    /// `preset:NAME`, when named.
    pub preset: Option<String>,
    /// The listed options (full names), as JSON values typed by their specs.
    pub options: Map<String, Value>,
    /// `f:auto`: the format is picked from the request's `Accept`.
    pub auto_format: bool,
    /// `f:best`: the smallest of the formats the request's `Accept` takes.
    pub best_format: bool,
    /// `exp:UNIXTIME`: the second from which the URL answers `410 render_expired`.
    pub expires: Option<u64>,
}

/// Why a transform does not parse: `invalid_transform`, with a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformError(pub String);

impl TransformError {
    pub fn code(&self) -> Code {
        Code::InvalidTransform
    }
}

impl Transform {
    /// Parses `text`. Only the shape is checked here (pairs, known names, no name
    /// twice); values are checked with the pipeline they make ([`Transform::pipeline`]).
    pub fn parse(text: &str) -> Result<Transform, TransformError> {
        if text.is_empty() || text.len() > MAX_LEN {
            return Err(TransformError(format!(
                "A transform is 1 to {MAX_LEN} characters: `preset:NAME` or a list such as `w:300,h:200,fit:cover`."
            )));
        }
        let mut transform = Transform {
            preset: None,
            options: Map::new(),
            auto_format: false,
            best_format: false,
            expires: None,
        };
        for part in text.split(',') {
            let Some((name, value)) = part.split_once(':') else {
                return Err(TransformError(format!(
                    "`{part}` is not `name:value`; a transform is a comma list such as `w:300,h:200,fit:cover`."
                )));
            };
            if name == "exp" {
                let digits = !value.is_empty()
                    && value.len() <= MAX_EXP_DIGITS
                    && value.bytes().all(|b| b.is_ascii_digit());
                if !digits {
                    return Err(TransformError(format!(
                        "`exp:{value}` is not a time: `exp` is unix seconds, such as `exp:1767225600`."
                    )));
                }
                if transform
                    .expires
                    .replace(value.parse().unwrap_or(u64::MAX))
                    .is_some()
                {
                    return Err(TransformError("`exp` is named twice.".into()));
                }
                continue;
            }
            if name == "preset" {
                if transform.preset.replace(value.to_string()).is_some() {
                    return Err(TransformError("`preset` is named twice.".into()));
                }
                continue;
            }
            let full = SHORT
                .iter()
                .find(|(short, _)| *short == name)
                .map_or(name, |(_, full)| full);
            let Some(spec) = spec_of(full) else {
                let names: Vec<String> = SHORT.iter().map(|(s, f)| format!("{s} ({f})")).collect();
                return Err(TransformError(format!(
                    "`{name}` is not an option of a transform; they are preset, fit, {}.",
                    names.join(", ")
                )));
            };
            let from_accept = transform.auto_format || transform.best_format;
            if full == "format" && (value == "auto" || value == "best") {
                if from_accept || transform.options.contains_key(full) {
                    return Err(TransformError("`format` is named twice.".into()));
                }
                match value {
                    "auto" => transform.auto_format = true,
                    _ => transform.best_format = true,
                }
                continue;
            }
            if transform.options.contains_key(full) || (full == "format" && from_accept) {
                return Err(TransformError(format!("`{full}` is named twice.")));
            }
            transform
                .options
                .insert(full.to_string(), typed(spec, value));
        }
        Ok(transform)
    }

    /// The edit body `{"commands", "options"}` this transform makes over `preset` (the
    /// stored preset body it names, if any): the preset's commands and its options
    /// under the listed ones, or `resize-image` with the listed options.
    pub fn body(&self, preset: Option<&Value>) -> Value {
        let (commands, mut options) = match preset {
            Some(preset) => (
                preset["commands"].clone(),
                preset["options"].as_object().cloned().unwrap_or_default(),
            ),
            None => (Value::from(vec![Command::ResizeImage.name()]), Map::new()),
        };
        options.extend(self.options.clone());
        let mut body = Map::new();
        body.insert("commands".into(), commands);
        body.insert("options".into(), Value::Object(options));
        Value::Object(body)
    }
}

/// `resize-image`'s option `name`.
fn spec_of(name: &str) -> Option<&'static OptionSpec> {
    Command::ResizeImage
        .options()
        .iter()
        .copied()
        .find(|spec| spec.name == name)
}

/// `value` as the JSON its spec reads: a number, a flag (`true`/`1`, `false`/`0`), a
/// colour (`#` optional, as it must be escaped in a URL) or a string. A value that
/// does not read so is left a string, for the validation to refuse with its own code.
fn typed(spec: &OptionSpec, value: &str) -> Value {
    match spec.kind {
        OptionKind::Number { .. } | OptionKind::NumberOr { .. } => value
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map_or_else(|| Value::from(value), Value::from),
        OptionKind::Flag { .. } => match value {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            other => Value::from(other),
        },
        OptionKind::Colour { .. } if !value.starts_with('#') => Value::from(format!("#{value}")),
        _ => Value::from(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_names_become_resize_image_options_typed_by_their_specs() {
        let t =
            Transform::parse("w:300,h:200,fit:cover,g:smart,f:auto,q:70,we:1,bg:ff0000").unwrap();
        assert!(t.auto_format);
        assert_eq!(t.preset, None);
        assert_eq!(
            t.body(None),
            json!({"commands": ["resize-image"], "options": {
                "width": 300.0, "height": 200.0, "fit": "cover", "gravity": "smart",
                "quality": 70.0, "withoutEnlargement": true, "background": "#ff0000"}})
        );
        let (commands, options) = crate::edits::preset::pipeline_of(&t.body(None)).unwrap();
        assert_eq!(commands, vec![Command::ResizeImage]);
        assert!(options.has(spec_of("width").unwrap()));
    }

    #[test]
    fn a_preset_is_named_and_listed_options_override_its_own() {
        let t = Transform::parse("preset:thumb,f:webp").unwrap();
        assert_eq!(t.preset.as_deref(), Some("thumb"));
        let preset =
            json!({"commands": ["resize-image"], "options": {"width": 64, "format": "png"}});
        assert_eq!(
            t.body(Some(&preset)),
            json!({"commands": ["resize-image"], "options": {"width": 64, "format": "webp"}})
        );
    }

    #[test]
    fn bad_shapes_are_invalid_transforms_and_bad_values_fail_as_in_an_edit() {
        for bad in [
            "",
            "w300",
            "w:1,w:2",
            "zoom:2",
            "f:auto,f:png",
            "f:best,f:auto",
            "f:webp,f:best",
            "preset:a,preset:b",
            "exp:soon",
            "exp:-1",
            "exp:",
            "exp:1234567890123",
            "exp:1,exp:2",
        ] {
            let e = Transform::parse(bad).unwrap_err();
            assert_eq!(e.code(), Code::InvalidTransform, "{bad}");
        }
        let body = Transform::parse("w:0").unwrap().body(None);
        let e = crate::edits::preset::pipeline_of(&body).unwrap_err();
        assert_eq!(e.code, Code::OptionOutOfRange);
        let body = Transform::parse("w:wide").unwrap().body(None);
        assert_eq!(
            crate::edits::preset::pipeline_of(&body).unwrap_err().code,
            Code::InvalidType
        );
    }

    #[test]
    fn exp_is_when_the_url_stops_and_no_option_of_the_pipeline() {
        let t = Transform::parse("w:300,exp:1767225600").unwrap();
        assert_eq!(t.expires, Some(1_767_225_600));
        assert_eq!(
            t.body(None),
            json!({"commands": ["resize-image"], "options": {"width": 300.0}})
        );
        assert_eq!(Transform::parse("w:300").unwrap().expires, None);
    }
}
