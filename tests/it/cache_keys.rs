//! What the caches may answer with (docs/SECURITY.md, "Tenancy"), on both backends:
//! nothing cached crosses organizations (a render of a URL, or the source fetched for
//! it, never answers another organization's request), every fetched input of an edit
//! is keyed by its bytes (an overlay changed behind its URL is used, not the old one),
//! and a deleted upload is rendered no more, through render URLs made before.

use futures::TryStreamExt;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{json, Value};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_key_of, render_url};
use crate::upload_storage::{storage_of, tus};

on_both_backends!(
    another_organization_fetches_a_url_itself_and_fails_once_the_origin_removed_it,
    an_overlay_changed_behind_its_url_is_a_new_result_with_the_new_pixels,
    a_deleted_or_expired_upload_is_rendered_no_more_through_its_old_urls,
);

/// The status and error code of an answer that must be an error.
async fn error_of(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or_else(|e| {
        panic!("answered {status} with no error document: {e}");
    });
    let code = body["errors"][0]["code"].as_str().unwrap_or_default();
    (status, code.to_string())
}

/// The size of the picture `url` renders (which it must).
async fn size_at(app: &TestApp, url: &str) -> (u32, u32) {
    let response = get(app, url, None).await;
    assert_eq!(response.status(), 200, "{url}");
    let bytes = response.bytes().await.unwrap();
    let picture = image::load_from_memory(&bytes).unwrap();
    (picture.width(), picture.height())
}

async fn another_organization_fetches_a_url_itself_and_fails_once_the_origin_removed_it(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    let ours = render_key(&app).await;
    let theirs = render_key_of(&app, "another-org").await;
    let secret = b64(&app.fixtures.add("secret.png", fixtures::png(300, 200)));
    let ours_at = |transform| render_url(&app, &ours, transform, &secret);
    let theirs_at = |transform| render_url(&app, &theirs, transform, &secret);
    assert_eq!(size_at(&app, &ours_at("w:50")).await, (50, 33));
    assert_eq!(size_at(&app, &ours_at("w:60")).await, (60, 40));
    assert_eq!(app.fixtures.hits(), 1, "one fetch for the organization");

    // Gone at its origin: the organization that fetched it keeps its own copy...
    app.fixtures.remove("secret.png");
    assert_eq!(size_at(&app, &ours_at("w:70")).await, (70, 47));
    assert_eq!(app.fixtures.hits(), 1);
    // ...but another organization fetches it itself, and is told it is gone: for
    // another transform, and for the very transform rendered above.
    for transform in ["w:80", "w:50"] {
        let response = get(&app, &theirs_at(transform), None).await;
        assert_eq!(
            error_of(response).await,
            (422, "source_http_error".into()),
            "{transform}"
        );
    }
    assert_eq!(
        app.fixtures.hits(),
        3,
        "each of its requests went to the origin"
    );

    // Another file at the URL now: theirs is the new one, ours still our render.
    app.fixtures.add("secret.png", fixtures::png(100, 400));
    assert_eq!(size_at(&app, &theirs_at("w:50")).await, (50, 200));
    assert_eq!(size_at(&app, &ours_at("w:50")).await, (50, 33));
}

fn solid_png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let picture = RgbImage::from_pixel(w, h, Rgb(rgb));
    fixtures::encode(DynamicImage::ImageRgb8(picture), ImageFormat::Png)
}

