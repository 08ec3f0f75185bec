//! The routes that answer without a token are exactly those `docs/SECURITY.md` lists:
//! every operation of the OpenAPI document is called without a token, and every route
//! of the router is in that document.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::helpers::*;

/// `METHOD /path` of each row of SECURITY.md's table of routes without a token.
fn documented() -> BTreeSet<String> {
    let doc = include_str!("../../docs/SECURITY.md");
    let start = doc
        .find("## Routes that answer without a token")
        .expect("the section");
    let section = &doc[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('`').nth(1).unwrap().to_string())
        .collect()
}

/// The paths the router declares (`.route("…"`) in `src/api/`.
fn router_paths() -> BTreeSet<String> {
    let source = include_str!("../../src/api/mod.rs");
    source
        .split(".route(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().replace("{*key}", "{key}"))
        .collect()
}

/// A concrete path for an OpenAPI path template.
fn concrete(template: &str) -> String {
    template
        .replace("{id}", &uuid::Uuid::new_v4().to_string())
        .replace("{key}", "edits/x/0/out.png")
}

#[tokio::test]
async fn exactly_the_documented_routes_answer_without_a_token() {
    let app = spawn_app().await;
    let spec: Value = reqwest::get(format!("{}/v1/openapi.json", app.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = spec["paths"].as_object().unwrap();
    for path in router_paths() {
        assert!(
            paths.contains_key(&path),
            "{path} is not in the OpenAPI document"
        );
    }

    let documented = documented();
    assert!(documented.contains("GET /healthz"), "{documented:?}");
    let mut open = BTreeSet::new();
    let client = reqwest::Client::new();
    for (template, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            let name = format!("{} {template}", method.to_uppercase());
            let unauthenticated = operation["security"].as_array().is_some_and(|s| {
                s.iter()
                    .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
            });
            let response = client
                .request(
                    method.to_uppercase().parse().unwrap(),
                    format!("{}{}", app.base, concrete(template)),
                )
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            if unauthenticated {
                open.insert(name.clone());
                assert_ne!(status, 401, "{name} says it needs no token");
            } else {
                assert_eq!(status, 401, "{name} answered without a token");
            }
        }
    }
    assert_eq!(
        open, documented,
        "docs/SECURITY.md's list differs from the routes that need no token"
    );
}
