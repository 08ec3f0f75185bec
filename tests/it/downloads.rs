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

on_both_backends!(downloads_serve_head_ranges_etags_and_a_file_name);

/// docs/API.md, on files and S3 alike.
async fn downloads_serve_head_ranges_etags_and_a_file_name(backend: crate::backends::Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let src = app.fixtures.add("a.png", fixtures::png(64, 48));
    let doc = app.run_done(edit(&src, &["image-to-webp"], None)).await;
    let id = doc["id"].as_str().unwrap();
    let url = doc["attributes"]["downloadUrls"][0].as_str().unwrap();
    let client = reqwest::Client::new();
    let whole = client.get(url).send().await.unwrap();
    assert_eq!(whole.status(), 200);
    let headers = whole.headers().clone();
    let bytes = whole.bytes().await.unwrap();
    let size = bytes.len();
    assert_eq!(headers["content-type"], "image/webp");
    assert_eq!(headers["content-length"], size.to_string().as_str());
    assert_eq!(headers["accept-ranges"], "bytes");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(
        headers["content-disposition"],
        format!("attachment; filename=\"{id}-0-0.webp\"").as_str()
    );
    let max_age: u64 = headers["cache-control"]
        .to_str()
        .unwrap()
        .strip_prefix("private, max-age=")
        .unwrap()
        .parse()
        .unwrap();
    assert!(max_age > 3500 && max_age <= 3600, "{max_age}");
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

    let head = client.head(url).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-length"], size.to_string().as_str());
    assert_eq!(head.headers()["etag"], etag.as_str());
    assert!(head.bytes().await.unwrap().is_empty());

    let part = client
        .get(url)
        .header("Range", "bytes=4-11")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(
        part.headers()["content-range"],
        format!("bytes 4-11/{size}").as_str()
    );
    assert_eq!(part.bytes().await.unwrap(), bytes.slice(4..12));
    let tail = client
        .get(url)
        .header("Range", "bytes=-4")
        .send()
        .await
        .unwrap();
    assert_eq!(tail.status(), 206);
    assert_eq!(tail.bytes().await.unwrap(), bytes.slice(size - 4..));
    let beyond = client
        .get(url)
        .header("Range", format!("bytes={size}-"))
        .send()
        .await
        .unwrap();
    assert_eq!(beyond.status(), 416);
    assert_eq!(
        beyond.headers()["content-range"],
        format!("bytes */{size}").as_str()
    );

    let unchanged = client
        .get(url)
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), 304);
    let inline = client.get(format!("{url}&inline=1")).send().await.unwrap();
    assert!(inline.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("inline; filename="));
}
