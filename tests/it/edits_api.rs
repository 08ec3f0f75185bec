//! The Edit document, exactly as the interface document and docs/API.md describe it.

use serde_json::{json, Value};

use crate::helpers::*;

fn is_iso_millis_utc(s: &str) -> bool {
    // 2026-11-21T10:00:00.123Z
    s.len() == 24
        && s.ends_with('Z')
        && s.as_bytes()[10] == b'T'
        && s.as_bytes()[19] == b'.'
        && chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

#[tokio::test]
async fn create_returns_201_with_location_and_the_request_echoed() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(8, 8));
    let body = json!({
        "assets": [{ "type": "image", "src": src }],
        "commands": ["resize-image", "image-to-video"],
        "options": { "scale": 0.5, "format": "jpg", "duration": 1.5, "fps": 10 }
    });
    let response = app.post_edit(body.clone()).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let doc: Value = response.json().await.unwrap();
    let id = doc["id"].as_str().unwrap();
    assert_eq!(location, format!("/v1/edits/{id}"));
    assert_eq!(doc["type"], "edit");
    let attributes = &doc["attributes"];
    assert_eq!(attributes["status"], "queued");
    assert_eq!(attributes["commands"], body["commands"]);
    assert_eq!(attributes["assets"], body["assets"]);
    assert_eq!(attributes["options"], body["options"]);
    // Key order of options is kept as sent.
    let keys: Vec<_> = attributes["options"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["scale", "format", "duration", "fps"]);
    assert!(attributes.get("downloadUrls").is_none());
    assert!(
        is_iso_millis_utc(attributes["createdAt"].as_str().unwrap()),
        "{attributes}"
    );
    let org = &doc["relationships"]["organization"];
    assert_eq!(org["links"]["self"], format!("/v1/organizations/{ORG}"));
    assert_eq!(org["data"], json!({ "type": "organization", "id": ORG }));

    // Reading it back gives the same document (the status may have moved on).
    let read: Value = app.get_edit(id).await.json().await.unwrap();
    assert_eq!(read["id"], doc["id"]);
    assert_eq!(read["attributes"]["createdAt"], attributes["createdAt"]);
    assert_eq!(read["attributes"]["options"], body["options"]);
    assert_eq!(read["relationships"], doc["relationships"]);
}

#[tokio::test]
async fn options_are_absent_when_not_sent() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(8, 8));
    let doc: Value = app
        .post_edit(edit(&src, &["image-to-webp"], None))
        .await
        .json()
        .await
        .unwrap();
    assert!(doc["attributes"].get("options").is_none(), "{doc}");
    let done = app.wait_finished(doc["id"].as_str().unwrap()).await;
    assert!(done["attributes"].get("options").is_none());
}

#[tokio::test]
async fn another_organizations_edit_is_404() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.png", crate::fixtures::png(8, 8));
    let id = app.create_edit(edit(&src, &["image-to-webp"], None)).await;
    let other = create_token(app.data_dir.path(), "globex").await;
    let response = app.get_edit_as(&other, &id).await;
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["errors"][0]["code"], "not_found");
    // The owner still sees it, and the other org's own edits name the other org.
    assert_eq!(app.get_edit(&id).await.status(), 200);
    let theirs: Value = app
        .post_edit_as(&other, edit(&src, &["image-to-webp"], None))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        theirs["relationships"]["organization"]["data"]["id"],
        "globex"
    );
}

#[tokio::test]
async fn a_processing_or_done_edit_reports_progress_and_timestamps() {
    let app = spawn_app().await;
    let src = app.fixtures.add("a.jpg", crate::fixtures::jpeg(64, 48));
    let doc = app
        .run_done(edit(&src, &["resize-image"], Some(json!({ "scale": 0.5 }))))
        .await;
    let attributes = &doc["attributes"];
    assert!(is_iso_millis_utc(attributes["updatedAt"].as_str().unwrap()));
    assert!(attributes["updatedAt"].as_str() >= attributes["createdAt"].as_str());
    assert_eq!(attributes["downloadUrls"].as_array().unwrap().len(), 1);
    assert!(attributes.get("error").is_none());
}
