//! What the OpenAPI document says from the command registry rather than from the
//! handlers' attributes: the command names (an `enum` on every `commands` array, with
//! each command's summary and options) and `EditOptions` (every option, typed and
//! ranged). A new command appears here with no line written in this file, and
//! `GET /v1/commands` says the same from the same specs.

use serde_json::{json, Map, Value};

use crate::commands::{Command, OptionSpec};

/// The documents whose `commands` array names commands: what an edit or a preset is
/// sent with, and what they answer.
const WITH_COMMANDS: [&str; 4] = ["NewEdit", "PresetIn", "EditAttributes", "PresetAttributes"];
/// The documents whose `options` object holds the commands' options.
const WITH_OPTIONS: [&str; 2] = ["NewEdit", "PresetIn"];

/// Adds `CommandName` and `EditOptions` to `document` (the OpenAPI document as JSON)
/// and points the documents that carry commands and options at them.
pub fn add_to(document: &mut Value) {
    let schemas = &mut document["components"]["schemas"];
    schemas["CommandName"] = command_name_schema();
    schemas["EditOptions"] = edit_options_schema();
    for name in WITH_COMMANDS {
        let commands = &mut schemas[name]["properties"]["commands"];
        assert!(commands.is_object(), "{name} has no commands");
        commands["items"] = reference("CommandName");
    }
    for name in WITH_OPTIONS {
        let options = &mut schemas[name]["properties"]["options"];
        assert!(options.is_object(), "{name} has no options");
        // OpenAPI 3.1: a reference may carry its own description.
        let mut pointed = reference("EditOptions");
        if let Some(said) = options.get("description") {
            pointed["description"] = said.clone();
        }
        *options = pointed;
    }
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// One of the command names, each with its summary and the options it reads (in
/// `description`, and one by one in `x-enum-descriptions`, which code generators
/// turn into the enum's doc comments).
fn command_name_schema() -> Value {
    let said: Vec<String> = Command::ALL.into_iter().map(describe).collect();
    let names: Vec<&str> = Command::ALL.into_iter().map(Command::name).collect();
    let listed: Vec<String> = names
        .iter()
        .zip(&said)
        .map(|(name, said)| format!("- `{name}`: {said}"))
        .collect();
    json!({
        "type": "string",
        "enum": names,
        "description": format!(
            "A command of the library, as `GET /v1/commands` lists them (with the formats each takes and makes); its options are `options` fields (`EditOptions`).\n\n{}",
            listed.join("\n")
        ),
        "x-enum-descriptions": said,
    })
}

fn describe(command: Command) -> String {
    let options: Vec<String> = command
        .options()
        .iter()
        .map(|spec| format!("`{}`", spec.name))
        .collect();
    match options.as_slice() {
        [] => format!("{} No options.", command.summary()),
        _ => format!("{} Options: {}.", command.summary(), options.join(", ")),
    }
}

/// The JSON Schema of the `options` object: every option of every command, with the
/// commands that read it.
fn edit_options_schema() -> Value {
    let mut readers: Vec<(&str, Vec<&OptionSpec>, Vec<&str>)> = Vec::new();
    for command in Command::ALL {
        for spec in command.options() {
            match readers.iter_mut().find(|(name, _, _)| *name == spec.name) {
                Some((_, specs, commands)) => {
                    specs.push(spec);
                    commands.push(command.name());
                }
                None => readers.push((spec.name, vec![spec], vec![command.name()])),
            }
        }
    }
    let properties: Map<String, Value> = readers
        .into_iter()
        .map(|(name, specs, commands)| (name.to_string(), option_schema(&specs, &commands)))
        .collect();
    json!({
        "type": "object",
        "description": "Options of the commands: one object per edit; each option is read by the commands its description names.",
        "additionalProperties": false,
        "properties": properties,
    })
}

/// One option name's schema over every command that reads it: the widest range and
/// every value any of them takes (each command still checks its own), and each
/// distinct description with its default.
fn option_schema(specs: &[&OptionSpec], commands: &[&str]) -> Value {
    let mut schema = super::super::catalog::option(specs[0]);
    let mut docs: Vec<String> = Vec::new();
    for spec in specs {
        let other = super::super::catalog::option(spec);
        if let (Some(all), Some(more)) =
            (schema["enum"].as_array().cloned(), other["enum"].as_array())
        {
            let mut all = all;
            all.extend(
                more.iter()
                    .filter(|v| !all.contains(v))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            schema["enum"] = Value::from(all);
        }
        if let (Some(min), Some(other_min)) =
            (schema["minimum"].as_f64(), other["minimum"].as_f64())
        {
            let inclusive = other["exclusiveMinimum"] == false;
            if other_min < min || (other_min == min && inclusive) {
                schema["minimum"] = other["minimum"].clone();
                schema["exclusiveMinimum"] = other["exclusiveMinimum"].clone();
            }
        }
        if let (Some(max), Some(other_max)) =
            (schema["maximum"].as_f64(), other["maximum"].as_f64())
        {
            if other_max > max {
                schema["maximum"] = other["maximum"].clone();
            }
        }
        if other["type"] == "number" {
            schema["type"] = other["type"].clone();
        }
        // The default is said in words, not as `default`: generated clients fill a
        // schema default in and send it, and an option sent for a command the
        // pipeline does not run is refused (`unused_option`).
        let doc = match &other["default"] {
            Value::Null => spec.doc.to_string(),
            default => format!("{} Default: {default}.", spec.doc),
        };
        if !docs.contains(&doc) {
            docs.push(doc);
        }
    }
    let object = schema.as_object_mut().expect("an option is an object");
    object.remove("name");
    object.remove("default");
    // JSON Schema 2020-12 (OpenAPI 3.1): an exclusive bound is a number.
    if object.remove("exclusiveMinimum") == Some(Value::Bool(true)) {
        let min = object.remove("minimum").unwrap_or(Value::Null);
        object.insert("exclusiveMinimum".into(), min);
    }
    let said = format!("{} Read by {}.", docs.join(" "), commands.join(", "));
    object.insert("description".into(), said.into());
    // A number or one of its words (`quality`: 1–100 or `auto`).
    if let Some(words) = object.remove("words") {
        let mut number = Map::new();
        for field in ["type", "minimum", "exclusiveMinimum", "maximum"] {
            if let Some(value) = object.remove(field) {
                number.insert(field.into(), value);
            }
        }
        let either = [json!(number), json!({ "type": "string", "enum": words })];
        object.insert("oneOf".into(), Value::from(either.to_vec()));
    }
    schema
}
