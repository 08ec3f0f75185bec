//! `mediaedit edit create|get|list|cancel` (and `mediaedit preset …`, [`presets`]): the
//! CLI as a client of a running service (docs/API.md), over the same public API any
//! client uses.
//!
//! Exit status: 0 when the request succeeded (and, for `create --wait`, the edit is
//! `done`; for `cancel`, the service accepted the cancel); 1 when the edit ended
//! `failed` or `canceled`; 2 for a bad command line (clap's); 3 when the service
//! refused the request, could not be reached, or answered something this client will
//! not act on (an edit id that is not a UUID, an unknown output format: see [`names`]).

mod follow;
mod names;
pub mod presets;

use std::path::Path;

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::{json, Map, Value};
use url::Url;

use crate::config::{ClientArgs, CreateArgs, EditCommand};

/// Exit statuses scripts can trust.
pub const EXIT_EDIT_NOT_DONE: i32 = 1;
pub const EXIT_REFUSED: i32 = 3;

/// Extensions read as videos when guessing an asset's `type`; anything else is an image.
const VIDEO_EXTENSIONS: &[&str] = &["mp4", "m4v", "mov", "webm", "ogv", "mkv", "avi"];

/// Runs one `edit` subcommand; returns the exit status.
pub async fn run(command: EditCommand) -> i32 {
    let result = match command {
        EditCommand::Create(args) => create(args).await,
        EditCommand::Get { client, id } => {
            let api = Api::new(&client);
            api.call(Method::GET, &format!("/v1/edits/{id}"), None)
                .await
                .map(|doc| print_edit(&client, &doc))
        }
        EditCommand::List {
            client,
            status,
            limit,
        } => {
            let api = Api::new(&client);
            let mut path = format!("/v1/edits?limit={limit}");
            if let Some(status) = status {
                path.push_str(&format!("&status={status}"));
            }
            api.call(Method::GET, &path, None)
                .await
                .map(|page| print_list(&client, &page))
        }
        EditCommand::Cancel { client, id } => {
            let api = Api::new(&client);
            // The service accepted the cancel: that is success, whatever the edit's
            // state now reads (`canceled` is what was asked for).
            api.call(Method::POST, &format!("/v1/edits/{id}/cancel"), None)
                .await
                .map(|doc| {
                    print_edit(&client, &doc);
                    0
                })
        }
    };
    exit_status(result)
}

/// The exit status of a subcommand's result: its own, or [`EXIT_REFUSED`] with the
/// error printed.
fn exit_status(result: anyhow::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            EXIT_REFUSED
        }
    }
}

/// Uploads local sources, creates the edit, and with `--wait` follows it.
async fn create(args: CreateArgs) -> anyhow::Result<i32> {
    let api = Api::new(&args.client);
    let mut assets = Vec::new();
    for source in &args.sources {
        let src = match source.starts_with("http://") || source.starts_with("https://") {
            true => source.clone(),
            false => api.upload(Path::new(source)).await?,
        };
        assets.push(json!({ "type": asset_type(source), "src": src }));
    }
    let mut body = match &args.preset {
        Some(preset) => json!({ "assets": assets, "preset": preset }),
        None => json!({ "assets": assets, "commands": args.commands }),
    };
    if !args.options.is_empty() {
        body["options"] = Value::Object(parse_options(&args.options)?);
    }
    let doc = api.call(Method::POST, "/v1/edits", Some(body)).await?;
    if !args.wait {
        return Ok(print_edit(&args.client, &doc));
    }
    // Checked before it goes into a URL path or a file name.
    let id = names::edit_id(&doc)?;
    if !args.client.json {
        eprintln!("Created edit {id}.");
    }
    follow::to_the_end(&api, &args, &id).await
}

/// `image` or `video`, from the source's extension.
fn asset_type(source: &str) -> &'static str {
    let path = Url::parse(source).map_or(source.to_string(), |u| u.path().to_string());
    let extension = Path::new(&path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match VIDEO_EXTENSIONS.contains(&extension.as_str()) {
        true => "video",
        false => "image",
    }
}

/// `name=value` pairs; a value that reads as JSON (a number, `true`) is sent as such,
/// anything else as a string.
fn parse_options(pairs: &[String]) -> anyhow::Result<Map<String, Value>> {
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
fn print_edit(client: &ClientArgs, doc: &Value) -> i32 {
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
fn print_list(client: &ClientArgs, page: &Value) -> i32 {
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

/// The service, as one organization sees it.
pub struct Api {
    base: Url,
    token: String,
    http: reqwest::Client,
}

impl Api {
    fn new(client: &ClientArgs) -> Api {
        Api {
            base: client.url.clone(),
            token: client.token.clone(),
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> anyhow::Result<Url> {
        self.base
            .join(path)
            .context("the service URL cannot be joined")
    }

    /// A JSON request; the answer's JSON, or the API's error as a sentence.
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        let mut request = self
            .http
            .request(method, self.url(path)?)
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{} did not answer", self.base))?;
        answer(response).await
    }

    /// Uploads a local file (streamed); the upload's `src`.
    async fn upload(&self, path: &Path) -> anyhow::Result<String> {
        let file = tokio::fs::File::open(path)
            .await
            .with_context(|| format!("opening {}", path.display()))?;
        let size = file.metadata().await?.len();
        let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::new(file));
        let response = self
            .http
            .post(self.url("/v1/uploads")?)
            .bearer_auth(&self.token)
            .header("content-length", size)
            .body(body)
            .send()
            .await
            .with_context(|| format!("uploading {}", path.display()))?;
        let doc = answer(response).await?;
        doc["attributes"]["src"]
            .as_str()
            .map(str::to_string)
            .context("the upload's answer has no src")
    }
}

/// The JSON of a successful answer; for an error, `<status> <code>: <detail>`.
async fn answer(response: reqwest::Response) -> anyhow::Result<Value> {
    let status = response.status();
    let text = response.text().await?;
    let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(doc);
    }
    let error = &doc["errors"][0];
    match (error["code"].as_str(), error["detail"].as_str()) {
        (Some(code), Some(detail)) => anyhow::bail!("{status} {code}: {detail}"),
        _ if status == StatusCode::UNAUTHORIZED => anyhow::bail!("{status}: check the token"),
        _ => anyhow::bail!("{status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_a_video_by_its_extension() {
        assert_eq!(asset_type("https://x.example/a/clip.MP4?sig=1"), "video");
        assert_eq!(asset_type("./movie.mov"), "video");
        assert_eq!(asset_type("photo.jpg"), "image");
        assert_eq!(asset_type("https://x.example/anim.gif"), "image");
    }

    #[test]
    fn option_values_are_json_when_they_read_as_json() {
        let options = parse_options(&["scale=0.5".into(), "format=webp".into()]).unwrap();
        assert_eq!(
            Value::Object(options),
            json!({"scale": 0.5, "format": "webp"})
        );
        assert!(parse_options(&["scale".into()]).is_err());
    }
}
