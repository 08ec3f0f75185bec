//! Renders are requests like any other (docs/API.md, "Render"): they count among their
//! organization's requests in flight, end at `--render-timeout-secs` with `504
//! render_timeout`, and stop when their client has gone — while another organization
//! and `/healthz` answer at once.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::backends::Backend;
use crate::binary::{Server, BIN};
use crate::clips;
use crate::helpers::*;
use crate::render::{b64, render_key};

on_both_backends!(renders_of_a_dripping_source_keep_to_their_share_and_time_out);

async fn renders_of_a_dripping_source_keep_to_their_share_and_time_out(backend: Backend) {
    let app = spawn_app_on(backend, |c| {
        c.front_door.max_requests_per_org = 4;
        c.memory.render_timeout_secs = 2;
    })
    .await;
    let key = render_key(&app).await;
    let drip = b64(&app.fixtures.drip_url());
    let started = Instant::now();
    let renders: Vec<_> = (0..10)
        .map(|i| {
            let transform = format!("w:{}", 10 + i);
            let signature = mediaedit::render::keys::sign(&key, &format!("{transform}/{drip}"));
            let url = format!("{}/v1/render/{signature}/{transform}/{drip}", app.base);
            tokio::spawn(async move {
                let response = reqwest::get(url).await.unwrap();
                let status = response.status().as_u16();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                (status, body, started.elapsed())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another organization, and the health check, while the renders hold their share.
    let other = create_token_in(&app.database_url(), "other-org").await;
    let asked = Instant::now();
    let presets = app
        .client
        .get(format!("{}/v1/presets", app.base))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(presets.status(), 200);
    let health = app
        .client
        .get(format!("{}/healthz", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );

    let mut answers = Vec::new();
    for render in renders {
        answers.push(render.await.unwrap());
    }
    let refused: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 429).collect();
    let timed_out: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 504).collect();
    assert_eq!(refused.len(), 6, "{answers:?}");
    assert_eq!(timed_out.len(), 4, "{answers:?}");
    for (_, body, _) in &refused {
        assert_eq!(body["errors"][0]["code"], "too_many_requests", "{body}");
    }
    for (_, body, took) in &timed_out {
        assert_eq!(body["errors"][0]["code"], "render_timeout", "{body}");
        assert!(
            *took >= Duration::from_secs(2) && *took < Duration::from_secs(6),
            "{took:?}"
        );
    }
}

/// CPU seconds `pid` has used, user and system, from `/proc/<pid>/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command's name in parentheses, which may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // Linux counts in USER_HZ, 100 a second on every platform it runs on.
    ticks / 100.0
}

#[tokio::test]
async fn a_render_whose_client_has_gone_stops_taking_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = crate::fixture_server::FixtureServer::start().await;
    // 100 frames of 640×480 made into a 1000-wide AVIF sequence: many CPU-seconds.
    let gif = clips::lavfi_gif("testsrc2=size=640x480:rate=10:duration=10", "long.gif");
    let source = b64(&fixtures.add("long.gif", gif));
    let server = Server::start(dir.path(), &[], std::process::Stdio::null()).await;
    let created = std::process::Command::new(BIN)
        .args(["render-key", "create", "--org", "acme", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let key = String::from_utf8(created.stdout).unwrap();
    let key = key.lines().last().unwrap().trim().to_string();
    let transform = "w:1000,f:avif";
    let signature = mediaedit::render::keys::sign(&key, &format!("{transform}/{source}"));
    let url = format!("{}/v1/render/{signature}/{transform}/{source}", server.base);
    let pid = server.child.id();

    let client = tokio::spawn(async move { reqwest::get(url).await.map(|r| r.status()) });
    // Working: the server takes CPU for the render.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let before = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!client.is_finished(), "the render is long enough to leave");
    let working = cpu_seconds(pid) - before;
    // (On a loaded machine the render may get a fraction of a core.)
    assert!(
        working > 0.1,
        "{working} CPU-seconds a second while rendering"
    );
    client.abort();
    let _ = client.await;
    // The next frame's checkpoint stops it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after_leaving = cpu_seconds(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let spent = cpu_seconds(pid) - after_leaving;
    assert!(
        spent < 0.15,
        "{spent} CPU-seconds in 2 s after the client left ({working} a second before)"
    );
}
