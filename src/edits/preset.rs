//! Named presets (docs/API.md, "Presets"): a pipeline and its options stored under a
//! name, validated as an edit's are; an edit that names one gets its commands, and its
//! options under the edit's own. What an edit resolves to is stored with it, so a later
//! change of the preset changes no existing edit.

use serde_json::{Map, Value};

use super::error::ValidationError;
use super::options::escape_pointer;
use super::pipeline::{check_pipeline, parse_commands};
use crate::commands::Options;
use crate::error_code::Code;

/// The longest preset name.
pub const MAX_NAME_LEN: usize = 64;

/// A preset name: 1–64 of `a-z`, `0-9` and `-`.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The name in an edit's `preset` field (at `pointer`).
pub fn name_of<'a>(value: &'a Value, pointer: &str) -> Result<&'a str, ValidationError> {
    match value {
        Value::String(name) if valid_name(name) => Ok(name),
        Value::String(name) => Err(ValidationError::new(
            Code::UnknownPreset,
            pointer,
            format!("\"{name}\" is not a preset name: 1–64 of a-z, 0-9 and -."),
        )),
        _ => Err(ValidationError::new(
            Code::InvalidType,
            pointer,
            "`preset` must be a string: the name of one of your presets.",
        )),
    }
}

/// Validates a preset's body, `{"commands": […], "options": {…}}` (options optional),
/// as an edit's pipeline is validated: the body to store.
pub fn parse_body(body: Value) -> Result<Value, ValidationError> {
    let Value::Object(body) = body else {
        return Err(ValidationError::new(
            Code::InvalidType,
            "",
            "A preset must be a JSON object with `commands` and, optionally, `options`.",
        ));
    };
    if let Some(extra) = body
        .keys()
        .find(|k| !["commands", "options"].contains(&k.as_str()))
    {
        return Err(ValidationError::new(
            Code::UnknownField,
            format!("/{}", escape_pointer(extra)),
            format!("`{extra}` is not a field of a preset; the fields are commands and options."),
        ));
    }
    let commands = parse_commands(body.get("commands"))?;
    let options = Options::parse(body.get("options"), &commands)?;
    check_pipeline(&commands, &options)?;
    let mut stored = Map::new();
    stored.insert("commands".into(), body["commands"].clone());
    stored.insert(
        "options".into(),
        body.get("options")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
    );
    Ok(Value::Object(stored))
}

/// The commands and options of `body` (`{"commands": […], "options": {…}}`: a stored
/// preset, or one a render URL's transform makes), validated as an edit's are.
pub fn pipeline_of(
    body: &Value,
) -> Result<(Vec<crate::commands::Command>, Options), ValidationError> {
    let commands = parse_commands(body.get("commands"))?;
    let options = Options::parse(body.get("options"), &commands)?;
    check_pipeline(&commands, &options)?;
    Ok((commands, options))
}

/// `body`, an edit naming `preset` (the stored body of the preset it names), with the
/// preset's commands and its options under the edit's own. The edit may not send
/// `commands` too. The result is validated as any edit is, afterwards.
pub fn apply(body: Value, preset: &Value) -> Result<Value, ValidationError> {
    let Value::Object(mut body) = body else {
        return Ok(body);
    };
    if body.contains_key("commands") {
        return Err(ValidationError::new(
            Code::ConflictingFields,
            "/commands",
            "An edit sends either `commands` or a `preset`, not both; its `options` override the preset's.",
        ));
    }
    body.insert("commands".into(), preset["commands"].clone());
    let mut options = preset["options"].as_object().cloned().unwrap_or_default();
    match body.remove("options") {
        Some(Value::Object(own)) => options.extend(own),
        // Not an object: left for the edit's validation to refuse, at its place.
        Some(other) => {
            body.insert("options".into(), other);
            return Ok(Value::Object(body));
        }
        None => {}
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    Ok(Value::Object(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_short_lowercase_words_with_dashes() {
        for good in ["thumb", "hero-1280", "a", &"x".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "Thumb", "a_b", "a/b", "ä", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn an_edit_gets_the_presets_commands_and_its_own_options_over_the_presets() {
        let preset = parse_body(json!({
            "commands": ["resize-image"], "options": {"scale": 0.5, "format": "webp"}
        }))
        .unwrap();
        let edit = json!({"assets": [], "preset": "thumb", "options": {"scale": 0.25}});
        let resolved = apply(edit, &preset).unwrap();
        assert_eq!(resolved["commands"], json!(["resize-image"]));
        assert_eq!(
            resolved["options"],
            json!({"scale": 0.25, "format": "webp"})
        );
        assert_eq!(resolved["preset"], "thumb");
        let both = json!({"preset": "thumb", "commands": ["image-to-webp"]});
        assert_eq!(
            apply(both, &preset).unwrap_err().code,
            Code::ConflictingFields
        );
    }

    #[test]
    fn a_preset_is_validated_as_an_edits_pipeline_is() {
        let unknown = parse_body(json!({"commands": ["blur"]})).unwrap_err();
        assert_eq!(unknown.code, Code::UnknownCommand);
        let range = parse_body(json!({"commands": ["resize-image"], "options": {"scale": 99}}));
        assert_eq!(range.unwrap_err().code, Code::OptionOutOfRange);
        let extra = parse_body(json!({"commands": ["resize-image"], "assets": []}));
        assert_eq!(extra.unwrap_err().code, Code::UnknownField);
    }
}
