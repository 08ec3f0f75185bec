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
}

mod cluster {
    #[tokio::test]
    async fn another_organizations_backlog_leaves_a_worker_for_a_normal_edit() {
        super::another_organizations_backlog_leaves_a_worker(crate::backends::Backend::Cluster)
            .await
    }
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
    while app
        .db()
        .await
        .get_edit(ORG, &backlog[0], 0)
        .await
        .unwrap()
        .unwrap()
        .status
        != mediaedit::db::EditStatus::Processing
    {
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
        let row = app.db().await.get_edit(ORG, id, 0).await.unwrap().unwrap();
        fetching += usize::from(row.status == mediaedit::db::EditStatus::Processing);
    }
    assert!(fetching <= 3, "{fetching} of the backlog claimed at once");
}
