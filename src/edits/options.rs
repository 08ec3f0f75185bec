//! The `options` object: typed, ranged, and matched to the commands that use it. The
//! options and their ranges are declared by the commands (`crate::commands`); this
//! is the walk over a request's `options` that checks them.

use serde_json::{Map, Value};

use super::error::ValidationError;
use crate::commands::{Command, OptionKind, OptionSpec, Options};
use crate::error_code::Code;
use crate::media::ImageFormat;

/// Every option any command declares, with the commands that read it.
fn specs() -> Vec<(&'static OptionSpec, Vec<Command>)> {
    let mut specs: Vec<(&'static OptionSpec, Vec<Command>)> = Vec::new();
    for command in Command::ALL {
        for spec in command.options() {
            match specs.iter_mut().find(|(s, _)| s.name == spec.name) {
                Some((_, users)) => users.push(command),
                None => specs.push((spec, vec![command])),
            }
        }
    }
    specs
}

impl Options {
    /// Parses the `options` value of a request (absent = all defaults) for `commands`.
    pub fn parse(value: Option<&Value>, commands: &[Command]) -> Result<Options, ValidationError> {
        let mut options = Options::default();
        let Some(value) = value else {
            return Ok(options);
        };
        let Value::Object(map) = value else {
            return Err(ValidationError::new(
                Code::InvalidType,
                "/options",
                "`options` must be a JSON object.",
            ));
        };
        let specs = specs();
        for (name, value) in map {
            let pointer = format!("/options/{}", escape_pointer(name));
            let Some((spec, used_by)) = specs.iter().find(|(s, _)| s.name == name) else {
                let known: Vec<_> = specs.iter().map(|(s, _)| s.name).collect();
                return Err(ValidationError::new(
                    Code::UnknownOption,
                    pointer,
                    format!(
                        "`{name}` is not an option; the options are {}.",
                        known.join(", ")
                    ),
                ));
            };
            if !used_by.iter().any(|c| commands.contains(c)) {
                let users: Vec<_> = used_by.iter().map(|c| c.name()).collect();
                return Err(ValidationError::new(
                    Code::UnusedOption,
                    pointer,
                    format!(
                        "`{name}` is used only by {}, which this edit does not run.",
                        users.join(", ")
                    ),
                ));
            }
            set(&mut options, spec, value, &pointer)?;
        }
        check_combination(&options, map)?;
        Ok(options)
    }
}

/// Checks `value` against `spec` and sets it in `options`.
fn set(
    options: &mut Options,
    spec: &OptionSpec,
    value: &Value,
    pointer: &str,
) -> Result<(), ValidationError> {
    let name = spec.name;
    match spec.kind {
        OptionKind::Number {
            min,
            min_inclusive,
            max,
            set,
            ..
        } => set(
            options,
            number_in(value, pointer, name, min, min_inclusive, max)?,
        ),
        OptionKind::ImageFormat { set } => {
            let names = ImageFormat::OPTION_NAMES.join(", ");
            let Value::String(s) = value else {
                return Err(ValidationError::new(
                    Code::InvalidType,
                    pointer,
                    format!("`format` must be a string: one of {names}."),
                ));
            };
            let Some(format) = ImageFormat::from_option_name(s) else {
                return Err(ValidationError::new(
                    Code::InvalidOptionValue,
                    pointer,
                    format!("`{name}` is \"{s}\"; it must be one of {names}."),
                ));
            };
            set(options, format);
        }
    }
    Ok(())
}

/// Checks that hold between options: a video of `duration` at `fps` has at least one frame.
fn check_combination(options: &Options, sent: &Map<String, Value>) -> Result<(), ValidationError> {
    if (options.fps * options.duration).round() < 1.0 {
        let pointer = if sent.contains_key("duration") {
            "/options/duration"
        } else {
            "/options/fps"
        };
        return Err(ValidationError::new(
            Code::OptionOutOfRange,
            pointer,
            format!(
                "A video of {} s at {} fps has no frame; duration × fps must be at least 0.5.",
                options.duration, options.fps
            ),
        ));
    }
    Ok(())
}

/// A JSON number within `(min, max]` (or `[min, max]` when `min_inclusive`).
fn number_in(
    value: &Value,
    pointer: &str,
    name: &str,
    min: f64,
    min_inclusive: bool,
    max: f64,
) -> Result<f64, ValidationError> {
    let Some(n) = value.as_f64() else {
        return Err(ValidationError::new(
            Code::InvalidType,
            pointer,
            format!("`{name}` must be a number."),
        ));
    };
    let above_min = if min_inclusive { n >= min } else { n > min };
    if !(above_min && n <= max && n.is_finite()) {
        let low = if min_inclusive {
            format!("at least {min}")
        } else {
            format!("greater than {min}")
        };
        return Err(ValidationError::new(
            Code::OptionOutOfRange,
            pointer,
            format!("`{name}` is {n}; it must be {low} and at most {max}."),
        ));
    }
    Ok(n)
}

/// Escapes a key for use in a JSON pointer (RFC 6901).
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
