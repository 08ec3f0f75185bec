//! `GET /metrics` (decisions.md §10): Prometheus text, no token, moving with the work;
//! read with Prometheus's own Python parser. On both backends.

use std::collections::HashMap;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(metrics_parse_and_move_with_the_work);

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

fn value(metrics: &HashMap<String, f64>, key: &str) -> f64 {
    metrics.get(key).copied().unwrap_or(0.0)
}

async fn metrics_parse_and_move_with_the_work(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let before = scrape(&app).await;
    let src = app.fixtures.add("a.png", fixtures::png(64, 48));
    app.run_done(edit(&src, &["image-to-webp"], None)).await;
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
