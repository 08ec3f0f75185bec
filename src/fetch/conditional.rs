//! Conditional requests: a source fetched again is asked whether the body an earlier
//! answer's validators (`ETag`, `Last-Modified`) stand for is still current, so an
//! unchanged source costs a `304` instead of a download.

use reqwest::{header, RequestBuilder, Response};

use crate::db::SourceValidators;

/// What a fetch got.
#[derive(Debug)]
pub enum Fetch {
    /// The source answered `304 Not Modified` to a conditional request: the body the
    /// validators stand for is still current.
    NotModified,
    Body(Fetched),
}

/// A source written to disk.
#[derive(Debug)]
pub struct Fetched {
    pub bytes: u64,
    /// The body's SHA-256 and the validators it came with.
    pub validators: SourceValidators,
}

/// `request`, made conditional on `known`'s validators when there are any.
pub(super) fn ask(mut request: RequestBuilder, known: Option<&SourceValidators>) -> RequestBuilder {
    let Some(known) = known else {
        return request;
    };
    if let Some(etag) = &known.etag {
        request = request.header(header::IF_NONE_MATCH, etag);
    }
    if let Some(date) = &known.last_modified {
        request = request.header(header::IF_MODIFIED_SINCE, date);
    }
    request
}

/// The `ETag` and `Last-Modified` of `response`, each when present and sane (it is
/// echoed back in a header next time).
pub(super) fn validators(response: &Response) -> (Option<String>, Option<String>) {
    let validator = |name| {
        let value = response.headers().get(name)?.to_str().ok()?;
        (value.len() <= 256).then(|| value.to_string())
    };
    (validator(header::ETAG), validator(header::LAST_MODIFIED))
}
