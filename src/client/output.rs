//! What the client prints and reads: options given as NAME=VALUE, an edit, a page of
//! edits, and the exit status of each.

use crate::config::ClientArgs;
use anyhow::Context;
use serde_json::{json, Map, Value};

/// Exit statuses scripts can trust.
pub const EXIT_EDIT_NOT_DONE: i32 = 1;

pub const EXIT_REFUSED: i32 = 3;

/// The exit status of a subcommand's result: its own, or [`EXIT_REFUSED`] with the
/// error printed.
pub(super) fn exit_status(result: anyhow::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            EXIT_REFUSED
        }
    }
}

/// `name=value` pairs; a value that reads as JSON (a number, `true`) is sent as such,
/// anything else as a string.
pub(super) fn parse_options(pairs: &[String]) -> anyhow::Result<Map<String, Value>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .with_context(|| format!("--option {pair:?} is not name=value"))?;
            let value = serde_json::from_str(value).unwrap_or_else(|_| json!(value));
            Ok((name.to_string(), value))
        })
        .collect()
}

/// Prints an Edit (its JSON with `--json`); the exit status its state deserves.
pub(super) fn print_edit(client: &ClientArgs, doc: &Value) -> i32 {
    let attributes = &doc["attributes"];
    let status = attributes["status"].as_str().unwrap_or("?");
    if client.json {
        println!("{doc}");
    } else {
        println!("{}\t{status}", doc["id"].as_str().unwrap_or("?"));
        if let Some(error) = attributes.get("error") {
            println!(
                "error\t{}: {}",
                error["code"].as_str().unwrap_or("?"),
                error["detail"].as_str().unwrap_or("")
            );
        }
        for url in attributes["downloadUrls"].as_array().into_iter().flatten() {
            println!("output\t{}", url.as_str().unwrap_or(""));
        }
    }
    match status {
        "failed" | "canceled" => EXIT_EDIT_NOT_DONE,
        _ => 0,
    }
}

/// Prints a page of edits: one line each (the page's JSON with `--json`).
pub(super) fn print_list(client: &ClientArgs, page: &Value) -> i32 {
    if client.json {
        println!("{page}");
        return 0;
    }
    for doc in page["data"].as_array().into_iter().flatten() {
        let attributes = &doc["attributes"];
        let commands: Vec<&str> = attributes["commands"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        println!(
            "{}\t{}\t{}\t{}",
            doc["id"].as_str().unwrap_or("?"),
            attributes["status"].as_str().unwrap_or("?"),
            attributes["createdAt"].as_str().unwrap_or("?"),
            commands.join(",")
        );
    }
    0
}