async fn an_overlay_changed_behind_its_url_is_a_new_result_with_the_new_pixels(backend: Backend) {
    const RED: [u8; 3] = [255, 0, 0];
    const BLUE: [u8; 3] = [0, 0, 255];
    const GREY: [u8; 3] = [128, 128, 128];
    let app = spawn_app_on(backend, |_| {}).await;
    let base = app.fixtures.add("base.png", solid_png(200, 100, GREY));
    let logo = app.fixtures.add("logo.png", solid_png(40, 20, RED));
    let body = |overlay: &str| {
        let options = json!({"overlay": overlay, "gravity": "northwest", "margin": 10,
                             "overlayWidth": 0.2});
        edit(&base, &["watermark"], Some(options))
    };
    // The logo's colour at (15, 15), inside the 40 × 20 logo 10 px from the corner,
    // and whether the edit came from the result cache.
    let run = |overlay: String| {
        let app = &app;
        let body = body(&overlay);
        async move {
            let doc = app.run_done(body).await;
            let out = app.download_all(&doc).await.remove(0);
            let rgb = fixtures::decode(&out).to_rgb8();
            (rgb.get_pixel(15, 15).0, doc["attributes"]["cached"].clone())
        }
    };
    assert_eq!(run(logo.clone()).await, (RED, json!(false)));
    assert_eq!(
        run(logo.clone()).await,
        (RED, json!(true)),
        "the same bytes"
    );

    // Another logo at the same URL: downloaded, and used.
    app.fixtures.add("logo.png", solid_png(40, 20, BLUE));
    assert_eq!(run(logo.clone()).await, (BLUE, json!(false)));
    assert_eq!(run(logo).await, (BLUE, json!(true)));
    // The same bytes under another URL are the same overlay.
    let copy = app.fixtures.add("copy.png", solid_png(40, 20, BLUE));
    assert_eq!(run(copy).await, (BLUE, json!(true)));
}

/// The `ETag` of the picture `url` renders.
async fn etag_of(app: &TestApp, url: &str) -> String {
    let response = get(app, url, None).await;
    assert_eq!(response.status(), 200, "{url}");
    response.headers()["etag"].to_str().unwrap().to_string()
}

/// The render cache's objects in the app's storage.
async fn cached_renders(app: &TestApp) -> Vec<String> {
    let listed: Vec<_> = storage_of(app)
        .list("render/results")
        .try_collect()
        .await
        .unwrap();
    listed.into_iter().map(|m| m.location.to_string()).collect()
}

async fn a_deleted_or_expired_upload_is_rendered_no_more_through_its_old_urls(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let upload = app.upload(fixtures::jpeg(200, 100)).await;
    let id = upload["id"].as_str().unwrap().to_string();
    let url = render_url(&app, &key, "w:40", &format!("upload:{id}"));
    let etag = etag_of(&app, &url).await;
    assert_eq!(size_at(&app, &url).await, (40, 20));
    assert_eq!(cached_renders(&app).await.len(), 1);

    let deleted = tus(&app, reqwest::Method::DELETE, &format!("/v1/uploads/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert!(cached_renders(&app).await.is_empty(), "the render went too");
    let db = app.db().await;
    assert!(db
        .render_cache_keys_of_upload(&id)
        .await
        .unwrap()
        .is_empty());
    let gone = (422, "upload_not_found".to_string());
    assert_eq!(error_of(get(&app, &url, None).await).await, gone);
    let revalidated = app.client.get(&url).header("if-none-match", &etag);
    assert_eq!(error_of(revalidated.send().await.unwrap()).await, gone);

    // Expired, and swept by another node (or this node's own sweep, whichever comes
    // first): this node still remembers the entry, finds its object gone, and refuses
    // the render, revalidated or not.
    let upload = app.upload(fixtures::jpeg(60, 60)).await;
    let id = upload["id"].as_str().unwrap().to_string();
    let url = render_url(&app, &key, "w:30", &format!("upload:{id}"));
    let etag = etag_of(&app, &url).await;
    assert_eq!(size_at(&app, &url).await, (30, 30));
    let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
    assert!(db.expire_upload(ORG, &id, now).await.unwrap());
    mediaedit::queue::sweep_expired(&db, &storage_of(&app))
        .await
        .unwrap();
    assert!(cached_renders(&app).await.is_empty());
    let revalidated = app.client.get(&url).header("if-none-match", &etag);
    assert_eq!(error_of(revalidated.send().await.unwrap()).await, gone);
    assert_eq!(error_of(get(&app, &url, None).await).await, gone);
}
