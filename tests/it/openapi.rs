//! `GET /v1/openapi.json` and `GET /docs` (docs/API.md): a valid OpenAPI 3.1
//! document (checked by `openapi-spec-validator`) that the server keeps (fuzzed by
//! `schemathesis`), and a page that needs nothing from elsewhere.

use crate::helpers::*;

#[tokio::test]
async fn the_openapi_document_is_valid_and_the_docs_page_is_self_contained() {
    let app = spawn_app().await;
    let response = reqwest::get(format!("{}/v1/openapi.json", app.base))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let document = response.text().await.unwrap();
    let spec: serde_json::Value = serde_json::from_str(&document).unwrap();
    assert_eq!(spec["openapi"], "3.1.0");
    assert!(spec["paths"]["/v1/edits"]["post"]["requestBody"].is_object());
    let file = app.data_dir.path().join("openapi.json");
    std::fs::write(&file, &document).unwrap();
    let out = std::process::Command::new(test_python())
        .args(["-c", "import json, sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1])))"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let page = reqwest::get(format!("{}/docs", app.base)).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("/v1/openapi.json"));
    for external in ["src=\"http", "href=\"http", "@import", "src=\"//"] {
        assert!(
            !html.contains(external),
            "the page loads from elsewhere: {external}"
        );
    }
}

/// The contract: `schemathesis` generates requests from the document (valid and not)
/// and checks every answer — no 5xx, every status documented, every body matching its
/// schema, invalid data refused. Its "schema-valid request rejected" check is left
/// out: rules no schema can say (a pipeline's types, a private `src`) refuse valid-
/// looking bodies with a documented 422. A report is printed with `--nocapture`.
#[tokio::test]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let app = spawn_app_with(|c| c.workers = 0).await;
    let schemathesis = test_python().with_file_name("schemathesis");
    let out = tokio::process::Command::new(schemathesis)
        .args(["run", &format!("{}/v1/openapi.json", app.base)])
        .args(["-H", &format!("Authorization: Bearer {}", app.token)])
        .args(["--max-examples", "20", "--seed", "1", "--checks", "all"])
        .args(["--exclude-checks", "positive_data_acceptance", "--no-color"])
        // tus's PATCH body (`application/offset+octet-stream`) is a media type it cannot
        // make; the stock tus client's tests cover that operation.
        .args(["--exclude-operation-id", "appendUpload"])
        // Its cache of findings goes with the test's data, not into the checkout.
        .current_dir(app.data_dir.path())
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("generated"), "{report}");
}
