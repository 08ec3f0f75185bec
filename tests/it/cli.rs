//! The command-line contract of decisions.md §1, pinned by running the built binary.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fixtures;
use crate::helpers::*;

const BIN: &str = env!("CARGO_BIN_EXE_mediaedit");

fn token_create(data_dir: &std::path::Path, org: &str) -> String {
    let out = Command::new(BIN)
        .args(["token", "create", "--data-dir"])
        .arg(data_dir)
        .args(["--org", org])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout
        .lines()
        .last()
        .expect("a token line")
        .trim()
        .to_string()
}

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_healthy(base: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(r) = reqwest::get(format!("{base}/healthz")).await {
            if r.status() == 200 {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server did not become healthy");
}

#[tokio::test]
async fn token_create_prints_a_token_and_serve_accepts_it() {
    let data = tempfile::TempDir::new().unwrap();
    let token = token_create(data.path(), "cli-org");
    assert!(token.len() >= 32, "{token}");
    let again = token_create(data.path(), "cli-org");
    assert_ne!(token, again, "each call makes a new token");

    // Only hashes are stored.
    let db = std::fs::read(data.path().join("mediaedit.db")).unwrap();
    assert!(!db.windows(token.len()).any(|w| w == token.as_bytes()));

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(BIN)
        .arg("serve")
        .env("MEDIAEDIT_LISTEN", format!("127.0.0.1:{port}"))
        .env("MEDIAEDIT_DATA_DIR", data.path())
        .env("MEDIAEDIT_ALLOW_PRIVATE_SOURCES", "true")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let server = Server(child);
    wait_healthy(&base).await;

    let fixtures_server = FixtureServer::start().await;
    let src = fixtures_server.add("a.png", fixtures::png(30, 20));
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{base}/v1/edits"))
        .bearer_auth(&token)
        .json(&edit(
            &src,
            &["resize-image"],
            Some(serde_json::json!({ "scale": 2 })),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let doc: Value = created.json().await.unwrap();
    assert_eq!(
        doc["relationships"]["organization"]["data"]["id"],
        "cli-org"
    );
    let id = doc["id"].as_str().unwrap();

    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let doc: Value = client
            .get(format!("{base}/v1/edits/{id}"))
            .bearer_auth(&again)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if doc["attributes"]["status"] == "done" {
            break doc;
        }
        assert_ne!(doc["attributes"]["status"], "failed", "{doc}");
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let url = done["attributes"]["downloadUrls"][0].as_str().unwrap();
    assert!(
        url.starts_with(&base),
        "public URL defaults to http://<listen>: {url}"
    );
    let bytes = reqwest::get(url).await.unwrap().bytes().await.unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (60, 40));

    // SIGTERM stops it cleanly.
    let pid = server.0.id();
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let mut server = server;
    let status = server.0.wait().unwrap();
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
    let log = log.join().unwrap().join("\n");
    assert!(!log.contains(&token), "tokens are never logged");
    assert!(!log.contains("signature="), "signed URLs are never logged");
}

#[test]
fn token_create_refuses_a_bad_org_id() {
    let data = tempfile::TempDir::new().unwrap();
    let out = Command::new(BIN)
        .args(["token", "create", "--data-dir"])
        .arg(data.path())
        .args(["--org", "no spaces/allowed"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("organization id"));
}
