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

use reqwest::Method;
use serde_json::{json, Value};
use url::Url;

use crate::config::{CreateArgs, EditCommand};

mod api;
pub use api::Api;

mod output;
use output::exit_status;
use output::parse_options;
use output::print_edit;
use output::print_list;
pub use output::EXIT_EDIT_NOT_DONE;
pub use output::EXIT_REFUSED;

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

/// `image`, `video` or `subtitles` (`.srt`, `.vtt`), from the source's extension.
fn asset_type(source: &str) -> &'static str {
    let path = Url::parse(source).map_or(source.to_string(), |u| u.path().to_string());
    let extension = Path::new(&path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if ["srt", "vtt"].contains(&extension.as_str()) {
        return "subtitles";
    }
    match VIDEO_EXTENSIONS.contains(&extension.as_str()) {
        true => "video",
        false => "image",
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
        assert_eq!(asset_type("talk.SRT"), "subtitles");
        assert_eq!(asset_type("https://x.example/talk.vtt?sig=1"), "subtitles");
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
