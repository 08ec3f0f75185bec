//! What a log line may say of a URL or a request path: never a credential. A webhook
//! URL or a source URL may carry a token in its query (`?token=…`, an S3 presigned
//! `X-Amz-Signature`) or in its userinfo; a render URL's first segment is its
//! signature, and its source segment is the base64 of a URL that may carry either.
//! Every line that names one of these renders it through here, at every level.

use std::borrow::Cow;

use base64::Engine;
use url::Url;

/// What stands where a credential was.
pub const REDACTED: &str = "[redacted]";

/// `url` fit for a log: `scheme://host[:port]/path`, with any userinfo, query and
/// fragment replaced by [`REDACTED`] (so a reader sees that there was one, never what
/// it held): `https://[redacted]@hooks.example.com/in?[redacted]`.
pub fn url_for_log(url: &Url) -> String {
    let mut shown = format!("{}://", url.scheme());
    if !url.username().is_empty() || url.password().is_some() {
        shown.push_str(REDACTED);
        shown.push('@');
    }
    shown.push_str(url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    if url.query().is_some() {
        shown.push('?');
        shown.push_str(REDACTED);
    }
    if url.fragment().is_some() {
        shown.push('#');
        shown.push_str(REDACTED);
    }
    shown
}

/// [`url_for_log`] of a URL as stored (a webhook's); one that does not parse is not
/// shown at all, since where its credential ends cannot be told.
pub fn url_text_for_log(url: &str) -> String {
    match Url::parse(url) {
        Ok(url) => url_for_log(&url),
        Err(_) => format!("[unreadable URL: {REDACTED}]"),
    }
}

/// The path a request span records. A render path's signature becomes [`REDACTED`],
/// and so does its source unless that is an upload or a URL with nothing to hide
/// (no userinfo, query or fragment); every other path is shown as it is (queries,
/// where download signatures travel, are never recorded at all).
pub fn path_for_log(path: &str) -> Cow<'_, str> {
    const RENDER: &str = "/v1/render/";
    let Some(rest) = path.strip_prefix(RENDER) else {
        return Cow::Borrowed(path);
    };
    let mut parts = rest.splitn(3, '/');
    let _signature = parts.next();
    let mut shown = format!("{RENDER}{REDACTED}");
    if let Some(transform) = parts.next() {
        shown.push('/');
        shown.push_str(transform);
    }
    if let Some(source) = parts.next() {
        shown.push('/');
        shown.push_str(if harmless_source(source) {
            source
        } else {
            REDACTED
        });
    }
    Cow::Owned(shown)
}

/// Whether a render source segment may be logged: `upload:{id}`, or the base64url of
/// a URL without userinfo, query or fragment.
fn harmless_source(source: &str) -> bool {
    if source.starts_with("upload:") {
        return true;
    }
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let Ok(bytes) = engine.decode(source.trim_end_matches('=')) else {
        return false;
    };
    let Ok(url) = std::str::from_utf8(&bytes).map(Url::parse) else {
        return false;
    };
    url.is_ok_and(|url| {
        url.username().is_empty()
            && url.password().is_none()
            && url.query().is_none()
            && url.fragment().is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    #[test]
    fn a_url_for_a_log_keeps_scheme_host_port_and_path_and_hides_the_rest() {
        let url =
            Url::parse("https://user:pw@hooks.example.com:8443/in/x?token=SECRET#frag").unwrap();
        assert_eq!(
            url_for_log(&url),
            "https://[redacted]@hooks.example.com:8443/in/x?[redacted]#[redacted]"
        );
        let plain = Url::parse("http://[::1]/a.png").unwrap();
        assert_eq!(url_for_log(&plain), "http://[::1]/a.png");
        assert_eq!(
            url_text_for_log("https://h.example/?sig=SECRET"),
            "https://h.example/?[redacted]"
        );
        assert!(!url_text_for_log("not a url?token=SECRET").contains("SECRET"));
    }

    #[test]
    fn a_render_path_loses_its_signature_and_any_source_with_a_credential() {
        let plain = b64("https://cdn.example.com/a.jpg");
        let signed = b64("https://bucket.example.com/a.jpg?X-Amz-Signature=SECRET");
        assert_eq!(
            path_for_log(&format!("/v1/render/SIG/w:300/{plain}")),
            format!("/v1/render/[redacted]/w:300/{plain}")
        );
        assert_eq!(
            path_for_log(&format!("/v1/render/SIG/w:300/{signed}")),
            "/v1/render/[redacted]/w:300/[redacted]"
        );
        assert_eq!(
            path_for_log("/v1/render/SIG/w:300/upload:0b7c"),
            "/v1/render/[redacted]/w:300/upload:0b7c"
        );
        assert_eq!(path_for_log("/v1/render/SIG"), "/v1/render/[redacted]");
        assert_eq!(
            path_for_log("/v1/render/SIG/t/not-base64!"),
            "/v1/render/[redacted]/t/[redacted]"
        );
        assert_eq!(path_for_log("/v1/edits/abc"), "/v1/edits/abc");
    }
}
