//! A request's `commands`: parsed into known commands and type-checked as a
//! pipeline (each command accepts every format the one before it can make). Shared
//! by edits and presets.

use serde_json::Value;

use super::error::ValidationError;
use super::rules::MAX_COMMANDS;
use crate::commands::{Command, Options};
use crate::error_code::Code;
use crate::media::MediaFormat;

/// A non-empty JSON array of at most `max` items, or the matching error.
pub(super) fn array<'a>(
    value: Option<&'a Value>,
    name: &str,
    max: usize,
) -> Result<&'a Vec<Value>, ValidationError> {
    let pointer = format!("/{name}");
    match value {
        None => Err(ValidationError::new(
            Code::MissingField,
            pointer,
            format!("`{name}` is required."),
        )),
        Some(Value::Array(items)) if items.is_empty() => Err(ValidationError::new(
            Code::EmptyArray,
            pointer,
            format!("`{name}` must have at least one item."),
        )),
        Some(Value::Array(items)) if items.len() > max => Err(ValidationError::new(
            Code::TooManyItems,
            pointer,
            format!(
                "`{name}` has {} items; at most {max} are allowed.",
                items.len()
            ),
        )),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(ValidationError::new(
            Code::InvalidType,
            pointer,
            format!("`{name}` must be an array."),
        )),
    }
}

pub(super) fn parse_commands(value: Option<&Value>) -> Result<Vec<Command>, ValidationError> {
    array(value, "commands", MAX_COMMANDS)?
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let pointer = format!("/commands/{i}");
            let Value::String(name) = item else {
                return Err(ValidationError::new(
                    Code::InvalidType,
                    pointer,
                    "Each command must be a string.",
                ));
            };
            Command::from_name(name).ok_or_else(|| {
                let known: Vec<_> = Command::ALL.iter().map(|c| c.name()).collect();
                ValidationError::new(
                    Code::UnknownCommand,
                    pointer,
                    format!(
                        "\"{name}\" is not a command; the commands are {}.",
                        known.join(", ")
                    ),
                )
            })
        })
        .collect()
}

/// Type-checks the pipeline: every format command *i* can produce must be accepted
/// by command *i+1*.
/// `too_many_outputs` when the options alone prove the edit would produce more than
/// `limit` files, pointing at the command where the bound passes it.
pub(super) fn check_outputs(
    commands: &[Command],
    options: &Options,
    assets: u64,
    limit: u64,
) -> Result<(), ValidationError> {
    match super::budget::first_command_over(commands, options, assets, limit) {
        None => Ok(()),
        Some((i, files)) => Err(ValidationError::new(
            Code::TooManyOutputs,
            format!("/commands/{i}"),
            format!(
                "This edit would produce at least {files} files by `{}`, more than the limit \
                 of {limit} per edit; use fewer assets, a shorter or slower image-to-video, \
                 or fewer extract-frames steps.",
                commands[i]
            ),
        )),
    }
}

pub(super) fn check_pipeline(
    commands: &[Command],
    options: &Options,
) -> Result<(), ValidationError> {
    let mut formats: Vec<MediaFormat> = commands[0].inputs().to_vec();
    for (i, command) in commands.iter().enumerate() {
        if i > 0 {
            if let Some(bad) = formats.iter().find(|f| !command.accepts(**f)) {
                let takes: Vec<_> = command.inputs().iter().map(|f| f.name()).collect();
                return Err(ValidationError::new(
                    Code::IncompatibleCommands,
                    format!("/commands/{i}"),
                    format!(
                        "`{command}` takes {} but the command before it, `{}`, produces {}.",
                        takes.join(" or "),
                        commands[i - 1],
                        bad.name()
                    ),
                ));
            }
        }
        let mut next: Vec<MediaFormat> = Vec::new();
        for output in formats.iter().filter_map(|f| command.output(*f, options)) {
            if !next.contains(&output) {
                next.push(output);
            }
        }
        formats = next;
    }
    Ok(())
}
