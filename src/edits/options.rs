//! The `options` object: typed, ranged, and matched to the commands that use it. The
//! options and their ranges are declared by the commands (`crate::commands`); this
//! is the walk over a request's `options` that checks them.

use serde_json::Value;

use super::error::ValidationError;
use crate::commands::{Command, OptionKind, OptionSpec, Options};
use crate::error_code::Code;
use crate::media::image::Colour;
use crate::media::ImageFormat;

/// Every option any command declares, by name: each spec of that name with the
/// command that declares it.
fn specs() -> Vec<(&'static str, Vec<(Command, &'static OptionSpec)>)> {
    let mut specs: Vec<(&'static str, Vec<(Command, &'static OptionSpec)>)> = Vec::new();
    for command in Command::ALL {
        for spec in command.options() {
            match specs.iter_mut().find(|(name, _)| *name == spec.name) {
                Some((_, users)) => users.push((command, *spec)),
                None => specs.push((spec.name, vec![(command, *spec)])),
            }
        }
    }
    specs
}

impl Options {
    /// Parses the `options` value of a request (absent = all defaults) for `commands`:
    /// each option must be read by one of them, and suit every one that reads it.
    pub fn parse(value: Option<&Value>, commands: &[Command]) -> Result<Options, ValidationError> {
        let mut options = Options::default();
        if let Some(value) = value {
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
                let Some((name, declared)) = specs.iter().find(|(n, _)| n == name) else {
                    let known: Vec<_> = specs.iter().map(|(n, _)| *n).collect();
                    return Err(ValidationError::new(
                        Code::UnknownOption,
                        pointer,
                        format!(
                            "`{name}` is not an option; the options are {}.",
                            known.join(", ")
                        ),
                    ));
                };
                let used: Vec<_> = declared
                    .iter()
                    .filter(|(c, _)| commands.contains(c))
                    .collect();
                if used.is_empty() {
                    let mut users: Vec<_> = declared.iter().map(|(c, _)| c.name()).collect();
                    users.dedup();
                    return Err(ValidationError::new(
                        Code::UnusedOption,
                        pointer,
                        format!(
                            "`{name}` is used only by {}, which this edit does not run.",
                            users.join(", ")
                        ),
                    ));
                }
                for (_, spec) in &used {
                    check(spec, value, &pointer)?;
                }
                options.set(name, value.clone());
            }
        }
        for command in commands {
            command.check(&options).map_err(|problem| {
                let pointer = format!("/options/{}", problem.option);
                ValidationError::new(problem.code, pointer, problem.detail)
            })?;
        }
        Ok(options)
    }
}

/// Checks `value` against `spec`.
fn check(spec: &OptionSpec, value: &Value, pointer: &str) -> Result<(), ValidationError> {
    let name = spec.name;
    let wrong_type = |what: &str| {
        ValidationError::new(
            Code::InvalidType,
            pointer,
            format!("`{name}` must be {what}."),
        )
    };
    let bad_value = |why: String| ValidationError::new(Code::InvalidOptionValue, pointer, why);
    match spec.kind {
        OptionKind::Number {
            min,
            min_inclusive,
            max,
            integer,
            ..
        } => {
            number_in(value, pointer, name, min, min_inclusive, max)?;
            if integer && value.as_f64().is_some_and(|n| n.fract() != 0.0) {
                return Err(wrong_type("a whole number"));
            }
        }
        OptionKind::NumberOr { min, max, word } => match value {
            Value::String(s) if s == word => {}
            Value::String(s) => {
                return Err(bad_value(format!(
                    "`{name}` is \"{s}\"; it must be a whole number from {min} to {max}, or \"{word}\"."
                )));
            }
            _ => {
                number_in(value, pointer, name, min, true, max)?;
                if value.as_f64().is_some_and(|n| n.fract() != 0.0) {
                    return Err(wrong_type(&format!("a whole number or \"{word}\"")));
                }
            }
        },
        OptionKind::Flag { .. } => {
            if !value.is_boolean() {
                return Err(wrong_type("true or false"));
            }
        }
        OptionKind::Choice { values, .. } => {
            let names = values.join(", ");
            let Value::String(s) = value else {
                return Err(wrong_type(&format!("a string: one of {names}")));
            };
            if !values.contains(&s.as_str()) {
                return Err(bad_value(format!(
                    "`{name}` is \"{s}\"; it must be one of {names}."
                )));
            }
        }
        OptionKind::ChoiceList { values, .. } => {
            let names = values.join(", ");
            let shape = format!("a list of one or more of {names}, each once");
            let Value::Array(items) = value else {
                return Err(wrong_type(&shape));
            };
            if items.is_empty() || items.len() > values.len() {
                return Err(bad_value(format!("`{name}` must be {shape}.")));
            }
            for (i, item) in items.iter().enumerate() {
                let Some(s) = item.as_str() else {
                    return Err(wrong_type(&shape));
                };
                if !values.contains(&s) || items[..i].contains(item) {
                    return Err(bad_value(format!(
                        "`{name}` names \"{s}\" where it must be {shape}."
                    )));
                }
            }
        }
        OptionKind::ImageFormat => {
            let names = ImageFormat::OPTION_NAMES.join(", ");
            let Value::String(s) = value else {
                return Err(wrong_type(&format!("a string: one of {names}")));
            };
            if ImageFormat::from_option_name(s).is_none() {
                return Err(bad_value(format!(
                    "`{name}` is \"{s}\"; it must be one of {names}."
                )));
            }
        }
        OptionKind::Colour { .. } => {
            let Value::String(s) = value else {
                return Err(wrong_type("a colour string: #RRGGBB or #RRGGBBAA"));
            };
            if Colour::parse(s).is_none() {
                return Err(bad_value(format!(
                    "`{name}` is \"{s}\"; it must be a colour: #RRGGBB or #RRGGBBAA."
                )));
            }
        }
        OptionKind::Source { .. } => {
            let Value::String(s) = value else {
                return Err(wrong_type(
                    "a string: the URL of a file, or an upload's `src`",
                ));
            };
            let url = url::Url::parse(s).ok().filter(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.has_host()
                    && s.len() <= crate::edits::rules::MAX_URL_LEN
            });
            if url.is_none() {
                return Err(ValidationError::new(
                    Code::InvalidUrl,
                    pointer,
                    format!(
                        "`{name}` must be an absolute http or https URL of at most {} bytes.",
                        crate::edits::rules::MAX_URL_LEN
                    ),
                ));
            }
        }
        OptionKind::Text { min, max } => {
            let Value::String(s) = value else {
                return Err(wrong_type("a string"));
            };
            let chars = s.chars().count();
            if chars < min || chars > max {
                return Err(ValidationError::new(
                    Code::OptionOutOfRange,
                    pointer,
                    format!("`{name}` has {chars} characters; it must have {min} to {max}."),
                ));
            }
        }
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
