//! The command-line contract of docs/API.md, pinned by running the built binary.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::binary::{token_create, Server, BIN};
use crate::fixtures;
use crate::helpers::*;

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

    let mut server = Server::start(data.path(), &[], Stdio::piped()).await;
    let base = server.base.clone();
    let log = server.stderr_lines();

    let fixtures_server = FixtureServer::start().await;
    let src = fixtures_server.add("a.png", fixtures::png(30, 20));
    let body = edit(
        &src,
        &["resize-image"],
        Some(serde_json::json!({ "scale": 2 })),
    );
    let created = server.post_edit(&token, &body).await;
    assert_eq!(created.status(), 201);
    let doc: Value = created.json().await.unwrap();
    assert_eq!(
        doc["relationships"]["organization"]["data"]["id"],
        "cli-org"
    );
    let id = doc["id"].as_str().unwrap();

    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let doc = server.read_edit(&again, id).await;
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
    let status = server.signal_and_wait("-TERM");
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

#[test]
fn a_setting_that_would_break_the_service_is_refused_with_one_line_and_exit_2() {
    let data = tempfile::TempDir::new().unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = Command::new(BIN)
            .arg("serve")
            .arg("--data-dir")
            .arg(data.path())
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--lease-secs", "0"], &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--lease-secs"), "{stderr}");
    // The same through the environment, under the flag's own name.
    let (code, stderr) = run(&[], &[("MEDIAEDIT_WRITE_RATE_LIMIT_PER_SECOND", "NaN")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--write-rate-limit-per-second"), "{stderr}");
    let (code, stderr) = run(&[], &[("MEDIAEDIT_WORKERS", "0")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--workers"), "{stderr}");
}

#[tokio::test]
async fn webhook_secret_prints_the_same_secret_until_rotated() {
    let data = tempfile::TempDir::new().unwrap();
    let secret = |extra: &[&str]| {
        let dir = data.path().to_str().unwrap();
        let out = Command::new(BIN)
            .args(["webhook-secret", "--data-dir", dir, "--org", "hooks"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let first = secret(&[]);
    assert!(first.starts_with("whsec_"), "{first}");
    assert_eq!(secret(&[]), first, "made once, then read");
    let rotated = secret(&["--rotate"]);
    assert!(rotated.starts_with("whsec_") && rotated != first);
    assert_eq!(secret(&[]), rotated);
    // The rotated-out secret still signs for a day.
    let db = mediaedit::db::Db::open_sqlite(&data.path().join("mediaedit.db"))
        .await
        .unwrap();
    let secrets = db.webhook_secrets("hooks", "unused").await.unwrap();
    assert_eq!(secrets.previous.map(|(old, _)| old), Some(first));
}

/// Runs `mediaedit token …` on `data`: exit code, stdout, stderr.
fn token_command(data: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN)
        .arg("token")
        .args(args)
        .args(["--data-dir", data.to_str().unwrap()])
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

#[tokio::test]
async fn tokens_are_listed_by_prefix_and_a_revoked_one_is_refused_within_seconds() {
    let data = tempfile::TempDir::new().unwrap();
    let kept = token_create(data.path(), "listed");
    let revoked = token_create(data.path(), "listed");
    let (code, listing, _) = token_command(data.path(), &["list", "--org", "listed"]);
    assert_eq!(code, Some(0));
    let prefixes: Vec<&str> = listing
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(prefixes.len(), 2, "{listing}");
    for token in [&kept, &revoked] {
        assert!(prefixes.contains(&&token[..11]), "{listing}");
        assert!(
            !listing.contains(token.as_str()),
            "the list never shows a token"
        );
    }

    let server = Server::start(
        data.path(),
        &[("MEDIAEDIT_AUTH_CACHE_TTL_SECS", "2")],
        Stdio::null(),
    )
    .await;
    let read = |token: String| {
        let url = format!("{}/v1/edits/nope", server.base);
        async move {
            reqwest::Client::new()
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(read(revoked.clone()).await, 404, "valid before");
    let (code, _, said) = token_command(data.path(), &["revoke", &revoked[..11]]);
    assert_eq!(code, Some(0), "{said}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while read(revoked.clone()).await != 401 {
        assert!(Instant::now() < deadline, "the revoked token still works");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        read(kept.clone()).await,
        404,
        "the other token keeps working"
    );
    let (code, _, said) = token_command(data.path(), &["revoke", &revoked[..11]]);
    assert_eq!(code, Some(1), "an unknown prefix fails: {said}");
    let (_, listing, _) = token_command(data.path(), &["list", "--org", "listed"]);
    assert_eq!(listing.lines().count(), 1, "{listing}");
}
