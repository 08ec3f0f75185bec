//! Fair claims: one organization's backlog never holds every slot.

use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

mod embedded {
    #[tokio::test]
    async fn another_organizations_backlog_leaves_a_worker_for_a_normal_edit() {
        super::another_organizations_backlog_leaves_a_worker(crate::backends::Backend::Embedded)
            .await
    }

    #[tokio::test]
    async fn an_edit_waiting_for_its_organizations_share_starts_when_one_ends() {
        super::waiting_for_the_share_ends_with_an_edit(crate::backends::Backend::Embedded).await
    }
}

mod cluster {
    #[tokio::test]
    async fn another_organizations_backlog_leaves_a_worker_for_a_normal_edit() {
        super::another_organizations_backlog_leaves_a_worker(crate::backends::Backend::Cluster)
            .await
    }

    #[tokio::test]
    async fn an_edit_waiting_for_its_organizations_share_starts_when_one_ends() {
        super::waiting_for_the_share_ends_with_an_edit(crate::backends::Backend::Cluster).await
    }
}

async fn waiting_for_the_share_ends_with_an_edit(backend: Backend) {
    // Three claims a node, one an organization; the queue is polled once a minute, so
    // only the end of an edit can start the next one in time.
    let app = spawn_app_on(backend, |c| {
        c.workers = 2;
        c.fetch_concurrency = 1;
        c.poll_ms = 60_000;
    })
    .await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let started = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(app.create_edit(edit(&src, &["image-to-webp"], None)).await);
    }
    for id in &ids {
        let doc = app.wait_finished(id).await;
        assert_eq!(doc["attributes"]["status"], "done", "{doc}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

async fn another_organizations_backlog_leaves_a_worker(backend: Backend) {
    // Two CPU slots, so at most one of each class runs a given organization's edits
    // (the default), and a few fetch slots, so the backlog could fill them.
    let app = spawn_app_on(backend, |c| {
        c.workers = 2;
        c.fetch_concurrency = 4;
    })
    .await;
    app.fixtures.add("a.png", fixtures::png(20, 20));
    let slow = app.fixtures.slow_url("a.png", 3000);
    let mut backlog = Vec::new();
    for _ in 0..6 {
        backlog.push(app.create_edit(edit(&slow, &["image-to-webp"], None)).await);
    }
    // The flooding organization is running one of its edits by now.
    let deadline = Instant::now() + Duration::from_secs(10);
    while app.edit_row(&backlog[0]).await.status != mediaedit::db::EditStatus::Processing {
        assert!(Instant::now() < deadline, "the backlog never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let url = app.database_url();
    let other = create_token_in(&url, "other-org").await;
    let src = app.fixtures.add("b.png", fixtures::png(30, 30));
    let started = Instant::now();
    let created = app
        .post_edit_as(&other, edit(&src, &["image-to-webp"], None))
        .await;
    assert_eq!(created.status(), 201);
    let id = created.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    loop {
        let doc: serde_json::Value = app.get_edit_as(&other, &id).await.json().await.unwrap();
        if doc["attributes"]["status"] == "done" {
            break;
        }
        assert_ne!(doc["attributes"]["status"], "failed", "{doc}");
        // Behind the backlog it would wait for a 3 s source at least.
        assert!(started.elapsed() < Duration::from_millis(2500), "{doc}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // The backlog holds at most half of the fetch slots: the rest wait their turn.
    let mut fetching = 0;
    for id in &backlog {
        let row = app.edit_row(id).await;
        fetching += usize::from(row.status == mediaedit::db::EditStatus::Processing);
    }
    assert!(fetching <= 3, "{fetching} of the backlog claimed at once");
}
