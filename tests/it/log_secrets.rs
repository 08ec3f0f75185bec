//! Logs carry no credential at any level (docs/SECURITY.md, "Tenancy"): the real
//! binary at `RUST_LOG=trace` answers a render URL, runs an edit whose source and
//! failing webhook carry a token in their query, and serves the edit's signed
//! download; none of the signatures or tokens appears in what it wrote, and the
//! redacted forms do.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::binary::{token_create, Server, BIN};
use crate::fixtures;
use crate::helpers::*;
use crate::render::b64;

const SOURCE_TOKEN: &str = "source-token-5c1e0a";
const HOOK_TOKEN: &str = "hook-token-9f27d4";

/// `mediaedit render-key create`; the key is the last line it prints.
fn render_key_create(data_dir: &std::path::Path, org: &str) -> String {
    let out = Command::new(BIN)
        .args(["render-key", "create", "--data-dir"])
        .arg(data_dir)
        .args(["--org", org])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout.lines().last().unwrap().trim().to_string()
}

/// `GET url`, which must answer 200.
async fn get_ok(url: &str) -> reqwest::Response {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response
}

#[tokio::test]
async fn no_log_line_at_any_level_holds_a_signature_or_a_url_s_token() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "log-secrets-org");
    let key = render_key_create(data.path(), "log-secrets-org");
    let mut server = Server::start(data.path(), &[("RUST_LOG", "trace")], Stdio::piped()).await;
    let reader = server.stderr_lines();
    let sources = FixtureServer::start().await;
    let src = format!(
        "{}?token={SOURCE_TOKEN}",
        sources.add("a.png", fixtures::png(64, 32))
    );

    // A render of a source whose URL carries a token.
    let source = b64(&src);
    let transform = "w:32,f:png";
    let signature = mediaedit::render::keys::sign(&key, &format!("{transform}/{source}"));
    get_ok(&format!(
        "{}/v1/render/{signature}/{transform}/{source}",
        server.base
    ))
    .await;

    // An edit of that source, whose webhook (a token in its query) cannot connect.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hook_port = closed.local_addr().unwrap().port();
    drop(closed);
    let hook = format!("http://127.0.0.1:{hook_port}/hook?token={HOOK_TOKEN}");
    let mut body = edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 })));
    body["webhook"] = json!({ "url": hook });
    let created = server.post_edit(&token, &body).await;
    let created: Value = created.json().await.unwrap();
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let doc = server.read_edit(&token, id).await;
        if doc["attributes"]["status"] == "done" {
            break doc;
        }
        assert!(Instant::now() < deadline, "the edit never finished: {doc}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let client = reqwest::Client::new();
    let attempts = loop {
        let log: Value = client
            .get(format!("{}/v1/edits/{id}/deliveries", server.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if log["data"].as_array().is_some_and(|a| !a.is_empty()) {
            break log["data"].clone();
        }
        assert!(Instant::now() < deadline, "no webhook attempt: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(attempts[0]["error"], "connection refused", "{attempts}");

    // Its output, downloaded by its signed URL.
    let download = done["attributes"]["outputs"][0]["url"].as_str().unwrap();
    get_ok(download).await;
    let download = url::Url::parse(download).unwrap();
    let download_signature = download
        .query_pairs()
        .find(|(k, _)| k == "signature")
        .map(|(_, v)| v.into_owned())
        .expect("a download signature");

    server.signal_and_wait("-TERM");
    let lines = reader.join().unwrap();
    let all = lines.join("\n");
    assert!(lines.len() > 50, "too few lines at trace: {all}");
    for secret in [
        SOURCE_TOKEN,
        HOOK_TOKEN,
        &signature,
        &source,
        &download_signature,
        &token,
    ] {
        let found: Vec<&String> = lines.iter().filter(|l| l.contains(secret)).collect();
        assert!(found.is_empty(), "`{secret}` was logged: {found:#?}");
    }
    // What stands in their place.
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    assert!(
        has(&format!("/v1/render/[redacted]/{transform}/[redacted]")),
        "no redacted render path: {all}"
    );
    let hook_shown = format!("http://127.0.0.1:{hook_port}/hook?[redacted]");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("a webhook attempt failed") && l.contains(&hook_shown)),
        "no redacted webhook line: {all}"
    );
    let source_shown = format!("http://{}/files/a.png?[redacted]", sources.addr);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("requesting source") && l.contains(&source_shown)),
        "no redacted source line: {all}"
    );
    assert!(has(download.path()), "no download request line: {all}");
}
