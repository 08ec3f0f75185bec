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

/// A generated client offers the commands there are: every `commands` array of the
/// document (an edit's and a preset's, sent and answered) takes exactly the names
/// `GET /v1/commands` lists, and each name comes with its options, which `options`
/// types one by one.
#[tokio::test]
async fn the_openapi_document_enumerates_the_commands_of_the_catalog_with_their_options() {
    let app = spawn_app().await;
    let get = |path: &str| reqwest::get(format!("{}{path}", app.base));
    let spec: serde_json::Value = get("/v1/openapi.json").await.unwrap().json().await.unwrap();
    let catalog: serde_json::Value = get("/v1/commands").await.unwrap().json().await.unwrap();
    let catalog = catalog["data"].as_array().unwrap();
    let names: Vec<&serde_json::Value> = catalog.iter().map(|c| &c["id"]).collect();
    assert_eq!(names.len(), mediaedit::commands::Command::ALL.len());

    let schemas = &spec["components"]["schemas"];
    let follow = |schema: &serde_json::Value| -> serde_json::Value {
        match schema["$ref"].as_str() {
            Some(at) => schemas[at.rsplit('/').next().unwrap()].clone(),
            None => schema.clone(),
        }
    };
    for document in ["NewEdit", "PresetIn", "EditAttributes", "PresetAttributes"] {
        let items = follow(&schemas[document]["properties"]["commands"]["items"]);
        let listed: Vec<&serde_json::Value> = items["enum"].as_array().unwrap().iter().collect();
        assert_eq!(listed, names, "{document}.commands");
        assert_eq!(items["type"], "string");
        // Each name's words name every option the catalog gives it.
        let said = items["x-enum-descriptions"].as_array().unwrap();
        for (command, words) in catalog.iter().zip(said) {
            for option in command["attributes"]["options"].as_array().unwrap() {
                let name = format!("`{}`", option["name"].as_str().unwrap());
                assert!(
                    words.as_str().unwrap().contains(&name),
                    "{words} lacks {name}"
                );
            }
        }
    }
    // An edit's and a preset's options: every option of every command, each saying
    // which commands read it.
    for document in ["NewEdit", "PresetIn"] {
        let options = follow(&schemas[document]["properties"]["options"]);
        assert_eq!(options["additionalProperties"], false, "{document}");
        for command in catalog {
            for option in command["attributes"]["options"].as_array().unwrap() {
                let typed = &options["properties"][option["name"].as_str().unwrap()];
                // An option two commands read is a number if either takes fractions;
                // a number that also takes words (`quality`: `auto`) is a `oneOf`.
                let (typed, words) = match typed.get("oneOf") {
                    Some(either) => (&either[0], either[1]["enum"].clone()),
                    None => (typed, serde_json::Value::Null),
                };
                assert_eq!(words, option["words"], "{option}");
                let widened = typed["type"] == "number" && option["type"] == "integer";
                assert!(typed["type"] == option["type"] || widened, "{option}");
                let read_by = options["properties"][option["name"].as_str().unwrap()]
                    ["description"]
                    .as_str()
                    .unwrap();
                assert!(
                    read_by.contains(command["id"].as_str().unwrap()),
                    "{read_by}"
                );
            }
        }
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
