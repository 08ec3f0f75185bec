//! The memory of in-process steps (docs/API.md, "Limits"): no option value raises the
//! service's peak memory past `--max-step-memory-bytes` plus 64 MiB, a step that would
//! need more fails with `too_much_work` before it allocates, and large steps together
//! wait for room in `--memory-budget-bytes`. Measured as the kernel counts it: the
//! running binary's `VmHWM`.

use std::process::Stdio;

use serde_json::{json, Value};

use crate::binary::{token_create, Server};
use crate::fixture_server::FixtureServer;
use crate::fixtures;

const MIB: u64 = 1 << 20;
const STEP_LIMIT: u64 = 192 * MIB;
const NODE_BUDGET: u64 = 256 * MIB;

/// The peak resident memory of `pid` so far, in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// Asserts `pid`'s peak memory is at most `limit` over `baseline` after `what`.
fn assert_peak_grew_at_most(pid: u32, baseline: u64, limit: u64, what: &str) {
    let grew = peak_memory(pid).saturating_sub(baseline);
    eprintln!("{what}: the peak grew {} MiB", grew / MIB);
    assert!(
        grew <= limit,
        "{what} raised the peak by {} MiB (from {} MiB), more than {} MiB",
        grew / MIB,
        baseline / MIB,
        limit / MIB
    );
}

/// Runs `body` to its end as `token`; the finished document.
async fn finish(server: &Server, token: &str, body: Value) -> Value {
    let response = server.post_edit(token, &body).await;
    assert_eq!(response.status(), 201, "{body}");
    let id = response.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    for _ in 0..1200 {
        let doc = server.read_edit(token, &id).await;
        if matches!(
            doc["attributes"]["status"].as_str(),
            Some("done" | "failed")
        ) {
            return doc["attributes"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("edit {id} did not finish");
}

fn edit(src: &str, commands: &[&str], options: Value) -> Value {
    crate::helpers::edit(src, commands, Some(options))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_option_value_takes_more_memory_than_one_step_may_and_steps_together_share_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_create(dir.path(), "acme");
    let fixtures = FixtureServer::start().await;
    let env = [
        ("MEDIAEDIT_MAX_STEP_MEMORY_BYTES", STEP_LIMIT.to_string()),
        ("MEDIAEDIT_MEMORY_BUDGET_BYTES", NODE_BUDGET.to_string()),
        ("MEDIAEDIT_WORKERS", "4".to_string()),
        ("MEDIAEDIT_MAX_RUNNING_PER_ORG", "4".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = Server::start(dir.path(), &env, Stdio::null()).await;
    let pid = server.child.id();
    // Warm: the runtime, the allocator and the codecs have what they keep.
    let small = fixtures.add("small.png", fixtures::png(200, 150));
    let warm = finish(
        &server,
        &token,
        edit(&small, &["text"], json!({"text": "hi"})),
    )
    .await;
    assert_eq!(warm["status"], "done", "{warm}");
    let baseline = peak_memory(pid);

    // `text` at its largest: the biggest font, the longest text, on a large picture.
    let big = fixtures.add("big.png", fixtures::png(3600, 2700));
    let longest = "M".repeat(200);
    let cases = [
        json!({"text": "MM", "fontSize": 2048}),
        json!({"text": longest, "fontSize": 2048}),
        json!({"text": "MM\nMM\nMM", "fontSize": 2048, "gravity": "center"}),
    ];
    for options in cases {
        let doc = finish(&server, &token, edit(&big, &["text"], options.clone())).await;
        match doc["status"].as_str() {
            Some("done") => {}
            _ => assert_eq!(doc["error"]["code"], "too_much_work", "{options}: {doc}"),
        }
    }
    assert_peak_grew_at_most(pid, baseline, STEP_LIMIT + 64 * MIB, "text at its largest");

    // A picture whose decoding alone is past one step's limit: refused before it is.
    let huge = fixtures.add("huge.png", fixtures::png(5000, 4000));
    let doc = finish(
        &server,
        &token,
        edit(&huge, &["rotate-image"], json!({"angle": 90})),
    )
    .await;
    assert_eq!(doc["status"], "failed", "{doc}");
    assert_eq!(doc["error"]["code"], "too_much_work", "{doc}");
    assert!(
        doc["error"]["detail"]
            .as_str()
            .unwrap()
            .contains("limit of 192 MiB for one step"),
        "{doc}"
    );

    // Four large steps at once: each fits one step, not all four the node's budget.
    let photos: Vec<String> = (0..4)
        .map(|i| fixtures.add(&format!("p{i}.png"), fixtures::png(3000 + i, 2500)))
        .collect();
    let edits = photos.iter().map(|src| {
        let body = edit(src, &["rotate-image"], json!({"angle": 90}));
        finish(&server, &token, body)
    });
    for doc in futures::future::join_all(edits).await {
        assert_eq!(doc["status"], "done", "{doc}");
    }
    assert_peak_grew_at_most(pid, baseline, NODE_BUDGET + 64 * MIB, "four large steps");
}
