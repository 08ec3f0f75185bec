//! Nothing is lost across restarts and crashes; stale workers cannot write.

use std::time::Duration;

use mediaedit::db::Db;
use mediaedit::queue::{JobQueue, SqliteQueue};
use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn an_edit_queued_before_a_restart_is_done_after_it() {
    let mut app = spawn_app_with(|c| c.workers = 0).await;
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

#[tokio::test]
async fn an_edit_whose_worker_died_is_claimed_again_after_its_lease() {
    let mut app = spawn_app_with(|c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;

    // A "worker" claims it with a short lease and then vanishes.
    let db = Db::open_sqlite(&app.data_dir.path().join("mediaedit.db"))
        .await
        .unwrap();
    let queue = SqliteQueue::new(&db);
    let claim = queue
        .claim(Duration::from_millis(500))
        .await
        .unwrap()
        .expect("claimable");
    assert_eq!(claim.job.id, id);
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
    assert!(!queue.complete(&claim.job, &[]).await.unwrap());
    let doc: serde_json::Value = app.get_edit(&id).await.json().await.unwrap();
    assert_eq!(doc["attributes"]["status"], "done");
    assert_eq!(
        doc["attributes"]["downloadUrls"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn claims_are_exclusive_and_fenced_on_the_attempt() {
    let app = spawn_app_with(|c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(20, 20));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let db = Db::open_sqlite(&app.data_dir.path().join("mediaedit.db"))
        .await
        .unwrap();
    let queue = SqliteQueue::new(&db);

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
        !queue.complete(&first.job, &["x".into()]).await.unwrap(),
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
