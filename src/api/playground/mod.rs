//! `GET /`: the playground — one page, served from the binary, that drives the public
//! API the way a client would (uploads with progress, the command catalog, dry runs,
//! long polls, downloads). Its style and script are written in their own files and
//! inlined into the page when it is first served, so it is one request with nothing
//! loaded from elsewhere, under a Content-Security-Policy that allows exactly those two
//! inline blocks (by hash) and requests to this origin only.

use std::sync::LazyLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use sha2::{Digest, Sha256};

const TEMPLATE: &str = include_str!("index.html");
/// hls.js (npm `hls.js` 1.7.4, the light build, Apache-2.0: `assets/hls.js/`), which
/// the page loads from this origin to preview HLS outputs where the browser plays no
/// HLS itself.
const HLS_JS: &str = include_str!("../../../assets/hls.js/hls.light.min.js");
const STYLE: &str = include_str!("playground.css");
/// The API client first, then the page that uses it, part by part (one script: each
/// file's functions are the others' to call).
const SCRIPT: &str = concat!(
    include_str!("api.js"),
    include_str!("compose.js"),
    include_str!("options.js"),
    include_str!("request.js"),
    include_str!("presets.js"),
    include_str!("placeholders.js"),
    include_str!("result.js"),
    include_str!("chapters.js")
);

/// The page as served, and the policy that goes with it.
struct Page {
    html: String,
    content_security_policy: String,
}

static PAGE: LazyLock<Page> = LazyLock::new(|| {
    Page {
    html: TEMPLATE
        .replace("<style></style>", &format!("<style>{STYLE}</style>"))
        .replace("<script></script>", &format!("<script>{SCRIPT}</script>")),
    content_security_policy: format!(
        "default-src 'none'; script-src 'self' '{}'; style-src '{}'; \
         connect-src 'self' http: https:; \
         img-src * data: blob:; media-src * blob:; object-src blob:; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'",
        sha256_source(SCRIPT),
        sha256_source(STYLE)
    ),
}
});

/// A CSP hash source: `sha256-<base64>` of the block's exact text.
fn sha256_source(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// `GET /`: the playground page.
#[utoipa::path(get, path = "/", operation_id = "playground", tag = "operations", security(()),
    responses((status = 200, description = "The playground: a page to try the API in a browser", content_type = "text/html")))]
pub async fn page() -> Response {
    let page = &*PAGE;
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                page.content_security_policy.as_str(),
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        page.html.clone(),
    )
        .into_response()
}

/// `GET /playground/hls.light.min.js`: the vendored hls.js.
#[utoipa::path(get, path = "/playground/hls.light.min.js", operation_id = "playgroundHlsJs", tag = "operations", security(()),
    responses((status = 200, description = "hls.js, which the playground plays HLS outputs with", content_type = "text/javascript")))]
pub async fn hls_js() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        HLS_JS,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_inlines_its_style_and_script_and_loads_nothing_from_elsewhere() {
        let html = &PAGE.html;
        assert!(html.contains(STYLE) && html.contains(SCRIPT));
        assert_eq!(html.matches("<script").count(), 1, "one inline script");
        assert!(!html.contains(" src=\"http") && !html.contains(" href=\"http"));
        assert!(!html.contains("<link rel=\"stylesheet\""));
    }

    #[test]
    fn the_policy_allows_exactly_the_inlined_blocks() {
        let csp = &PAGE.content_security_policy;
        assert!(csp.contains(&format!("script-src 'self' '{}'", sha256_source(SCRIPT))));
        assert!(csp.contains(&format!("style-src '{}'", sha256_source(STYLE))));
        // Downloads (HLS segments, a storyboard's VTT) come from the public URL.
        assert!(csp.contains("connect-src 'self' http: https:"));
    }
}
