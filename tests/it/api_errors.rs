//! Every refusal comes out as the `errors[]` envelope with a stable code.

use serde_json::{json, Value};

use crate::helpers::*;

/// Asserts the envelope and returns the single error object.
pub(crate) async fn error_of(response: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status(), status);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: Value = response.json().await.unwrap();
    let error = body["errors"][0].clone();
    assert_eq!(error["status"], status.to_string(), "{body}");
    assert_eq!(error["code"], code, "{body}");
    assert!(error["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(error["detail"].as_str().is_some_and(|d| !d.is_empty()));
    error
}

async fn expect_422(app: &TestApp, body: Value, code: &str, pointer: &str) {
    let error = error_of(app.post_edit(body).await, 422, code).await;
    assert_eq!(error["source"]["pointer"], pointer, "{error}");
}

#[tokio::test]
async fn missing_or_invalid_token_is_401_with_www_authenticate() {
    let app = spawn_app().await;
    let url = format!("{}/v1/edits", app.base);
    let body = edit("http://127.0.0.1/a.png", &["image-to-webp"], None);

    let none = app.client.post(&url).json(&body).send().await.unwrap();
    assert_eq!(none.headers()["www-authenticate"], "Bearer");
    error_of(none, 401, "unauthorized").await;

    let wrong = app
        .client
        .post(&url)
        .bearer_auth("me_nope")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
    error_of(wrong, 401, "unauthorized").await;

    let basic = app
        .client
        .post(&url)
        .basic_auth("a", Some("b"))
        .json(&body)
        .send()
        .await
        .unwrap();
    error_of(basic, 401, "unauthorized").await;

    let get = app
        .client
        .get(format!("{}/v1/edits/x", app.base))
        .send()
        .await
        .unwrap();
    error_of(get, 401, "unauthorized").await;
}

#[tokio::test]
async fn bad_bodies_get_400_413_and_415() {
    let app = spawn_app().await;
    let url = format!("{}/v1/edits", app.base);
    let post = |body: Vec<u8>, content_type: &'static str| {
        app.client
            .post(&url)
            .bearer_auth(&app.token)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    error_of(
        post(b"{\"assets\": [".to_vec(), "application/json")
            .await
            .unwrap(),
        400,
        "malformed_json",
    )
    .await;
    error_of(
        post(b"{}".to_vec(), "text/plain").await.unwrap(),
        415,
        "unsupported_media_type",
    )
    .await;
    let no_type = app
        .client
        .post(&url)
        .bearer_auth(&app.token)
        .body("{}")
        .send()
        .await
        .unwrap();
    error_of(no_type, 415, "unsupported_media_type").await;

    let huge = format!(
        "{{\"assets\":[],\"commands\":[],\"pad\":\"{}\"}}",
        "x".repeat(1024 * 1024 + 10)
    );
    error_of(
        post(huge.into_bytes(), "application/json").await.unwrap(),
        413,
        "payload_too_large",
    )
    .await;

    // A charset parameter is still JSON.
    let ok = post(
        serde_json::to_vec(&edit(&app.fixtures.url("a.png"), &["image-to-webp"], None)).unwrap(),
        "application/json; charset=utf-8",
    )
    .await
    .unwrap();
    assert_eq!(ok.status(), 201);
}

#[tokio::test]
async fn unknown_routes_and_methods_get_404_and_405() {
    let app = spawn_app().await;
    let nowhere = app
        .client
        .get(format!("{}/v2/things", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    error_of(nowhere, 404, "not_found").await;
    let wrong_method = app
        .client
        .delete(format!("{}/v1/edits", app.base))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    error_of(wrong_method, 405, "method_not_allowed").await;
    let unknown_edit = app.get_edit("00000000-0000-0000-0000-000000000000").await;
    error_of(unknown_edit, 404, "not_found").await;
}

#[tokio::test]
async fn invalid_requests_get_422_naming_the_field() {
    let app = spawn_app().await;
    let src = app.fixtures.url("a.png");
    let asset = json!([{ "type": "image", "src": src }]);
    expect_422(&app, json!([1, 2]), "invalid_type", "").await;
    expect_422(
        &app,
        json!({ "commands": ["image-to-webp"] }),
        "missing_field",
        "/assets",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset }),
        "missing_field",
        "/commands",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": [], "commands": ["image-to-webp"] }),
        "empty_array",
        "/assets",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset, "commands": [] }),
        "empty_array",
        "/commands",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset, "commands": "image-to-webp" }),
        "invalid_type",
        "/commands",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset, "commands": ["image-to-webp"], "extra": 1 }),
        "unknown_field",
        "/extra",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset, "commands": ["image-to-webp", "sharpen"] }),
        "unknown_command",
        "/commands/1",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": asset, "commands": [7] }),
        "invalid_type",
        "/commands/0",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": [{ "type": "audio", "src": src }], "commands": ["image-to-webp"] }),
        "invalid_asset_type",
        "/assets/0/type",
    )
    .await;
    expect_422(
        &app,
        json!({ "assets": [{ "type": "image" }], "commands": ["image-to-webp"] }),
        "missing_field",
        "/assets/0/src",
    )
    .await;
    expect_422(&app, json!({ "assets": [{ "type": "image", "src": "ftp://x/a.png" }], "commands": ["image-to-webp"] }), "invalid_url", "/assets/0/src").await;
    expect_422(
        &app,
        json!({ "assets": [{ "type": "image", "src": "a.png" }], "commands": ["image-to-webp"] }),
        "invalid_url",
        "/assets/0/src",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["resize-image"], Some(json!({ "scale": "2" }))),
        "invalid_type",
        "/options/scale",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["resize-image"], Some(json!({ "scale": 0 }))),
        "option_out_of_range",
        "/options/scale",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["resize-image"], Some(json!({ "scale": 17 }))),
        "option_out_of_range",
        "/options/scale",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["resize-image"], Some(json!({ "format": "bmp" }))),
        "invalid_option_value",
        "/options/format",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-video"], Some(json!({ "fps": 121 }))),
        "option_out_of_range",
        "/options/fps",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-video"], Some(json!({ "duration": -1 }))),
        "option_out_of_range",
        "/options/duration",
    )
    .await;
    expect_422(
        &app,
        edit(
            &src,
            &["modify-video-speed"],
            Some(json!({ "speed": 0.05 })),
        ),
        "option_out_of_range",
        "/options/speed",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-webp"], Some(json!({ "fps": 30 }))),
        "unused_option",
        "/options/fps",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-webp"], Some(json!({ "sharpness": 30 }))),
        "unknown_option",
        "/options/sharpness",
    )
    .await;
    // `quality` is resize-image's: named for another command, it is unused.
    expect_422(
        &app,
        edit(&src, &["image-to-webp"], Some(json!({ "quality": 30 }))),
        "unused_option",
        "/options/quality",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-webp"], Some(json!([1]))),
        "invalid_type",
        "/options",
    )
    .await;
    // The pipeline is type-checked: a video cannot be resized as an image.
    expect_422(
        &app,
        edit(&src, &["image-to-video", "resize-image"], None),
        "incompatible_commands",
        "/commands/1",
    )
    .await;
    expect_422(
        &app,
        edit(&src, &["image-to-video", "gif-to-video"], None),
        "incompatible_commands",
        "/commands/1",
    )
    .await;
    expect_422(
        &app,
        edit(
            &src,
            &["resize-image", "video-to-gif"],
            Some(json!({ "format": "png" })),
        ),
        "incompatible_commands",
        "/commands/1",
    )
    .await;
}

#[tokio::test]
async fn private_sources_are_refused_at_creation_unless_allowed() {
    let app = spawn_app_with(|c| c.allow_private_sources = false).await;
    for src in [
        "http://127.0.0.1:9/a.png",
        "http://[::1]/a.png",
        "http://169.254.169.254/latest",
        "http://0x7f000001/a.png",
        "http://10.0.0.1/a.png",
    ] {
        expect_422(
            &app,
            edit(src, &["image-to-webp"], None),
            "source_address_forbidden",
            "/assets/0/src",
        )
        .await;
    }
    // (DNS names that resolve to private addresses are refused at connect time; the
    // fetch module's tests cover that with a connection-counting listener.)
    assert_eq!(app.fixtures.hits(), 0);
}
