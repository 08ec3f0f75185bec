//! `create --wait`: follows an edit to its end — a progress bar on a terminal, a plain
//! line per change otherwise — and downloads its outputs. A failed or canceled edit's
//! bar stays as it ended: at its progress, with its status.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use reqwest::Method;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::names;
use crate::client::api::Api;
use crate::client::output::{print_edit, EXIT_EDIT_NOT_DONE};
use crate::config::CreateArgs;

/// Seconds each long poll waits: short, so the bar moves; an ending answers at once.
const POLL_WAIT: &str = "1";

/// Follows edit `id` until it ends; downloads the outputs of a done edit.
pub async fn to_the_end(api: &Api, args: &CreateArgs, id: &str) -> anyhow::Result<i32> {
    let show = Show::new(args.client.json);
    let path = format!("/v1/edits/{id}?wait={POLL_WAIT}");
    let doc = loop {
        let doc = api.call(Method::GET, &path, None).await?;
        let status = doc["attributes"]["status"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        show.update(&status, &doc["attributes"]);
        if matches!(status.as_str(), "done" | "failed" | "canceled") {
            break doc;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    show.finish(doc["attributes"]["status"] == "done");
    if doc["attributes"]["status"] != "done" {
        return Ok(print_edit(&args.client, &doc).max(EXIT_EDIT_NOT_DONE));
    }
    let files = download(api, id, &doc, &args.output).await?;
    if args.client.json {
        println!("{doc}");
    } else {
        for file in files {
            println!("{}", file.display());
        }
    }
    Ok(0)
}

/// Every output of `doc` into `dir`, named by [`names::plan`] from the checked `id`:
/// every name is planned, and the answer refused, before the first file is made.
async fn download(
    api: &Api,
    id: &str,
    doc: &Value,
    dir: &std::path::Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let planned = names::plan(id, doc)?;
    tokio::fs::create_dir_all(dir)
        .await
        .with_context(|| format!("creating {}", dir.display()))?;
    let mut files = Vec::new();
    for output in planned {
        let response = api.http.get(&output.url).send().await?.error_for_status()?;
        let path = dir.join(&output.name);
        let mut file = tokio::fs::File::create(&path)
            .await
            .with_context(|| format!("creating {}", path.display()))?;
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            file.write_all(&chunk?).await?;
        }
        file.flush().await?;
        files.push(path);
    }
    Ok(files)
}

/// How progress is shown: a bar on a terminal, lines otherwise, nothing with `--json`.
enum Show {
    Bar(ProgressBar),
    Lines(std::sync::Mutex<String>),
    Quiet,
}

impl Show {
    fn new(json: bool) -> Show {
        if json {
            return Show::Quiet;
        }
        if !std::io::stderr().is_terminal() {
            return Show::Lines(Default::default());
        }
        let bar = ProgressBar::new(1000);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg:<28} [{bar:30}] {percent:>3}% {elapsed}")
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Show::Bar(bar)
    }

    fn update(&self, status: &str, attributes: &Value) {
        let progress = attributes["progress"].as_f64().unwrap_or(0.0);
        let progress = if status == "done" { 1.0 } else { progress };
        let step = attributes["step"]["name"].as_str().unwrap_or("");
        let message = match step {
            "" => status.to_string(),
            step => format!("{status}: {step}"),
        };
        match self {
            Show::Bar(bar) => {
                bar.set_message(message);
                bar.set_position((progress * 1000.0) as u64);
            }
            Show::Lines(last) => {
                let line = format!("{message} {:.0}%", progress * 100.0);
                let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
                if *last != line {
                    eprintln!("{line}");
                    *last = line;
                }
            }
            Show::Quiet => {}
        }
    }

    /// Leaves the bar drawn as the edit ended: full when `done`; otherwise where its
    /// progress stood, with the status (`finish` would fill it to 100 %).
    fn finish(&self, done: bool) {
        if let Show::Bar(bar) = self {
            match done {
                true => bar.finish(),
                false => bar.abandon(),
            }
        }
    }
}
