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
use crate::media::ImageFormat;

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
    /// `true` or `false`.
    Flag { default: bool },
    /// One of `values`.
    Choice {
        values: &'static [&'static str],
        default: Option<&'static str>,
    },
    /// An image format name: `jpeg` (or `jpg`), `png`, `webp`, `avif`, `gif`.
    ImageFormat,
    /// `#RRGGBB` or `#RRGGBBAA`.
    Colour { default: Option<&'static str> },
    /// A string of `min` to `max` characters.
    Text { min: usize, max: usize },
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
            OptionKind::ImageFormat | OptionKind::Text { .. } => None,
        }
    }
}

/// The output image format, read by every command that writes an image.
pub const FORMAT: OptionSpec = OptionSpec {
    name: "format",
    doc: "The output format: jpeg (or jpg), png, webp or avif; the input's by default.",
    kind: OptionKind::ImageFormat,
};

/// The options of an edit: the values the request gave, each checked against every
/// spec of its name among the pipeline's commands. Read through the getters, which
/// give the spec's default for a value not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    given: BTreeMap<&'static str, Value>,
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

    /// A colour option.
    pub fn colour(&self, spec: &OptionSpec) -> Option<Colour> {
        Colour::parse(&self.text(spec)?)
    }

    /// An image format option; `None` when not given.
    pub fn image_format(&self, spec: &OptionSpec) -> Option<ImageFormat> {
        ImageFormat::from_option_name(&self.text(spec)?)
    }

    /// The options' values for `specs` (given or defaulted), as canonical JSON: the
    /// part of the result cache's key that options make. An edit that names a default
    /// shares results with one that leaves it out.
    pub fn key<'a>(&self, specs: impl IntoIterator<Item = &'a OptionSpec>) -> String {
        let mut values = BTreeMap::new();
        for spec in specs {
            if let Some(value) = self.value(spec) {
                values.insert(spec.name, value);
            }
        }
        serde_json::to_string(&values).expect("option values serialize")
    }
}

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
}
