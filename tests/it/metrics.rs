//! `GET /metrics` (docs/API.md): Prometheus text, no token, moving with the work;
//! read with Prometheus's own Python parser. On both backends.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    metrics_parse_and_move_with_the_work,
    the_database_is_read_at_most_once_per_five_seconds
);

/// `/metrics` parsed by `prometheus_client.parser`: sample name with its labels
/// (sorted, `name{k=v,…}`) → value.
async fn scrape(app: &TestApp) -> HashMap<String, f64> {
    let response = reqwest::get(format!("{}/metrics", app.base)).await.unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let script = r#"
import sys
from prometheus_client.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        print(f"{s.name}{{{labels}}}\t{s.value}")
"#;
    let mut child = std::process::Command::new(test_python())
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused it:\n{text}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (name, value) = line.split_once('\t').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

/// How long `/metrics` reuses the database's figures, and a margin.
const CENSUS_TTL: Duration = Duration::from_millis(5200);

fn value(metrics: &HashMap<String, f64>, key: &str) -> f64 {
    metrics.get(key).copied().unwrap_or(0.0)
}

async fn metrics_parse_and_move_with_the_work(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let before = scrape(&app).await;
    let census_read = std::time::Instant::now();
    let src = app.fixtures.add("a.png", fixtures::png(64, 48));
    app.run_done(edit(&src, &["image-to-webp"], None)).await;
    // The database's figures are cached for 5 s.
    tokio::time::sleep(CENSUS_TTL.saturating_sub(census_read.elapsed())).await;
    let after = scrape(&app).await;
    let moved = |key: &str| value(&after, key) - value(&before, key);
    assert_eq!(
        moved("mediaedit_http_requests_total{method=POST,route=/v1/edits,status=201}"),
        1.0,
        "{after:?}"
    );
    assert!(
        moved("mediaedit_http_requests_total{method=GET,route=/v1/edits/{id},status=200}") >= 1.0
    );
    assert_eq!(
        moved("mediaedit_edits_ended_total{command=image-to-webp,status=done}"),
        1.0
    );
    assert_eq!(
        moved("mediaedit_edit_duration_seconds_count{command=image-to-webp}"),
        1.0
    );
    assert_eq!(
        moved("mediaedit_command_duration_seconds_count{command=image-to-webp}"),
        1.0
    );
    assert!(moved("mediaedit_fetched_bytes_total{}") > 0.0);
    assert!(moved("mediaedit_stored_bytes_total{}") > 0.0);
    assert_eq!(value(&after, "mediaedit_edits{status=done}"), 1.0);
    assert_eq!(value(&after, "mediaedit_queue_depth{}"), 0.0);

    // A queued edit shows in the queue's depth and age.
    let mut app = app;
    app.restart_with(|c| c.workers = 0).await;
    app.create_edit(edit(&src, &["resize-image"], None)).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let queued = scrape(&app).await;
    assert_eq!(value(&queued, "mediaedit_queue_depth{}"), 1.0, "{queued:?}");
    assert!(value(&queued, "mediaedit_queue_oldest_age_seconds{}") >= 1.0);
}

async fn the_database_is_read_at_most_once_per_five_seconds(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let url = format!("{}/metrics", app.base);
    // The database is read during the first scrape, so after this instant.
    let read_after = Instant::now();
    let queued = |text: &str| text.contains("mediaedit_edits{status=\"queued\"} 1");
    assert!(!queued(&metrics_text(&url).await));
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    app.create_edit(edit(&src, &["resize-image"], None)).await;
    let mut checked = 0;
    loop {
        let sent = read_after.elapsed();
        if sent >= Duration::from_millis(4800) {
            break;
        }
        let text = metrics_text(&url).await;
        assert!(
            !queued(&text),
            "the database was read again {sent:?} after the first read"
        );
        checked += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(checked >= 5, "only {checked} scrapes within the 5 s");
    tokio::time::sleep(CENSUS_TTL.saturating_sub(read_after.elapsed())).await;
    let later = scrape(&app).await;
    assert_eq!(value(&later, "mediaedit_edits{status=queued}"), 1.0);
    assert_eq!(value(&later, "mediaedit_queue_depth{}"), 1.0);
}

/// The series of a `/metrics` page: its sample lines without their values.
fn series(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').map(|(name, _)| name.to_string()))
        .collect()
}

fn random_letters(n: usize) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string().to_uppercase();
    id.chars()
        .filter(|c| c.is_ascii_alphabetic())
        .cycle()
        .take(n)
        .collect()
}

/// Requests with a made-up method on a real route and on made-up paths, and known
/// methods on made-up paths.
async fn strangers(app: &TestApp, n: usize) {
    let client = reqwest::Client::new();
    for i in 0..n {
        let method =
            reqwest::Method::from_bytes(format!("QZ{}", random_letters(20 + i % 200)).as_bytes())
                .unwrap();
        let path = format!("/{}/{}", random_letters(12), uuid::Uuid::new_v4());
        for (method, path) in [
            (method.clone(), "/healthz".to_string()),
            (method, path.clone()),
            (reqwest::Method::GET, path.clone()),
            (reqwest::Method::POST, path),
        ] {
            let response = client
                .request(method, format!("{}{path}", app.base))
                .send()
                .await
                .unwrap();
            assert!(response.status().is_client_error());
        }
    }
}

async fn metrics_text(url: &str) -> String {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test]
async fn made_up_methods_and_paths_add_no_series() {
    let app = spawn_app().await;
    let url = format!("{}/metrics", app.base);
    strangers(&app, 5).await;
    // A scrape is counted once answered: the second one shows the first.
    metrics_text(&url).await;
    let before = metrics_text(&url).await;
    assert!(
        before.contains(r#"method="other",route="unmatched",status="404""#),
        "{before}"
    );
    assert!(
        before.contains(r#"method="other",route="/healthz",status="405""#),
        "{before}"
    );
    strangers(&app, 300).await;
    let after = metrics_text(&url).await;
    assert_eq!(series(&before), series(&after), "series were added");
    // Counters grow by a few digits; nothing else grows.
    assert!(
        after.len() < before.len() + 64,
        "{} -> {} bytes",
        before.len(),
        after.len()
    );
    assert!(!after.contains("QZ"), "a method name reached /metrics");
}

#[tokio::test]
async fn metrics_listen_serves_metrics_on_its_own_address_only() {
    let app =
        spawn_app_with(|c| c.front_door.metrics_listen = Some("127.0.0.1:0".parse().unwrap()))
            .await;
    let apart = app
        .app
        .as_ref()
        .unwrap()
        .metrics_addr
        .expect("its own address");
    assert_ne!(apart.to_string(), app.base.trim_start_matches("http://"));
    let text = metrics_text(&format!("http://{apart}/metrics")).await;
    assert!(text.contains("mediaedit_http_requests"), "{text}");
    let api = reqwest::get(format!("{}/metrics", app.base)).await.unwrap();
    assert_eq!(api.status(), 404, "the API's address still serves /metrics");
    // The metrics address serves nothing else.
    let other = reqwest::get(format!("http://{apart}/healthz"))
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
    let edits = reqwest::get(format!("http://{apart}/v1/edits"))
        .await
        .unwrap();
    assert_eq!(edits.status(), 404);
    // Requests to the API are counted there.
    let again = metrics_text(&format!("http://{apart}/metrics")).await;
    assert!(
        again.contains(r#"method="GET",route="unmatched",status="404""#),
        "{again}"
    );
}
