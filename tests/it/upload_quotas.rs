//! Upload quotas per organization and the free-disk floor (docs/API.md, Uploads),
//! answered with their codes, on both backends.

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::upload_storage::{code, create_tus, created_tus, tus, upload_objects};

on_both_backends!(upload_quotas_and_the_free_disk_floor_are_answered_with_their_codes);

async fn upload_quotas_and_the_free_disk_floor_are_answered_with_their_codes(backend: Backend) {
    let app = spawn_app_on(backend, |c| {
        c.retention.max_upload_bytes_per_org = 1000;
        c.retention.max_open_uploads_per_org = 2;
    })
    .await;
    let first = created_tus(&app, 600).await;
    let over = create_tus(&app, 600).await;
    assert_eq!(over.status(), 413);
    assert_eq!(code(&over.json().await.unwrap()), "upload_quota_exceeded");
    created_tus(&app, 300).await;
    let third = create_tus(&app, 10).await;
    assert_eq!(third.status(), 429);
    assert!(third.headers().contains_key("retry-after"));
    assert_eq!(code(&third.json().await.unwrap()), "too_many_open_uploads");

    // Another organization has quotas of its own.
    let other = create_token_in(&app.database_url(), "another-org").await;
    let theirs = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&other)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "900")
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 201);

    // Deleting one makes room; a direct upload of unknown length is held to what is left.
    let deleted = tus(&app, reqwest::Method::DELETE, &first)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let chunks = (0..2).map(|_| Ok::<_, std::io::Error>(vec![5u8; 400]));
    let chunked = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(chunked.status(), 413);
    assert_eq!(
        code(&chunked.json().await.unwrap()),
        "upload_quota_exceeded"
    );
    let fits = app
        .client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .body(vec![5u8; 700])
        .send()
        .await
        .unwrap();
    assert_eq!(fits.status(), 201);

    let full = spawn_app_on(backend, |c| c.min_free_disk_bytes = u64::MAX).await;
    let refused = full
        .client
        .post(format!("{}/v1/uploads", full.base))
        .bearer_auth(&full.token)
        .body(fixtures::png(8, 8))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 507);
    assert_eq!(code(&refused.json().await.unwrap()), "insufficient_storage");
    let photo = full.fixtures.add("a.png", fixtures::png(8, 8));
    let dry_run = full
        .client
        .post(format!("{}/v1/edits?dryRun=true", full.base))
        .bearer_auth(&full.token)
        .json(&edit(&photo, &["resize-image"], None))
        .send()
        .await
        .unwrap();
    assert_eq!(dry_run.status(), 507);
    assert_eq!(code(&dry_run.json().await.unwrap()), "insufficient_storage");
    assert!(upload_objects(&full).await.is_empty());
}
