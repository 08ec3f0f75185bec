//! Named presets (docs/API.md, "Presets"), on both backends: stored per
//! organization, validated as an edit, resolved into the edits made from them.

use serde_json::{json, Value};

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;

on_both_backends!(
    an_edit_made_from_a_preset_runs_its_commands_with_its_own_options_on_top,
    presets_are_validated_listed_replaced_and_deleted_per_organization,
);

/// `method` `path` as `token` with `body`: status and JSON answer.
async fn call(
    app: &TestApp,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = app
        .client
        .request(method, format!("{}{path}", app.base))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn an_edit_made_from_a_preset_runs_its_commands_with_its_own_options_on_top(
    backend: Backend,
) {
    let app = spawn_app_on(backend, |_| {}).await;
    let thumb = json!({"commands": ["resize-image"], "options": {"scale": 0.5, "format": "webp"}});
    let (status, stored) = call(&app, &app.token, "PUT", "/v1/presets/thumb", Some(thumb)).await;
    assert_eq!(status, 201, "{stored}");
    assert_eq!(stored["data"]["id"], "thumb");
    assert_eq!(stored["data"]["attributes"]["options"]["scale"], 0.5);

    let src = app.fixtures.add("a.png", fixtures::png(40, 20));
    let body = json!({"assets": [{"type": "image", "src": src}], "preset": "thumb", "options": {"scale": 0.25}});
    let response = app.post_edit(body).await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    let attributes = &created["attributes"];
    assert_eq!(attributes["preset"], "thumb");
    assert_eq!(attributes["commands"], json!(["resize-image"]));
    assert_eq!(
        attributes["options"],
        json!({"scale": 0.25, "format": "webp"})
    );

    // A later change of the preset changes no existing edit.
    let bigger = json!({"commands": ["resize-image"], "options": {"scale": 2, "format": "png"}});
    let (status, _) = call(&app, &app.token, "PUT", "/v1/presets/thumb", Some(bigger)).await;
    assert_eq!(status, 200, "a replaced preset answers 200");
    let done = app.wait_finished(created["id"].as_str().unwrap()).await;
    assert_eq!(done["attributes"]["status"], "done", "{done}");
    assert_eq!(done["attributes"]["options"]["scale"], 0.25);
    let output = &done["attributes"]["outputs"][0];
    assert_eq!(
        (output["format"].as_str(), output["width"].as_u64()),
        (Some("webp"), Some(10))
    );
    let bytes = app
        .bytes_of(done["attributes"]["downloadUrls"][0].as_str().unwrap())
        .await;
    let image = image::load_from_memory(&bytes).unwrap();
    assert_eq!((image.width(), image.height()), (10, 5));

    // A dry run resolves the preset too: the new one doubles.
    let dry = json!({"assets": [{"type": "image", "src": src}], "preset": "thumb"});
    let response = app
        .client
        .post(format!("{}/v1/edits?dryRun=true", app.base))
        .bearer_auth(&app.token)
        .json(&dry)
        .send()
        .await
        .unwrap();
    let plan: Value = response.json().await.unwrap();
    let predicted = &plan["attributes"]["assets"][0]["outputs"][0];
    assert_eq!(predicted["width"], 80, "{plan}");

    // Sending commands and a preset at once is refused; so is a preset of no one.
    let both = json!({"assets": [{"type": "image", "src": src}], "preset": "thumb", "commands": ["image-to-webp"]});
    let (status, error) = call(&app, &app.token, "POST", "/v1/edits", Some(both)).await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("conflicting_fields"))
    );
    let missing = json!({"assets": [{"type": "image", "src": src}], "preset": "hero"});
    let (status, error) = call(&app, &app.token, "POST", "/v1/edits", Some(missing)).await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("unknown_preset"))
    );
    assert_eq!(error["errors"][0]["source"]["pointer"], "/preset");
}

