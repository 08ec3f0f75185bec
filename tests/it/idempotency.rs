//! `Idempotency-Key` on `POST /v1/edits` (docs/API.md), on both backends.

use serde_json::Value;

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    a_retried_post_with_the_same_key_replays_the_first_answer,
    the_same_key_with_another_body_is_refused_and_other_organizations_are_apart,
    concurrent_posts_with_one_key_create_one_edit,
    a_refused_request_is_replayed_as_refused_and_bad_keys_are_400,
);

/// POSTs `body` with `key` as `token`: status, `Idempotent-Replayed`, `Location`, body.
async fn post_with_key(
    app: &TestApp,
    token: &str,
    key: &str,
    body: &Value,
) -> (u16, Option<String>, Option<String>, Value) {
    let response = app
        .client
        .post(format!("{}/v1/edits", app.base))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (replayed, location) = (header("idempotent-replayed"), header("location"));
    let status = response.status().as_u16();
    (status, replayed, location, response.json().await.unwrap())
}

async fn edit_count(app: &TestApp) -> usize {
    let (_, page) = app.send(reqwest::Method::GET, "/v1/edits?limit=100").await;
    page["data"].as_array().unwrap().len()
}

async fn a_retried_post_with_the_same_key_replays_the_first_answer(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let body = edit(&src, &["image-to-webp"], None);
    let (status, replayed, location, first) =
        post_with_key(&app, &app.token, "order-42", &body).await;
    assert_eq!((status, replayed), (201, None), "{first}");
    let id = first["id"].as_str().unwrap();
    assert_eq!(
        location.as_deref(),
        Some(format!("/v1/edits/{id}").as_str())
    );
    let (status, replayed, location_again, again) =
        post_with_key(&app, &app.token, "order-42", &body).await;
    assert_eq!((status, replayed.as_deref()), (201, Some("true")));
    assert_eq!(location_again, location);
    assert_eq!(again, first, "the same answer, byte for byte");
    assert_eq!(edit_count(&app).await, 1);
    // Without a key, the same body is a new edit.
    app.create_edit(body).await;
    assert_eq!(edit_count(&app).await, 2);
}

async fn the_same_key_with_another_body_is_refused_and_other_organizations_are_apart(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let first = edit(&src, &["image-to-webp"], None);
    let second = edit(&src, &["resize-image"], None);
    assert_eq!(post_with_key(&app, &app.token, "k1", &first).await.0, 201);
    let (status, _, _, error) = post_with_key(&app, &app.token, "k1", &second).await;
    assert_eq!(status, 422, "{error}");
    assert_eq!(error["errors"][0]["code"], "idempotency_key_reused");
    let other = create_token_in(&app.database_url(), "globex").await;
    let (status, replayed, _, _) = post_with_key(&app, &other, "k1", &second).await;
    assert_eq!((status, replayed), (201, None), "keys are per organization");
}

async fn concurrent_posts_with_one_key_create_one_edit(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let body = edit(&src, &["image-to-webp"], None);
    let answers =
        futures::future::join_all((0..8).map(|_| post_with_key(&app, &app.token, "burst", &body)))
            .await;
    let mut ids = std::collections::HashSet::new();
    for (status, _, _, doc) in &answers {
        match status {
            201 => {
                ids.insert(doc["id"].as_str().unwrap().to_string());
            }
            409 => assert_eq!(doc["errors"][0]["code"], "idempotency_key_in_use", "{doc}"),
            other => panic!("{other}: {doc}"),
        }
    }
    assert_eq!(ids.len(), 1, "{answers:?}");
    assert_eq!(edit_count(&app).await, 1);
}

async fn a_refused_request_is_replayed_as_refused_and_bad_keys_are_400(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let body = edit("not a url", &["image-to-webp"], None);
    let (status, replayed, _, first) = post_with_key(&app, &app.token, "bad-body", &body).await;
    assert_eq!((status, replayed), (422, None), "{first}");
    let (status, replayed, _, again) = post_with_key(&app, &app.token, "bad-body", &body).await;
    assert_eq!(
        (status, replayed.as_deref(), again),
        (422, Some("true"), first)
    );
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let good = edit(&src, &["image-to-webp"], None);
    let long = "k".repeat(256);
    let (status, _, _, error) = post_with_key(&app, &app.token, &long, &good).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["errors"][0]["code"], "invalid_idempotency_key");
    assert_eq!(edit_count(&app).await, 0);
}
