//! The `options` object: typed, ranged, and matched to the commands that use it.

use serde_json::{Map, Value};

use super::command::Command;
use super::error::ValidationError;
use crate::media::{ImageFormat, MediaFormat};

/// Options with defaults filled in (decisions.md §5).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub fps: f64,
    pub duration: f64,
    pub scale: f64,
    /// `None` keeps the input's format.
    pub format: Option<ImageFormat>,
    pub speed: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fps: 25.0,
            duration: 5.0,
            scale: 1.0,
            format: None,
            speed: 1.0,
        }
    }
}

/// One known option: its name, the commands that use it, and its numeric range.
struct Spec {
    name: &'static str,
    used_by: &'static [Command],
}

const SPECS: &[Spec] = &[
    Spec {
        name: "fps",
        used_by: &[Command::ImageToVideo],
    },
    Spec {
        name: "duration",
        used_by: &[Command::ImageToVideo],
    },
    Spec {
        name: "scale",
        used_by: &[Command::ResizeImage],
    },
    Spec {
        name: "format",
        used_by: &[Command::ResizeImage],
    },
    Spec {
        name: "speed",
        used_by: &[Command::ModifyVideoSpeed],
    },
];

/// The media format an image `format` option names.
pub fn image_format_media(format: ImageFormat) -> MediaFormat {
    match format {
        ImageFormat::Jpeg => MediaFormat::Jpeg,
        ImageFormat::Png => MediaFormat::Png,
        ImageFormat::Webp => MediaFormat::Webp,
    }
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
                "invalid_type",
                "/options",
                "`options` must be a JSON object.",
            ));
        };
        for (name, value) in map {
            let pointer = format!("/options/{}", escape_pointer(name));
            let Some(spec) = SPECS.iter().find(|s| s.name == name) else {
                let known: Vec<_> = SPECS.iter().map(|s| s.name).collect();
                return Err(ValidationError::new(
                    "unknown_option",
                    pointer,
                    format!(
                        "`{name}` is not an option; the options are {}.",
                        known.join(", ")
                    ),
                ));
            };
            if !spec.used_by.iter().any(|c| commands.contains(c)) {
                let users: Vec<_> = spec.used_by.iter().map(|c| c.name()).collect();
                return Err(ValidationError::new(
                    "unused_option",
                    pointer,
                    format!(
                        "`{name}` is used only by {}, which this edit does not run.",
                        users.join(", ")
                    ),
                ));
            }
            options.set(name, value, &pointer)?;
        }
        options.check_combination(map)?;
        Ok(options)
    }

    fn set(&mut self, name: &str, value: &Value, pointer: &str) -> Result<(), ValidationError> {
        match name {
            "fps" => self.fps = number_in(value, pointer, name, 0.0, false, 120.0)?,
            "duration" => self.duration = number_in(value, pointer, name, 0.0, false, 600.0)?,
            "scale" => self.scale = number_in(value, pointer, name, 0.0, false, 16.0)?,
            "speed" => self.speed = number_in(value, pointer, name, 0.1, true, 16.0)?,
            "format" => {
                let Value::String(s) = value else {
                    return Err(ValidationError::new(
                        "invalid_type",
                        pointer,
                        "`format` must be a string: one of jpeg, jpg, png, webp.",
                    ));
                };
                self.format = Some(match s.as_str() {
                    "jpeg" | "jpg" => ImageFormat::Jpeg,
                    "png" => ImageFormat::Png,
                    "webp" => ImageFormat::Webp,
                    _ => {
                        return Err(ValidationError::new(
                            "invalid_option_value",
                            pointer,
                            format!("`format` is \"{s}\"; it must be one of jpeg, jpg, png, webp."),
                        ))
                    }
                });
            }
            _ => unreachable!("every spec name is handled"),
        }
        Ok(())
    }

    /// Checks that hold between options: a video of `duration` at `fps` has at least one frame.
    fn check_combination(&self, sent: &Map<String, Value>) -> Result<(), ValidationError> {
        if (self.fps * self.duration).round() < 1.0 {
            let pointer = if sent.contains_key("duration") {
                "/options/duration"
            } else {
                "/options/fps"
            };
            return Err(ValidationError::new(
                "option_out_of_range",
                pointer,
                format!(
                    "A video of {} s at {} fps has no frame; duration × fps must be at least 0.5.",
                    self.duration, self.fps
                ),
            ));
        }
        Ok(())
    }
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
            "invalid_type",
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
            "option_out_of_range",
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
