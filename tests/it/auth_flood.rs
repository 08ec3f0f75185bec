//! Authentication under a flood of made-up tokens: lookups are cached, and a client
//! address that keeps presenting unknown tokens gets `429` while others do not — also
//! when they all arrive at once.

use std::net::IpAddr;
use std::time::Duration;

use serde_json::Value;

use crate::backends::Backend;
use crate::helpers::*;

on_both_backends!(concurrent_made_up_tokens_reach_the_database_no_more_than_the_budget);

/// A client whose connections come from `ip` (any 127.0.0.0/8 address works on
/// loopback), so tests can speak for two client addresses.
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(ip))
        .build()
        .unwrap()
}

/// Status and body of reading a made-up edit: `404` means authenticated.
async fn read_edit_with(app: &TestApp, client: &reqwest::Client, token: &str) -> (u16, Value) {
    let response = client
        .get(format!("{}/v1/edits/{}", app.base, uuid::Uuid::new_v4()))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").cloned();
    let mut body: Value = response.json().await.unwrap();
    if let Some(secs) = retry_after {
        body["retryAfter"] = secs.to_str().unwrap().into();
    }
    (status, body)
}

fn random_token() -> String {
    format!("me_{}", uuid::Uuid::new_v4().simple())
}

#[tokio::test]
async fn an_address_flooding_random_tokens_gets_429_and_others_are_unaffected() {
    let app = spawn_app_with(|c| c.auth_failures_per_minute = 5).await;
    let attacker = client_from([127, 0, 0, 1]);
    let neighbour = client_from([127, 0, 0, 2]);
    // A valid token used from the flooding address before the flood is cached.
    assert_eq!(read_edit_with(&app, &attacker, &app.token).await.0, 404);

    for n in 0..5 {
        let (status, body) = read_edit_with(&app, &attacker, &random_token()).await;
        assert_eq!(status, 401, "failure {n} is within the limit: {body}");
    }
    for _ in 0..3 {
        let (status, body) = read_edit_with(&app, &attacker, &random_token()).await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(
            body["errors"][0]["code"], "too_many_auth_failures",
            "{body}"
        );
        assert_eq!(body["errors"][0]["status"], "429", "{body}");
        let retry_after: u64 = body["retryAfter"].as_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&retry_after), "{body}");
    }

    // The cached valid token keeps working from the flooding address ...
    assert_eq!(read_edit_with(&app, &attacker, &app.token).await.0, 404);
    // ... and another address has its own budget, for valid and invalid tokens alike.
    assert_eq!(read_edit_with(&app, &neighbour, &app.token).await.0, 404);
    assert_eq!(
        read_edit_with(&app, &neighbour, &random_token()).await.0,
        401
    );
}

#[tokio::test]
async fn a_revoked_token_keeps_working_only_until_its_cache_entry_expires() {
    let app = spawn_app_with(|c| c.auth_cache_ttl_secs = 2).await;
    let db = app.db().await;
    let client = reqwest::Client::new();
    assert_eq!(read_edit_with(&app, &client, &app.token).await.0, 404);
    assert!(db.revoke_token(&app.token).await.unwrap());
    // Served from the cache: the database no longer knows the token.
    assert_eq!(
        read_edit_with(&app, &client, &app.token).await.0,
        404,
        "a token looked up within the TTL is not looked up again"
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, body) = read_edit_with(&app, &client, &app.token).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["errors"][0]["code"], "unauthorized");
}

#[tokio::test]
async fn an_unknown_token_is_remembered_as_unknown_until_the_ttl() {
    let app = spawn_app_with(|c| c.auth_cache_ttl_secs = 2).await;
    let client = reqwest::Client::new();
    let token = random_token();
    assert_eq!(read_edit_with(&app, &client, &token).await.0, 401);
    app.db().await.create_token(ORG, &token).await.unwrap();
    assert_eq!(
        read_edit_with(&app, &client, &token).await.0,
        401,
        "a miss is cached too, so repeating an unknown token costs no query"
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(read_edit_with(&app, &client, &token).await.0, 404);
}

/// `mediaedit_token_lookups_total{outcome="…"}` on the app's `/metrics`.
async fn lookups(app: &TestApp, outcome: &str) -> u64 {
    let text = reqwest::get(format!("{}/metrics", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!("mediaedit_token_lookups_total{{outcome=\"{outcome}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .map_or(0, |v| v.parse().unwrap())
}

async fn concurrent_made_up_tokens_reach_the_database_no_more_than_the_budget(backend: Backend) {
    let app = spawn_app_on(backend, |c| c.auth_failures_per_minute = 5).await;
    let attacker = client_from([127, 0, 0, 3]);
    // Everything at once: charged after the lookup, all 60 would reach the database.
    let requests: Vec<_> = (0..60)
        .map(|_| {
            let (client, base) = (attacker.clone(), app.base.clone());
            tokio::spawn(async move {
                client
                    .get(format!("{base}/v1/edits/{}", uuid::Uuid::new_v4()))
                    .bearer_auth(random_token())
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for request in requests {
        statuses.push(request.await.unwrap());
    }
    let unauthorized = statuses.iter().filter(|s| **s == 401).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!((unauthorized, limited), (5, 55), "{statuses:?}");
    assert_eq!(lookups(&app, "unknown").await, 5);

    // A valid token looked up from that address is refunded, not charged: another
    // address has its whole budget, and the valid token costs the address nothing.
    let neighbour = client_from([127, 0, 0, 4]);
    assert_eq!(read_edit_with(&app, &neighbour, &app.token).await.0, 404);
    assert_eq!(lookups(&app, "found").await, 1);
    for n in 0..5 {
        let (status, body) = read_edit_with(&app, &neighbour, &random_token()).await;
        assert_eq!(status, 401, "failure {n}: {body}");
    }
    assert_eq!(
        read_edit_with(&app, &neighbour, &random_token()).await.0,
        429
    );
}
