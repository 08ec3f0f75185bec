//! `GET /v1/openapi.json` and `GET /docs` (decisions.md §10): a valid OpenAPI 3.1
//! document (checked by `openapi-spec-validator`), and a page that needs nothing from
//! elsewhere.

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
