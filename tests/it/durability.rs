//! Nothing is lost across restarts and crashes; stale workers cannot write.

use std::time::Duration;

use mediaedit::queue;
use serde_json::json;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    an_edit_queued_before_a_restart_is_done_after_it,
    an_edit_whose_worker_died_is_claimed_again_after_its_lease,
    claims_are_exclusive_and_fenced_on_the_attempt,
    concurrent_claimers_never_take_the_same_edit,
    an_edit_over_the_job_timeout_fails_with_job_timeout,
    a_stopping_node_hands_running_edits_back_after_its_grace,
    hand_backs_at_shutdown_spend_no_attempt,
);

async fn an_edit_queued_before_a_restart_is_done_after_it(backend: Backend) {
    let mut app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.jpg", fixtures::jpeg(100, 50));
    let id = app
        .create_edit(edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(doc["attributes"]["status"], "queued", "no worker ran it");

    app.restart_with(|_| {}).await;
    let doc = app.wait_finished(&id).await;
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
    let out = &app.download_all(&doc).await[0];
    assert_eq!(
        image::GenericImageView::dimensions(&fixtures::decode(out)),
        (50, 25)
    );
}

async fn an_edit_whose_worker_died_is_claimed_again_after_its_lease(backend: Backend) {
    let mut app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;

    // A "worker" claims it with a short lease and then vanishes.
    let queue = queue::for_db(&app.db().await);
    let claim = queue
        .claim(Duration::from_millis(500))
        .await
        .unwrap()
        .expect("claimable");
    assert_eq!(claim.job.id.as_str(), id);
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(doc["attributes"]["status"], "processing");
    assert!(doc["attributes"]["progress"].is_number());

    app.restart_with(|_| {}).await;
    let doc = app.wait_finished(&id).await;
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");

    // The vanished worker's claim is stale: none of its writes land.
    assert!(!queue
        .heartbeat(&claim.job, Duration::from_secs(30))
        .await
        .unwrap());
    assert!(!queue
        .fail(&claim.job, "internal_error", "late")
        .await
        .unwrap());
    assert!(!queue.complete(&claim.job, &[], false).await.unwrap());
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(doc["attributes"]["status"], "done");
    assert_eq!(
        doc["attributes"]["downloadUrls"].as_array().unwrap().len(),
        1
    );
}

async fn claims_are_exclusive_and_fenced_on_the_attempt(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let queue = queue::for_db(&app.db().await);

    let first = queue
        .claim(Duration::from_millis(200))
        .await
        .unwrap()
        .expect("claimable");
    assert_eq!((first.job.id.as_str(), first.job.attempt), (id.as_str(), 1));
    assert!(
        queue
            .claim(Duration::from_secs(30))
            .await
            .unwrap()
            .is_none(),
        "leased edits are not claimable"
    );

    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = queue
        .claim(Duration::from_secs(30))
        .await
        .unwrap()
        .expect("expired lease is claimable");
    assert_eq!(second.job.attempt, 2);
    assert!(
        !queue
            .complete(
                &first.job,
                &[serde_json::from_str("\"x/0-0.png\"").unwrap()],
                false
            )
            .await
            .unwrap(),
        "stale claim cannot complete"
    );
    assert!(queue.set_progress(&second.job, 0.5, None).await.unwrap());
    assert!(queue.set_progress(&second.job, 0.2, None).await.unwrap());
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(
        doc["attributes"]["progress"], 0.5,
        "progress never goes back"
    );
    assert!(queue
        .fail(&second.job, "invalid_media", "Bad.")
        .await
        .unwrap());
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(
        doc["attributes"]["error"],
        json!({ "code": "invalid_media", "detail": "Bad." })
    );
}

async fn concurrent_claimers_never_take_the_same_edit(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let mut ids = Vec::new();
    for _ in 0..24 {
        ids.push(app.create_edit(edit(&src, &["image-to-webp"], None)).await);
    }
    // Six claimers race, each on its own connections, until the queue is empty.
    let mut claimers = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let queue = queue::for_db(&app.db().await);
        claimers.spawn(async move {
            let mut claimed = Vec::new();
            while let Some(claim) = queue.claim(Duration::from_secs(30)).await.unwrap() {
                claimed.push(claim.job.id);
            }
            claimed
        });
    }
    let mut claimed: Vec<String> = claimers
        .join_all()
        .await
        .into_iter()
        .flatten()
        .map(String::from)
        .collect();
    claimed.sort();
    ids.sort();
    assert_eq!(claimed, ids, "every edit claimed exactly once");
}

async fn an_edit_over_the_job_timeout_fails_with_job_timeout(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.job_timeout_secs = 1).await;
    app.fixtures.add("a.png", fixtures::png(20, 20));
    let src = app.fixtures.slow_url("a.png", 3000);
    let started = std::time::Instant::now();
    let error = app.run_failed(edit(&src, &["image-to-webp"], None)).await;
    assert_eq!(error["code"], "job_timeout", "{error}");
    assert!(started.elapsed() < Duration::from_millis(2900));
}

async fn a_stopping_node_hands_running_edits_back_after_its_grace(backend: Backend) {
    let mut app = spawn_app_on(backend, |c| c.shutdown_grace_secs = 0).await;
    app.fixtures.add("a.png", fixtures::png(20, 20));
    let src = app.fixtures.slow_url("a.png", 2000);
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
        if doc["attributes"]["status"] == "processing" {
            break;
        }
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stopping = std::time::Instant::now();
    app.stop().await;
    assert!(
        stopping.elapsed() < Duration::from_millis(1500),
        "did not wait for the slow source"
    );

    // Handed back: queued and claimable at once, not after the lease.
    let row = app.edit_row(&id).await;
    assert_eq!(row.status, mediaedit::db::EditStatus::Queued);

    app.restart_with(|_| {}).await;
    let doc = app.wait_finished(&id).await;
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
}

async fn hand_backs_at_shutdown_spend_no_attempt(backend: Backend) {
    let mut app = spawn_app_on(backend, |c| {
        c.workers = 0;
        c.max_attempts = 2;
    })
    .await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let queue = queue::for_db(&app.db().await);
    // Four rolling restarts, twice --max-attempts: each hands the edit back.
    let mut handed_back: Option<queue::JobRef> = None;
    for attempt in 1..=4 {
        let claim = queue
            .claim(Duration::from_secs(30))
            .await
            .unwrap()
            .expect("claimable at once after a hand-back");
        assert_eq!((claim.job.attempt, claim.tries), (attempt, 1));
        if let Some(old) = &handed_back {
            let stale = queue.complete(old, &[], false).await.unwrap();
            assert!(!stale, "an earlier claim is fenced out");
        }
        assert!(queue.release(&claim.job).await.unwrap());
        handed_back = Some(claim.job);
    }
    app.restart_with(|c| c.workers = 2).await;
    let doc = app.wait_finished(&id).await;
    assert_eq!(doc["attributes"]["status"], "done", "{doc}");
}
