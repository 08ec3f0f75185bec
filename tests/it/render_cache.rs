//! The render cache and the rest of docs/API.md's "Render" on both backends: a repeated
//! request served from the cache (the fixture server counts source fetches), identical
//! first requests computed once, eviction past `--render-cache-bytes`, the
//! `render-key` CLI, and an edit's ZIP archive checked byte for byte against its
//! download URLs.

use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::binary::BIN;
use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

on_both_backends!(
    a_repeated_render_is_served_from_the_cache_and_its_source_fetched_once,
    eight_identical_first_requests_fetch_the_source_once,
    past_its_bytes_the_cache_evicts_results_and_sources,
    the_render_key_cli_creates_lists_and_revokes,
    the_archive_holds_every_output_byte_for_byte,
);

async fn a_repeated_render_is_served_from_the_cache_and_its_source_fetched_once(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(300, 200)));
    let url = render_url(&app, &key, "w:50", &photo);
    let first = get(&app, &url, None).await.bytes().await.unwrap();
    assert_eq!(app.fixtures.hits(), 1);
    let again = get(&app, &url, None).await.bytes().await.unwrap();
    assert_eq!(first, again);
    // Another size of the same source: rendered anew from the cached source.
    let other = render_url(&app, &key, "w:70", &photo);
    let response = get(&app, &other, None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(app.fixtures.hits(), 1, "the source was fetched once");
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("mediaedit_renders_total{outcome=\"hit\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("mediaedit_renders_total{outcome=\"rendered\"} 2"),
        "{metrics}"
    );
}

async fn eight_identical_first_requests_fetch_the_source_once(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    app.fixtures.add("slow.jpg", fixtures::jpeg(320, 240));
    // Slow enough that all eight arrive while the first fetch is on its way.
    let source = b64(&app.fixtures.slow_url("slow.jpg", 700));
    let url = render_url(&app, &key, "w:40,h:40,fit:cover", &source);
    let requests = (0..8).map(|_| {
        let (client, url) = (app.client.clone(), url.clone());
        tokio::spawn(async move {
            let response = client.get(&url).send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.bytes().await.unwrap()
        })
    });
    let bodies = futures::future::join_all(requests).await;
    let first = bodies[0].as_ref().unwrap();
    for body in &bodies {
        assert_eq!(body.as_ref().unwrap(), first);
    }
    assert_eq!(app.fixtures.hits(), 1, "eight requests, one fetch");
    let image = image::load_from_memory(first).unwrap();
    assert_eq!((image.width(), image.height()), (40, 40));
}

async fn past_its_bytes_the_cache_evicts_results_and_sources(backend: Backend) {
    // Room for one source and its render, not for a second render besides.
    let photo = fixtures::jpeg(300, 200);
    let budget = photo.len() as u64 + 100;
    let app = spawn_app_on(backend, |c| c.render_cache_bytes = budget).await;
    let key = render_key(&app).await;
    let source = b64(&app.fixtures.add("photo.jpg", photo));
    let first = render_url(&app, &key, "w:200", &source);
    let response = get(&app, &first, None).await;
    assert_eq!(response.status(), 200);
    let result = response.bytes().await.unwrap().len() as u64;
    assert!(result > 100, "the render passes the room left: {result}");
    assert!(result <= budget, "the render alone fits: {result}");
    // The oldest entry (the source) went to make room for the render.
    let db = app.db().await;
    assert!(db.render_cache_bytes().await.unwrap() as u64 <= budget);
    let again = render_url(&app, &key, "w:210", &source);
    assert_eq!(get(&app, &again, None).await.status(), 200);
    assert_eq!(
        app.fixtures.hits(),
        2,
        "the evicted source was fetched again"
    );
    assert!(db.render_cache_bytes().await.unwrap() as u64 <= budget);
    // The first render was evicted too: asked again, it is made again, the same.
    let remade = get(&app, &first, None).await.bytes().await.unwrap();
    assert_eq!(remade.len() as u64, result);
    assert_eq!(app.fixtures.hits(), 3);
}

/// Runs the binary with `args` against the app's database; its standard output.
fn cli(app: &TestApp, args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .args(args)
        .arg("--database-url")
        .arg(app.database_url())
        .output()
        .unwrap()
}

async fn the_render_key_cli_creates_lists_and_revokes(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let created = cli(&app, &["render-key", "create", "--org", ORG]);
    assert!(created.status.success(), "{created:?}");
    let stdout = String::from_utf8(created.stdout).unwrap();
    let key = stdout.lines().last().unwrap().to_string();
    assert!(key.starts_with("rk_") && key.len() == 67, "{key}");
    let listed = cli(&app, &["render-key", "list", "--org", ORG]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(listed.starts_with(&key[..11]), "{listed}");
    assert!(!listed.contains(&key), "the key itself is never listed");

    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(64, 48)));
    let url = render_url(&app, &key, "w:32", &photo);
    assert_eq!(get(&app, &url, None).await.status(), 200);
    let revoked = cli(&app, &["render-key", "revoke", "--org", ORG, &key[..11]]);
    assert!(revoked.status.success(), "{revoked:?}");
    let again = cli(&app, &["render-key", "revoke", "--org", ORG, &key[..11]]);
    assert!(!again.status.success(), "a key is revoked once");
    // Refused within 5 s (each node reads the keys again that often).
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let status = get(&app, &url, None).await.status();
        if status == 403 {
            break;
        }
        assert!(Instant::now() < deadline, "still {status} after revoking");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn the_archive_holds_every_output_byte_for_byte(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let a = app.fixtures.add("a.png", fixtures::png(40, 30));
    let b = app.fixtures.add("b.jpg", fixtures::jpeg(50, 20));
    let body = serde_json::json!({
        "assets": [{"type": "image", "src": a}, {"type": "image", "src": b}],
        "commands": ["resize-image"],
        "options": {"scale": 0.5},
    });
    let doc = app.run_done(body).await;
    let id = doc["id"].as_str().unwrap();
    let reader = crate::archives::read_archive(&app, id).await;
    let urls = doc["attributes"]["downloadUrls"].as_array().unwrap();
    assert_eq!(reader.file().entries().len(), urls.len());
    for (i, url) in urls.iter().enumerate() {
        let download = app.client.get(url.as_str().unwrap()).send().await.unwrap();
        let disposition = download.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .to_string();
        let expected = download.bytes().await.unwrap();
        let entry = &reader.file().entries()[i];
        let name = entry.filename().as_str().unwrap().to_string();
        assert_eq!(disposition, format!("attachment; filename=\"{name}\""));
        assert_eq!(entry.compression(), async_zip::Compression::Stored);
        let mut bytes = Vec::new();
        let mut entry_reader = reader.reader_with_entry(i).await.unwrap();
        entry_reader.read_to_end_checked(&mut bytes).await.unwrap();
        assert_eq!(bytes, expected.to_vec(), "entry {name}");
    }
    // Without the token, or for an edit not done: the usual errors.
    let anonymous = app
        .client
        .get(format!("{}/v1/edits/{id}/archive", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let slow = app.fixtures.slow_url("a.png", 3000);
    let pending = app.create_edit(edit(&slow, &["resize-image"], None)).await;
    let (status, body) = app
        .send(
            reqwest::Method::GET,
            &format!("/v1/edits/{pending}/archive"),
        )
        .await;
    assert_eq!(
        (status, body["errors"][0]["code"].as_str()),
        (409, Some("edit_not_done"))
    );
}
