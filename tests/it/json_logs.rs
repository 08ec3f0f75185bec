//! `--log-format json`: the real binary writes one JSON object per line, and the lines
//! of an edit's work name the edit and its organization.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binary::{token_create, Server};
use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn json_log_lines_name_the_edit_and_its_organization() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "json-logs-org");
    let mut server = Server::start_with_args(
        data.path(),
        &["--log-format", "json"],
        &[("RUST_LOG", "info")],
        Stdio::piped(),
    )
    .await;
    // Read stderr as it comes, so a full pipe never blocks the server.
    let reader = server.stderr_lines();

    let sources = FixtureServer::start().await;
    sources.add("a.png", fixtures::png(64, 32));
    let body = edit(
        &sources.url("a.png"),
        &["resize-image"],
        Some(serde_json::json!({ "scale": 0.5 })),
    );
    let created: Value = server.post_edit(&token, &body).await.json().await.unwrap();
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.read_edit(&token, &id).await["attributes"]["status"] != "done" {
        assert!(Instant::now() < deadline, "the edit never finished");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.signal_and_wait("-TERM");
    let lines = reader.join().unwrap();

    assert!(lines.len() >= 3, "too few log lines: {lines:?}");
    let objects: Vec<Value> = lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"));
            assert!(value.is_object(), "{line}");
            for key in ["timestamp", "level", "message"] {
                assert!(value[key].is_string(), "no `{key}`: {line}");
            }
            value
        })
        .collect();
    // RFC 3339 in UTC, as collectors parse it.
    let first = objects[0]["timestamp"].as_str().unwrap();
    assert!(first.len() >= 20 && first.ends_with('Z'), "{first}");

    // The worker's lines: inside the edit's span.
    let worked = objects.iter().find(|line| {
        line["span"]["name"] == "edit"
            && line["span"]["edit_id"] == id.as_str()
            && line["span"]["org"] == "json-logs-org"
    });
    let worked = worked.unwrap_or_else(|| panic!("no line of the edit's work: {lines:#?}"));
    assert_eq!(worked["level"], "INFO", "{worked}");
    let spans = worked["spans"].as_array().expect("the span list");
    assert!(
        spans.iter().any(|s| s["edit_id"] == id.as_str()),
        "{worked}"
    );

    // The API's line: the request span names the organization and the new edit.
    let created_line = objects
        .iter()
        .find(|line| line["message"] == "edit created")
        .unwrap_or_else(|| panic!("no `edit created` line: {lines:#?}"));
    assert_eq!(created_line["edit_id"], id.as_str(), "{created_line}");
    assert_eq!(created_line["span"]["name"], "request", "{created_line}");
    assert_eq!(
        created_line["span"]["org"], "json-logs-org",
        "{created_line}"
    );
    assert_eq!(
        created_line["span"]["edit_id"],
        id.as_str(),
        "{created_line}"
    );
    // The token never reaches the log.
    assert!(
        lines.iter().all(|l| !l.contains(&token)),
        "a token was logged"
    );
}
