//! tus `Upload-Metadata` (docs/API.md, "Uploads"): a well-formed header is kept as
//! sent and answered by `HEAD`; one that breaks tus's rules is `400
//! invalid_upload_header`, and no upload is made.

use serde_json::Value;

use crate::backends::Backend;
use crate::helpers::*;

on_both_backends!(upload_metadata_is_echoed_as_sent_and_a_broken_one_is_refused);

/// `POST /v1/uploads` as a tus creation of 10 bytes with `metadata`.
async fn create(app: &TestApp, metadata: &str) -> reqwest::Response {
    app.client
        .post(format!("{}/v1/uploads", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "10")
        .header("Upload-Metadata", metadata)
        .send()
        .await
        .unwrap()
}

async fn upload_metadata_is_echoed_as_sent_and_a_broken_one_is_refused(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    // As tus-js-client writes it: `filename` "photo.jpg", a flag with no value.
    let sent = "filename cGhvdG8uanBn,is_confidential,filetype aW1hZ2UvanBlZw==";
    let created = create(&app, sent).await;
    assert_eq!(created.status(), 201);
    let path = created.headers()["location"].to_str().unwrap().to_string();
    let head = app
        .client
        .head(format!("{}{path}", app.base))
        .bearer_auth(&app.token)
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["upload-metadata"], sent);

    let too_long = format!("a {}", "QUFB".repeat(1100));
    for broken in [
        "filename not*base64",
        "filename cGhvdG8uanBn,filename cGhvdG8uanBn",
        ",filename cGhvdG8uanBn",
        too_long.as_str(),
    ] {
        let refused = create(&app, broken).await;
        assert_eq!(refused.status(), 400, "{broken}");
        let doc: Value = refused.json().await.unwrap();
        assert_eq!(doc["errors"][0]["code"], "invalid_upload_header", "{doc}");
    }
    // The refused ones hold nothing: the first upload is the only one open.
    let now = mediaedit::db::unix_ms(std::time::SystemTime::now());
    let usage = app.db().await.upload_usage(ORG, now).await.unwrap();
    assert_eq!((usage.open, usage.bytes), (1, 10));
}
