//! `GET /v1/commands`: the command library as data — each command's summary, the
//! formats it takes and what it makes of each, and its options with their ranges and
//! defaults — built from the commands' own tables, so a client (the playground, a
//! generated SDK) offers only pipelines the service accepts.

use axum::Json;
use serde_json::{json, Map, Value};

use crate::commands::{Command, OptionKind, OptionSpec, Options, Shape};
use crate::format::ImageFormat;

/// `GET /v1/commands`: no token (nothing in it belongs to anyone).
#[utoipa::path(get, path = "/v1/commands", operation_id = "listCommands", tag = "commands", security(()),
    responses((status = 200, description = "Every command: its formats in and out and its options", body = crate::api::schemas::CommandList)))]
pub async fn list() -> Json<Value> {
    Json(catalog())
}

/// The whole catalog document.
pub fn catalog() -> Value {
    let data: Vec<Value> = Command::ALL.into_iter().map(describe).collect();
    json!({ "data": data })
}

fn describe(command: Command) -> Value {
    let defaults = Options::default();
    let mut outputs = Map::new();
    for input in command.inputs() {
        if let Some(output) = command.output(*input, &defaults) {
            outputs.insert(input.extension().into(), output.extension().into());
        }
    }
    // A command that makes a file per frame makes more of two frames than of one (a
    // storyboard makes two files of any number: its sheet and its VTT).
    let files_of = |frames| {
        let shape = Shape {
            frames: Some(frames),
            ..Shape::default()
        };
        command.predict(shape, &defaults).files
    };
    let per_frame = files_of(2) > files_of(1);
    let mut attributes = json!({
        "summary": command.summary(),
        "inputs": command.inputs().iter().map(|f| f.extension()).collect::<Vec<_>>(),
        "outputs": outputs,
        "files": match (per_frame, files_of(1)) {
            (true, _) => "one per frame",
            (false, 1) => "one",
            (false, _) => "two",
        },
        "options": command.options().iter().map(|spec| option(spec)).collect::<Vec<_>>(),
    });
    if let Some(spec) = command.options().iter().find(|spec| {
        matches!(spec.kind, OptionKind::ImageFormat)
            || (spec.name == "format" && matches!(spec.kind, OptionKind::Choice { .. }))
    }) {
        attributes["formatOption"] = spec.name.into();
    }
    json!({ "type": "command", "id": command.name(), "attributes": attributes })
}

/// One option as the catalog and the OpenAPI document describe it: its JSON type,
/// range or values, default and what it does.
pub fn option(spec: &OptionSpec) -> Value {
    let mut described = match &spec.kind {
        OptionKind::Number {
            min,
            min_inclusive,
            max,
            integer,
            ..
        } => json!({
            "type": if *integer { "integer" } else { "number" }, "minimum": min,
            "exclusiveMinimum": !min_inclusive, "maximum": max,
        }),
        // A number with the words it also takes (the OpenAPI document makes it a `oneOf`).
        OptionKind::NumberOr { min, max, word } => json!({
            "type": "integer", "minimum": min, "exclusiveMinimum": false, "maximum": max,
            "words": [word],
        }),
        OptionKind::Flag { .. } => json!({ "type": "boolean" }),
        OptionKind::Choice { values, .. } => json!({ "type": "string", "enum": values }),
        OptionKind::ChoiceList { values, .. } => json!({
            "type": "array", "items": { "type": "string", "enum": values },
            "minItems": 1, "maxItems": values.len(), "uniqueItems": true,
        }),
        OptionKind::ImageFormat => json!({ "type": "string", "enum": ImageFormat::OPTION_NAMES }),
        OptionKind::Colour { .. } => json!({
            "type": "string", "pattern": "^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$",
        }),
        OptionKind::Source { .. } => json!({ "type": "string", "format": "uri" }),
        OptionKind::Text { min, max } => json!({
            "type": "string", "minLength": min, "maxLength": max,
        }),
    };
    described["name"] = spec.name.into();
    described["default"] = spec.default_value().unwrap_or(Value::Null);
    described["description"] = spec.doc.into();
    described
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(name: &str) -> Value {
        let catalog = catalog();
        let found = catalog["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == name);
        found.unwrap().clone()
    }

    #[test]
    fn every_command_is_listed_with_its_formats() {
        assert_eq!(
            catalog()["data"].as_array().unwrap().len(),
            Command::ALL.len()
        );
        let gif = command("video-to-gif")["attributes"].clone();
        let containers = ["mp4", "mov", "webm", "mkv", "avi", "ts", "3gp", "ogv"];
        assert_eq!(gif["inputs"], json!(containers));
        assert_eq!(gif["outputs"]["mkv"], "gif");
        assert_eq!(gif["outputs"].as_object().unwrap().len(), containers.len());
        assert_eq!(gif["files"], "one");
        assert_eq!(
            command("extract-frames")["attributes"]["files"],
            "one per frame"
        );
        assert_eq!(command("video-storyboard")["attributes"]["files"], "two");
    }

    #[test]
    fn resize_keeps_the_input_format_unless_its_format_option_says_otherwise() {
        let resize = command("resize-image")["attributes"].clone();
        assert_eq!(resize["outputs"]["png"], "png");
        assert_eq!(resize["formatOption"], "format");
        let scale = &resize["options"][0];
        assert_eq!(scale["name"], "scale");
        assert_eq!(scale["maximum"], 16.0);
        assert_eq!(scale["exclusiveMinimum"], true);
        assert_eq!(scale["default"], 1.0);
    }
}
