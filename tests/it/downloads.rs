//! Download URLs: absolute under the public URL, no bearer token needed, signed,
//! expiring, and freshly signed on every read.

use serde_json::json;

use crate::fixtures;
use crate::helpers::*;

#[tokio::test]
async fn download_urls_are_signed_fresh_and_need_no_token() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let url = doc["attributes"]["downloadUrls"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.starts_with(&format!("{}/", app.base)), "{url}");
    assert!(url.contains("signature="), "{url}");

    // A plain GET with no Authorization header works.
    let response = reqwest::get(&url).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "image/webp");
    let bytes = response.bytes().await.unwrap();
    assert_eq!(&bytes[8..12], b"WEBP");

    // Reading the edit again signs again (the expiry moves on).
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let again: serde_json::Value = app
        .get_edit(doc["id"].as_str().unwrap())
        .await
        .json()
        .await
        .unwrap();
    assert_ne!(
        again["attributes"]["downloadUrls"][0].as_str().unwrap(),
        url
    );
}

#[tokio::test]
async fn a_tampered_or_unsigned_download_url_is_refused() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let doc = app.run_done(edit(&src, &["resize-image"], None)).await;
    let url = doc["attributes"]["downloadUrls"][0]
        .as_str()
        .unwrap()
        .to_string();

    let (path, query) = url.split_once('?').unwrap();
    let other_key = path.replace("/0-0.png", "/1-0.png");
    for bad in [
        format!("{other_key}?{query}"),
        path.to_string(),
        url.replace("signature=", "signature=00"),
        {
            let expires: u64 = query
                .split('&')
                .find_map(|p| p.strip_prefix("expires="))
                .unwrap()
                .parse()
                .unwrap();
            url.replace(
                &format!("expires={expires}"),
                &format!("expires={}", expires + 3600),
            )
        },
    ] {
        let response = reqwest::get(&bad).await.unwrap();
        assert_eq!(response.status(), 403, "{bad}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["errors"][0]["code"], "invalid_signature");
    }
}

#[tokio::test]
async fn an_expired_download_url_is_refused() {
    let app = spawn_app_with(|c| c.download_url_ttl_secs = 1).await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({ "scale": 2 }))))
        .await;
    let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 403);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "link_expired");
}

#[tokio::test]
async fn download_urls_use_the_public_url() {
    let app =
        spawn_app_with(|c| c.public_url = Some("https://media.example.com/base/".parse().unwrap()))
            .await;
    let src = app.fixtures.add("a.png", fixtures::png(16, 16));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    assert!(
        url.starts_with("https://media.example.com/base/v1/files/"),
        "{url}"
    );
}
