//! Images by URL (docs/API.md, "Render"): signed URLs answered at once, on both
//! backends: sizes, formats by `Accept`, the cache headers and `304`, bad signatures,
//! the source rules, presets and uploads.

use base64::Engine;
use serde_json::{json, Value};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    a_signed_url_renders_the_box_in_the_format_accept_asks_for,
    every_answer_is_immutable_varies_by_accept_and_answers_304,
    a_bad_signature_is_403_and_bad_transforms_are_422_with_codes,
    presets_and_uploads_render_as_sources,
);

/// A render key of the app's organization, stored as `render-key create` stores it.
pub async fn render_key(app: &TestApp) -> String {
    render_key_of(app, ORG).await
}

/// A render key of organization `org`, stored as `render-key create` stores it.
pub async fn render_key_of(app: &TestApp, org: &str) -> String {
    let key = format!("rk_{}", uuid::Uuid::new_v4().simple());
    let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
    app.db()
        .await
        .create_render_key(org, &key, now)
        .await
        .unwrap();
    key
}

/// base64url without padding.
pub fn b64(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// The render URL of `transform` on `source` (already encoded), signed with `key`.
pub fn render_url(app: &TestApp, key: &str, transform: &str, source: &str) -> String {
    let signature = mediaedit::render::keys::sign(key, &format!("{transform}/{source}"));
    format!("{}/v1/render/{signature}/{transform}/{source}", app.base)
}

/// `GET url` with `accept`, answered.
pub async fn get(app: &TestApp, url: &str, accept: Option<&str>) -> reqwest::Response {
    let mut request = app.client.get(url);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    request.send().await.unwrap()
}

/// The answer's content type and the picture it holds (AVIF through heif-convert).
async fn picture(response: reqwest::Response) -> (String, image::DynamicImage) {
    assert_eq!(response.status(), 200);
    let mime = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    let bytes = response.bytes().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    std::fs::write(&path, &bytes).unwrap();
    let image = match mime.as_str() {
        "image/avif" => fixtures::decode_avif(&path),
        _ => fixtures::decode(&path),
    };
    (mime, image)
}

async fn a_signed_url_renders_the_box_in_the_format_accept_asks_for(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(400, 300)));
    let auto = "w:120,h:120,fit:cover,f:auto";
    let url = render_url(&app, &key, auto, &photo);
    let cases = [
        (Some("image/avif,image/webp,*/*"), "image/avif"),
        (Some("image/webp,*/*;q=0.8"), "image/webp"),
        (Some("*/*"), "image/jpeg"),
        (None, "image/jpeg"),
    ];
    for (accept, mime) in cases {
        let (got, image) = picture(get(&app, &url, accept).await).await;
        assert_eq!(got, mime, "Accept {accept:?}");
        assert_eq!((image.width(), image.height()), (120, 120), "{mime}");
    }
    // Transparency reaches a legacy browser as PNG, alpha kept.
    let clear = b64(&app
        .fixtures
        .add("clear.png", fixtures::png_with_alpha(80, 60)));
    let url = render_url(&app, &key, "w:40,f:auto", &clear);
    let (mime, image) = picture(get(&app, &url, Some("image/png,*/*")).await).await;
    assert_eq!(mime, "image/png");
    assert_eq!((image.width(), image.height()), (40, 30));
    fixtures::assert_left_half_transparent(&image);
    // A fixed format and a contained box: the aspect kept.
    let url = render_url(&app, &key, "w:100,h:100,f:webp", &photo);
    let (mime, image) = picture(get(&app, &url, Some("image/avif")).await).await;
    assert_eq!(mime, "image/webp");
    assert_eq!((image.width(), image.height()), (100, 75));
    // A lower quality makes a smaller JPEG of the same size.
    let sizes = futures::future::join_all(["q:90", "q:30"].map(|q| {
        let url = render_url(&app, &key, &format!("w:200,{q}"), &photo);
        let client = app.client.clone();
        async move {
            client
                .get(url)
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
                .len()
        }
    }))
    .await;
    assert!(
        sizes[1] * 3 < sizes[0] * 2,
        "q:30 {} vs q:90 {}",
        sizes[1],
        sizes[0]
    );
    // Long option names read as the short ones.
    let url = render_url(&app, &key, "width:80,format:png", &photo);
    let (mime, image) = picture(get(&app, &url, None).await).await;
    assert_eq!(mime, "image/png");
    assert_eq!((image.width(), image.height()), (80, 60));
}