async fn presets_are_validated_listed_replaced_and_deleted_per_organization(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.workers = 0).await;
    let other = create_token_in(&app.database_url(), "other-org").await;
    let token = app.token.clone();

    // Validated as an edit's pipeline: the same codes at the same places.
    for (body, code, pointer) in [
        (
            json!({"commands": ["blur"]}),
            "unknown_command",
            "/commands/0",
        ),
        (
            json!({"commands": ["resize-image"], "options": {"scale": 99}}),
            "option_out_of_range",
            "/options/scale",
        ),
        (
            json!({"commands": ["resize-image"], "options": {"speed": 2}}),
            "unused_option",
            "/options/speed",
        ),
        (
            json!({"commands": ["image-to-video", "resize-image"]}),
            "incompatible_commands",
            "/commands/1",
        ),
        (
            json!({"commands": ["resize-image"], "assets": []}),
            "unknown_field",
            "/assets",
        ),
    ] {
        let (status, error) = call(&app, &token, "PUT", "/v1/presets/p", Some(body)).await;
        assert_eq!(status, 422, "{error}");
        assert_eq!(error["errors"][0]["code"], code, "{error}");
        assert_eq!(error["errors"][0]["source"]["pointer"], pointer, "{error}");
    }
    let (status, error) = call(
        &app,
        &token,
        "PUT",
        "/v1/presets/Bad_Name",
        Some(json!({"commands": ["image-to-webp"]})),
    )
    .await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("invalid_preset_name"))
    );

    for name in ["webp", "avatar"] {
        let body = json!({"commands": ["image-to-webp"]});
        assert_eq!(
            call(
                &app,
                &token,
                "PUT",
                &format!("/v1/presets/{name}"),
                Some(body)
            )
            .await
            .0,
            201
        );
    }
    let (status, list) = call(&app, &token, "GET", "/v1/presets", None).await;
    assert_eq!(status, 200);
    let names: Vec<_> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["avatar", "webp"], "by name");
    let (status, one) = call(&app, &token, "GET", "/v1/presets/webp", None).await;
    assert_eq!(
        (status, &one["data"]["attributes"]["commands"]),
        (200, &json!(["image-to-webp"]))
    );

    // Another organization sees none of them, cannot use or delete them, and may have
    // its own of the same name.
    assert_eq!(
        call(&app, &other, "GET", "/v1/presets", None).await.1["data"],
        json!([])
    );
    assert_eq!(
        call(&app, &other, "GET", "/v1/presets/webp", None).await.0,
        404
    );
    assert_eq!(
        call(&app, &other, "DELETE", "/v1/presets/webp", None)
            .await
            .0,
        404
    );
    let src = app.fixtures.add("a.png", fixtures::png(8, 8));
    let body = json!({"assets": [{"type": "image", "src": src}], "preset": "webp"});
    let (status, error) = call(&app, &other, "POST", "/v1/edits", Some(body)).await;
    assert_eq!(
        (status, error["errors"][0]["code"].as_str()),
        (422, Some("unknown_preset"))
    );
    let theirs = json!({"commands": ["resize-image"], "options": {"scale": 0.5}});
    assert_eq!(
        call(&app, &other, "PUT", "/v1/presets/webp", Some(theirs))
            .await
            .0,
        201
    );
    let (_, mine) = call(&app, &token, "GET", "/v1/presets/webp", None).await;
    assert_eq!(
        mine["data"]["attributes"]["commands"],
        json!(["image-to-webp"])
    );

    assert_eq!(
        call(&app, &token, "DELETE", "/v1/presets/webp", None)
            .await
            .0,
        204
    );
    assert_eq!(
        call(&app, &token, "GET", "/v1/presets/webp", None).await.0,
        404
    );
    assert_eq!(
        call(&app, &token, "DELETE", "/v1/presets/webp", None)
            .await
            .0,
        404
    );
    assert_eq!(
        call(&app, &other, "GET", "/v1/presets/webp", None).await.0,
        200
    );
}
