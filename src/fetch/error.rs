//! Why a source could not be fetched, and how a failed request is told apart.

use url::Url;

use super::pace::Stall;
use crate::error_code::Code;

/// The resolver's refusal, found again in reqwest's error chain by type.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to a non-public address")]
pub(super) struct RefusedName {
    pub host: String,
}

/// Why a source could not be fetched. Each variant has a stable code and says whether
/// a later attempt may succeed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not an absolute http(s) URL with a host and without credentials, or a redirect
    /// to such a URL.
    #[error("the URL is not an absolute http or https URL")]
    InvalidUrl,
    /// The host is, or resolves to, a non-public address (and private sources are not
    /// allowed). Nothing was sent to it.
    #[error("the source address {0} is not a public address")]
    ForbiddenAddress(String),
    /// The final response was not a 2xx.
    #[error("the source answered HTTP {0}")]
    HttpStatus(u16),
    /// The body (or its announced length) exceeds `max_bytes`.
    #[error("the source is larger than the limit of {0} bytes")]
    TooLarge(u64),
    /// Connecting took longer than `connect_timeout`, or the whole download longer than
    /// `total_timeout`.
    #[error("the source did not answer in time")]
    Timeout,
    /// The source broke a stall rule: no first byte in time, or too slow a transfer.
    #[error(transparent)]
    Stalled(#[from] Stall),
    /// The name did not resolve, the connection was refused or broke, or TLS failed.
    #[error("the source could not be reached: {0}")]
    Unreachable(String),
    /// More than `max_redirects` redirects.
    #[error("the source redirected more than {0} times")]
    TooManyRedirects(usize),
    /// Writing the downloaded bytes to the destination file failed.
    #[error("writing the source to disk failed: {0}")]
    Io(#[from] std::io::Error),
    /// The HTTP client could not be built (a TLS backend problem); only from [`Fetcher::new`].
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
}

impl FetchError {
    pub fn code(&self) -> Code {
        match self {
            FetchError::InvalidUrl => Code::InvalidSourceUrl,
            FetchError::ForbiddenAddress(_) => Code::SourceAddressForbidden,
            FetchError::HttpStatus(_) => Code::SourceHttpError,
            FetchError::TooLarge(_) => Code::SourceTooLarge,
            FetchError::Timeout | FetchError::Stalled(_) => Code::SourceTimeout,
            FetchError::Unreachable(_) => Code::SourceUnreachable,
            FetchError::TooManyRedirects(_) => Code::SourceTooManyRedirects,
            FetchError::Io(_) | FetchError::Client(_) => Code::InternalError,
        }
    }

    /// 5xx, 408, 429, timeouts and connection trouble are worth another try; the rest is final.
    ///
    /// A name that does not resolve counts as connection trouble: the system resolver
    /// does not reliably tell "no such name" from "DNS server unreachable", and the
    /// number of attempts is bounded anyway.
    pub fn is_retryable(&self) -> bool {
        match self {
            FetchError::HttpStatus(s) => *s >= 500 || *s == 408 || *s == 429,
            FetchError::Timeout
            | FetchError::Stalled(_)
            | FetchError::Unreachable(_)
            | FetchError::Io(_) => true,
            _ => false,
        }
    }

    /// Retries this failure deserves at most, when fewer than the job's own limit:
    /// one for a source that timed out or stalled. Such a source is most likely slow
    /// on purpose or overloaded, and each attempt holds a fetch slot for the whole
    /// limit, so five attempts would cost five times that; one retry still covers a
    /// passing hiccup.
    pub fn max_retries(&self) -> Option<u32> {
        match self {
            FetchError::Timeout | FetchError::Stalled(_) => Some(1),
            _ => None,
        }
    }
}

/// Classifies a failed request. The resolver's refusal is recognised by finding
/// [`RefusedName`] in the error's source chain, where reqwest and hyper leave it.
pub(super) fn map_request_error(err: &reqwest::Error, url: &Url) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<RefusedName>() {
            return FetchError::ForbiddenAddress(refused.host.clone());
        }
        source = e.source();
    }
    if err.is_timeout() {
        return FetchError::Timeout;
    }
    let host = url.host_str().unwrap_or_default();
    FetchError::Unreachable(format!("{host}: {}", root_cause(err)))
}

/// The innermost error's message, which names the actual problem ("Connection refused",
/// "failed to lookup address information", ...) without reqwest's URL.
pub(super) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut e = err;
    while let Some(next) = e.source() {
        e = next;
    }
    e.to_string()
}

/// Every message in the chain, for errors that are logged rather than shown.
pub(super) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut e = err;
    while let Some(next) = e.source() {
        parts.push(next.to_string());
        e = next;
    }
    parts.join(": ")
}
