//! Render URLs that stop working (docs/API.md, "Render"): `exp:UNIXTIME` in the
//! transform, signed with it; `410 render_expired` from that second on, a cached copy
//! included; `Cache-Control` never past it.

use crate::backends::Backend;
use crate::fixtures;
use crate::helpers::*;
use crate::render::{b64, get, render_key, render_url};

on_both_backends!(an_expiring_url_renders_until_its_second_and_is_gone_after_even_cached);

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The `max-age` of an answer's `Cache-Control`.
fn max_age(response: &reqwest::Response) -> u64 {
    let value = response.headers()["cache-control"].to_str().unwrap();
    assert!(!value.contains("immutable"), "{value}");
    let age = value.split("max-age=").nth(1).unwrap();
    age.split(',').next().unwrap().trim().parse().unwrap()
}

async fn code_of(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap();
    (
        status,
        body["errors"][0]["code"].as_str().unwrap().to_string(),
    )
}

async fn an_expiring_url_renders_until_its_second_and_is_gone_after_even_cached(backend: Backend) {
    let app = spawn_app_on(backend, |_| {}).await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(200, 150)));

    // An hour left: rendered, kept by caches for no more than the hour.
    let later = unix_now() + 3600;
    let url = render_url(&app, &key, &format!("w:50,exp:{later}"), &photo);
    let response = get(&app, &url, None).await;
    assert_eq!(response.status(), 200);
    let age = max_age(&response);
    assert!((3590..=3600).contains(&age), "max-age {age}");
    // Moving `exp` breaks the signature.
    let moved = url.replace(&format!("exp:{later}"), &format!("exp:{}", later + 60));
    assert_eq!(
        code_of(get(&app, &moved, None).await).await,
        (403, "invalid_signature".into())
    );

    // Two seconds left: answered, then cached; past it, refused though cached.
    let soon = unix_now() + 2;
    let url = render_url(&app, &key, &format!("w:60,exp:{soon}"), &photo);
    let response = get(&app, &url, None).await;
    assert_eq!(response.status(), 200);
    assert!(max_age(&response) <= 2);
    let etag = response.headers()["etag"].clone();
    // The same picture without `exp` is the cached one.
    let forever = render_url(&app, &key, "w:60", &photo);
    let cached = get(&app, &forever, None).await;
    assert_eq!(cached.headers()["etag"], etag);
    while unix_now() < soon {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let gone = get(&app, &url, None).await;
    assert_eq!(
        code_of(gone).await,
        (410, "render_expired".into()),
        "after {soon}"
    );
    let conditional = app
        .client
        .get(&url)
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(conditional.status(), 410);
    assert_eq!(get(&app, &forever, None).await.status(), 200);
}

#[tokio::test]
async fn a_url_past_its_exp_is_410_and_a_malformed_exp_is_422() {
    let app = spawn_app().await;
    let key = render_key(&app).await;
    let photo = b64(&app.fixtures.add("photo.jpg", fixtures::jpeg(80, 60)));
    let past = render_url(&app, &key, &format!("w:40,exp:{}", unix_now() - 1), &photo);
    assert_eq!(
        code_of(get(&app, &past, None).await).await,
        (410, "render_expired".into())
    );
    let bad = render_url(&app, &key, "w:40,exp:tomorrow", &photo);
    assert_eq!(
        code_of(get(&app, &bad, None).await).await,
        (422, "invalid_transform".into())
    );
}
