//! Rate limits: an organization over its budget gets 429 with `Retry-After` and the
//! `RateLimit-*` headers, and reads and writes are counted apart.

use crate::api_errors::error_of;
use crate::helpers::*;

#[tokio::test]
async fn an_organization_over_its_rate_limit_gets_429_with_retry_after() {
    let app = spawn_app_with(|c| {
        c.rate_limits.read_rate_limit_per_second = 0.5;
        c.rate_limits.read_rate_limit_burst = 3;
    })
    .await;
    for remaining in [2, 1, 0] {
        let response = app.get_edit("nope").await;
        assert_eq!(response.status(), 404);
        assert_eq!(header_number(&response, "ratelimit-limit"), 3);
        assert_eq!(header_number(&response, "ratelimit-remaining"), remaining);
        // Up to 6 s (3 tokens at one per 2 s) until the bucket is full again.
        let reset = header_number(&response, "ratelimit-reset");
        assert!((1..=6).contains(&reset), "{reset}");
    }
    let limited = app.get_edit("nope").await;
    let retry_after = header_number(&limited, "retry-after");
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    assert_eq!(header_number(&limited, "ratelimit-remaining"), 0);
    assert!(header_number(&limited, "ratelimit-reset") >= retry_after);
    error_of(limited, 429, "rate_limited").await;
    // Another organization has its own budget.
    let other = create_token(app.data_dir.path(), "globex").await;
    assert_eq!(app.get_edit_as(&other, "nope").await.status(), 404);
    // Unauthenticated requests are refused before they are counted.
    let anonymous = app
        .client
        .get(format!("{}/v1/edits/nope", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().get("ratelimit-limit").is_none());
}

#[tokio::test]
async fn reads_and_writes_have_budgets_of_their_own() {
    let app = spawn_app_with(|c| {
        c.rate_limits.read_rate_limit_per_second = 0.5;
        c.rate_limits.read_rate_limit_burst = 2;
        c.rate_limits.write_rate_limit_per_second = 0.5;
        c.rate_limits.write_rate_limit_burst = 50;
    })
    .await;
    for _ in 0..2 {
        assert_eq!(app.get_edit("nope").await.status(), 404);
    }
    error_of(app.get_edit("nope").await, 429, "rate_limited").await;
    // Polling used up the reads, not the writes: a POST still goes through, and says
    // where the write budget stands.
    let created = app
        .post_edit(edit(&app.fixtures.url("a.png"), &["image-to-webp"], None))
        .await;
    assert_eq!(created.status(), 201);
    assert_eq!(header_number(&created, "ratelimit-limit"), 50);
    assert_eq!(header_number(&created, "ratelimit-remaining"), 49);
}

/// A response header's value as a number.
fn header_number(response: &reqwest::Response, name: &str) -> u64 {
    response.headers()[name]
        .to_str()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}