async fn every_answer_is_immutable_varies_by_accept_and_answers_304(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(300, 200)));
    let url = render_url(&app, &key, "w:64,f:auto", &photo);
    let mut etags = Vec::new();
    // Fresh, then cached: the same headers, bytes and ETag both times.
    let mut bodies = Vec::new();
    for _ in 0..2 {
        let response = get(&app, &url, Some("image/webp")).await;
        assert_eq!(response.status(), 200);
        let headers = response.headers().clone();
        assert_eq!(headers["vary"], "Accept");
        assert_eq!(
            headers["cache-control"],
            "public, max-age=31536000, immutable"
        );
        let etag = headers["etag"].to_str().unwrap().to_string();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() > 10,
            "strong: {etag}"
        );
        let body = response.bytes().await.unwrap();
        assert_eq!(headers["content-length"], body.len().to_string().as_str());
        etags.push(etag);
        bodies.push(body);
    }
    assert_eq!(etags[0], etags[1]);
    assert_eq!(bodies[0], bodies[1]);
    let not_modified = app
        .client
        .get(&url)
        .header("accept", "image/webp")
        .header("if-none-match", &etags[0])
        .send()
        .await
        .unwrap();
    assert_eq!(not_modified.status(), 304);
    assert_eq!(not_modified.headers()["etag"], etags[0].as_str());
    assert_eq!(not_modified.headers()["vary"], "Accept");
    assert!(not_modified.bytes().await.unwrap().is_empty());
    // Another format is another entity: a JPEG answer has its own tag.
    let jpeg = get(&app, &url, Some("image/jpeg")).await;
    assert_eq!(jpeg.headers()["content-type"], "image/jpeg");
    assert_ne!(jpeg.headers()["etag"], etags[0].as_str());
    let stale = app
        .client
        .get(&url)
        .header("if-none-match", "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 200);
}

/// The status and error code of `GET url`.
async fn error_of(app: &TestApp, url: &str) -> (u16, String) {
    let response = get(app, url, None).await;
    let status = response.status().as_u16();
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["errors"][0]["code"].as_str().unwrap().to_string(),
    )
}

async fn a_bad_signature_is_403_and_bad_transforms_are_422_with_codes(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(64, 48)));
    let good = render_url(&app, &key, "w:32", &photo);
    let tampered = good.replace("/w:32/", "/w:33/");
    assert_eq!(
        error_of(&app, &tampered).await,
        (403, "invalid_signature".into())
    );
    let unknown_key = render_url(&app, "rk_not-a-key", "w:32", &photo);
    assert_eq!(
        error_of(&app, &unknown_key).await,
        (403, "invalid_signature".into())
    );
    let garbage = format!("{}/v1/render/xyz/w:32/{photo}", app.base);
    assert_eq!(
        error_of(&app, &garbage).await,
        (403, "invalid_signature".into())
    );
    let cases = [
        ("w:0", photo.clone(), "option_out_of_range"),
        ("zoom:2", photo.clone(), "invalid_transform"),
        ("w:32,s:2", photo.clone(), "invalid_option_combination"),
        ("preset:nope", photo.clone(), "unknown_preset"),
        ("w:32", b64("ftp://example.com/a.jpg"), "invalid_url"),
        (
            "w:32",
            b64(&app.fixtures.status_url(404)),
            "source_http_error",
        ),
        (
            "w:32",
            b64(&app.fixtures.add("t.txt", b"just text".to_vec())),
            "unsupported_input_format",
        ),
    ];
    for (transform, source, code) in cases {
        let url = render_url(&app, &key, transform, &source);
        assert_eq!(
            error_of(&app, &url).await,
            (422, code.to_string()),
            "{transform}"
        );
    }
    // Without --allow-private-sources, a loopback source is refused before a byte is sent.
    let guarded = spawn_app_on(backend, |c| c.allow_private_sources = false).await;
    let key = render_key(&guarded).await;
    let hits = guarded.fixtures.hits();
    let private = b64(&guarded.fixtures.add("p.jpg", fixtures::jpeg(64, 48)));
    let url = render_url(&guarded, &key, "w:32", &private);
    assert_eq!(
        error_of(&guarded, &url).await,
        (422, "source_address_forbidden".into())
    );
    assert_eq!(guarded.fixtures.hits(), hits, "nothing was fetched");
}

async fn presets_and_uploads_render_as_sources(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let other = format!("rk_{}", uuid::Uuid::new_v4().simple());
    let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
    app.db()
        .await
        .create_render_key("another-org", &other, now)
        .await
        .unwrap();
    let preset = json!({"commands": ["rotate-image", "resize-image"],
                        "options": {"angle": 90, "width": 30, "format": "png"}});
    let put = app
        .client
        .put(format!("{}/v1/presets/thumb", app.base))
        .bearer_auth(&app.token)
        .json(&preset)
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    let upload = app.upload(fixtures::jpeg(200, 100)).await;
    let source = format!("upload:{}", upload["id"].as_str().unwrap());
    let url = render_url(&app, &key, "preset:thumb", &source);
    let (mime, image) = picture(get(&app, &url, None).await).await;
    assert_eq!(mime, "image/png");
    // Turned upright first (100 × 200), then 30 wide.
    assert_eq!((image.width(), image.height()), (30, 60));
    // The transform's own options override the preset's.
    let url = render_url(&app, &key, "preset:thumb,w:20,f:auto", &source);
    let (mime, image) = picture(get(&app, &url, Some("image/webp")).await).await;
    assert_eq!(mime, "image/webp");
    assert_eq!((image.width(), image.height()), (20, 40));
    // Another organization's key does not reach this organization's upload.
    let url = render_url(&app, &other, "w:20", &source);
    assert_eq!(error_of(&app, &url).await, (422, "upload_not_found".into()));
    let url = render_url(&app, &other, "preset:thumb", &source);
    assert_eq!(error_of(&app, &url).await, (422, "unknown_preset".into()));
}
