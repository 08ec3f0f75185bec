//! `mediaedit preset put|get|list|delete`: the organization's presets (docs/API.md,
//! "Presets") from the command line, with the exit statuses of `edit` (0 done, 2 a bad
//! command line, 3 refused: an unknown name is the service's `404`).

use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::client::api::Api;
use crate::client::output::{exit_status, parse_options};
use crate::config::{ClientArgs, PresetCommand};
use crate::edits::preset::valid_name;

/// Runs one `preset` subcommand; returns the exit status.
pub async fn run(command: PresetCommand) -> i32 {
    exit_status(match command {
        PresetCommand::Put {
            client,
            name,
            commands,
            options,
        } => put(&client, &name, commands, &options).await,
        PresetCommand::Get { client, name } => get(&client, &name).await,
        PresetCommand::List { client } => Api::new(&client)
            .call(Method::GET, "/v1/presets", None)
            .await
            .map(|page| print_list(&client, &page)),
        PresetCommand::Delete { client, name } => delete(&client, &name).await,
    })
}

async fn put(
    client: &ClientArgs,
    name: &str,
    commands: Vec<String>,
    options: &[String],
) -> anyhow::Result<i32> {
    let path = path_of(name)?;
    let mut body = json!({ "commands": commands });
    if !options.is_empty() {
        body["options"] = Value::Object(parse_options(options)?);
    }
    let doc = Api::new(client)
        .call(Method::PUT, &path, Some(body))
        .await?;
    Ok(print_preset(client, &doc))
}

async fn get(client: &ClientArgs, name: &str) -> anyhow::Result<i32> {
    let path = path_of(name)?;
    let doc = Api::new(client).call(Method::GET, &path, None).await?;
    Ok(print_preset(client, &doc))
}

async fn delete(client: &ClientArgs, name: &str) -> anyhow::Result<i32> {
    let path = path_of(name)?;
    Api::new(client).call(Method::DELETE, &path, None).await?;
    if !client.json {
        println!("{name}\tdeleted");
    }
    Ok(0)
}

/// `/v1/presets/NAME`, for a name the service could store: anything else would be a
/// path of its own (`../edits`), so it is refused here, before a request.
fn path_of(name: &str) -> anyhow::Result<String> {
    if !valid_name(name) {
        anyhow::bail!("{name:?} is not a preset name: 1–64 of a-z, 0-9 and -");
    }
    Ok(format!("/v1/presets/{name}"))
}

/// A preset as lines: `NAME<TAB>commands`, then `option<TAB>name=value` each (as
/// `--option` takes them); its JSON with `--json`.
fn print_preset(client: &ClientArgs, doc: &Value) -> i32 {
    if client.json {
        println!("{doc}");
        return 0;
    }
    let preset = &doc["data"];
    println!("{}\t{}", name(preset), commands(preset));
    let options = preset["attributes"]["options"].as_object();
    for (option, value) in options.into_iter().flat_map(Map::iter) {
        println!("option\t{option}={}", shown(value));
    }
    0
}

/// The presets, one line each: `NAME<TAB>commands<TAB>updatedAt`.
fn print_list(client: &ClientArgs, page: &Value) -> i32 {
    if client.json {
        println!("{page}");
        return 0;
    }
    for preset in page["data"].as_array().into_iter().flatten() {
        let updated = preset["attributes"]["updatedAt"].as_str().unwrap_or("?");
        println!("{}\t{}\t{updated}", name(preset), commands(preset));
    }
    0
}

fn name(preset: &Value) -> &str {
    preset["id"].as_str().unwrap_or("?")
}

fn commands(preset: &Value) -> String {
    let commands = preset["attributes"]["commands"].as_array();
    let names: Vec<&str> = commands
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    names.join(",")
}

/// An option's value as `--option` would take it: a string bare, anything else JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_name_the_service_could_store_becomes_a_path() {
        assert_eq!(path_of("thumb-2").unwrap(), "/v1/presets/thumb-2");
        for bad in ["", "../edits", "a/b", "Thumb", "a?b", &"x".repeat(65)] {
            let refused = path_of(bad).unwrap_err().to_string();
            assert!(refused.contains("not a preset name"), "{bad}: {refused}");
        }
    }

    #[test]
    fn an_option_is_shown_as_the_command_line_takes_it() {
        assert_eq!(shown(&json!("webp")), "webp");
        assert_eq!(shown(&json!(0.5)), "0.5");
        assert_eq!(shown(&json!(true)), "true");
        let parsed = parse_options(&[format!("format={}", shown(&json!("webp")))]).unwrap();
        assert_eq!(parsed["format"], "webp");
    }
}
