//! Downloading source media: http(s) only, byte-capped, time-limited (a total limit,
//! and the stall rules of [`pace`] for sources that trickle), and guarded against
//! server-side request forgery at connect time.
//!
//! The SSRF guard has two halves, because reqwest only consults a resolver for names:
//! - host names go through [`GuardedResolver`], which refuses a name when **any** of its
//!   addresses is not public, before a connection is attempted;
//! - IP-literal hosts are checked by [`check_url`] on the initial URL and on every
//!   redirect hop, which this module follows itself instead of letting reqwest do it.

mod conditional;
mod error;
mod guard;
mod ip;
mod pace;
#[cfg(test)]
mod tests;
mod words;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::{header, StatusCode};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use url::Url;

pub use conditional::{Fetch, Fetched};
pub use error::FetchError;
use error::{error_chain, map_request_error, root_cause};
pub use guard::check_url;
pub use ip::is_public_ip;
pub use words::general_words;

use guard::{check_parsed, GuardedResolver};
pub use pace::{Stall, StallLimits};

use pace::Pace;

use crate::db::SourceValidators;

/// Sent with every source request.
const USER_AGENT: &str = concat!("mediaedit/", env!("CARGO_PKG_VERSION"));

/// Settings for source downloads.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Allow sources that resolve to loopback/private/link-local/... addresses (tests, intranets).
    pub allow_private: bool,
    /// Largest source accepted, in bytes.
    pub max_bytes: u64,
    /// Limit for establishing a TCP/TLS connection.
    pub connect_timeout: Duration,
    /// Limit for the whole download, redirects included.
    pub total_timeout: Duration,
    /// Redirect hops followed at most.
    pub max_redirects: usize,
    /// When a source that trickles or stalls is given up early.
    pub stall: StallLimits,
}

/// An HTTP client under the rules sources are fetched by (and webhooks sent by): no
/// environment proxies, no automatic redirects, and unless `allow_private` the guarded
/// resolver, so a name is refused at connect time when it resolves to a non-public
/// address. IP literals are the caller's to check (`check_url`).
pub fn guarded_client(allow_private: bool) -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    match allow_private {
        true => builder,
        false => builder.dns_resolver(Arc::new(GuardedResolver)),
    }
}

/// Downloads sources; one per process, cheap to clone.
#[derive(Clone)]
pub struct Fetcher {
    config: FetchConfig,
    client: reqwest::Client,
    /// IP-literal `ip:port` pairs treated as public; empty outside tests (see
    /// [`Fetcher::trust_for_tests`]).
    trusted: Arc<[SocketAddr]>,
}

impl Fetcher {
    /// Builds the HTTP client: no environment proxies, no automatic redirects, the
    /// guarded resolver unless `allow_private`. `Err(Client)` only if the TLS backend
    /// cannot be initialised.
    /// The largest source accepted (`--max-source-bytes`), uploads included.
    pub fn max_bytes(&self) -> u64 {
        self.config.max_bytes
    }

    /// This fetcher with a smaller byte cap (a subtitles file's 1 MiB): the same
    /// client, guards and time limits.
    pub fn capped(&self, max_bytes: u64) -> Fetcher {
        let mut capped = self.clone();
        capped.config.max_bytes = max_bytes.min(self.config.max_bytes);
        capped
    }

    pub fn new(config: FetchConfig) -> Result<Self, FetchError> {
        let client = guarded_client(config.allow_private)
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| FetchError::Client(error_chain(&e)))?;
        Ok(Fetcher {
            config,
            client,
            trusted: Arc::from(Vec::new()),
        })
    }

    /// Treats these IP-literal `ip:port` pairs as public, so a test can serve the first
    /// hop of a redirect from 127.0.0.1 while private sources stay refused.
    #[cfg(test)]
    pub(crate) fn trust_for_tests(mut self, addrs: &[SocketAddr]) -> Self {
        self.trusted = Arc::from(addrs.to_vec());
        self
    }

    /// Streams `url` into `dest` (created or truncated), following up to `max_redirects`
    /// redirects, and returns the number of bytes written.
    ///
    /// On error, `dest` is removed (best effort) so that no partial download looks
    /// complete. See [`FetchError`] for what each outcome means.
    pub async fn fetch_to_file(&self, url: &Url, dest: &Path) -> Result<u64, FetchError> {
        match self.fetch_to_file_if(url, dest, None).await? {
            Fetch::Body(fetched) => Ok(fetched.bytes),
            Fetch::NotModified => Err(FetchError::HttpStatus(304)),
        }
    }

    /// [`Fetcher::fetch_to_file`], as a conditional request when `known` holds the
    /// validators (`ETag`, `Last-Modified`) of an earlier answer: `NotModified` when
    /// the source says that answer still holds (nothing is written), else the body
    /// with its SHA-256 and new validators.
    pub async fn fetch_to_file_if(
        &self,
        url: &Url,
        dest: &Path,
        known: Option<&SourceValidators>,
    ) -> Result<Fetch, FetchError> {
        let fetch = self.fetch(url, dest, known);
        let outcome = tokio::time::timeout(self.config.total_timeout, fetch).await;
        let result = outcome.unwrap_or(Err(FetchError::Timeout));
        if result.is_err() {
            // Ignored on purpose: the file may never have been created, and the caller
            // removes its temp dir anyway.
            let _ = tokio::fs::remove_file(dest).await;
        }
        result
    }

    async fn fetch(
        &self,
        url: &Url,
        dest: &Path,
        known: Option<&SourceValidators>,
    ) -> Result<Fetch, FetchError> {
        let mut current = url.clone();
        let mut redirects = 0;
        loop {
            check_parsed(&current, self.config.allow_private, &self.trusted)?;
            tracing::debug!(source = %crate::telemetry::url_for_log(&current), "requesting source");
            let requested = Instant::now();
            let first_byte_deadline = requested + self.config.stall.first_byte_timeout;
            let request = conditional::ask(self.client.get(current.clone()), known);
            let response = tokio::time::timeout_at(first_byte_deadline.into(), request.send())
                .await
                .map_err(|_| Stall::NoFirstByte {
                    secs: self.config.stall.first_byte_timeout.as_secs(),
                })?
                .map_err(|e| map_request_error(&e, &current))?;
            let status = response.status();
            if is_followed_redirect(status) {
                if redirects == self.config.max_redirects {
                    return Err(FetchError::TooManyRedirects(self.config.max_redirects));
                }
                redirects += 1;
                current = redirect_target(&current, &response)?;
                continue;
            }
            if status == StatusCode::NOT_MODIFIED && known.is_some() {
                return Ok(Fetch::NotModified);
            }
            if !status.is_success() {
                return Err(FetchError::HttpStatus(status.as_u16()));
            }
            let (etag, last_modified) = conditional::validators(&response);
            let (bytes, sha256) = self.stream_body(response, requested, dest).await?;
            return Ok(Fetch::Body(Fetched {
                bytes,
                validators: SourceValidators {
                    etag,
                    last_modified,
                    sha256,
                },
            }));
        }
    }

    /// Writes the body to `dest` under the byte cap and the stall rules, timed from
    /// `requested` (when the request was sent); returns its length and SHA-256 (hex).
    async fn stream_body(
        &self,
        response: reqwest::Response,
        requested: Instant,
        dest: &Path,
    ) -> Result<(u64, String), FetchError> {
        let max = self.config.max_bytes;
        let mut hash = Sha256::new();
        if response.content_length().is_some_and(|len| len > max) {
            return Err(FetchError::TooLarge(max));
        }
        let file = tokio::fs::File::create(dest).await?;
        let mut out = tokio::io::BufWriter::with_capacity(64 * 1024, file);
        let mut written: u64 = 0;
        let mut body = response.bytes_stream();
        let mut pace = Pace::new(self.config.stall, requested);
        loop {
            let next = match pace.deadline() {
                // Waiting at most until the next deadline is what catches a source that
                // sends nothing at all, not only one that sends too little.
                Some(deadline) => {
                    match tokio::time::timeout_at(deadline.into(), body.next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            pace.check(Instant::now())?;
                            continue;
                        }
                    }
                }
                None => body.next().await,
            };
            let Some(chunk) = next else { break };
            let chunk = chunk.map_err(|e| {
                FetchError::Unreachable(format!(
                    "the connection broke during the download: {}",
                    root_cause(&e)
                ))
            })?;
            pace.received(chunk.len() as u64, Instant::now())?;
            written += chunk.len() as u64;
            // Checked before writing, so at most `max` bytes ever reach the disk.
            if written > max {
                return Err(FetchError::TooLarge(max));
            }
            hash.update(&chunk);
            out.write_all(&chunk).await?;
        }
        out.flush().await?;
        Ok((written, hex::encode(hash.finalize())))
    }
}

/// Redirect statuses that carry a `Location` to follow; a source is always fetched with
/// `GET`, so the method-changing distinctions between them do not matter.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// The `Location` of a redirect resolved against the URL that answered it. A redirect
/// without a usable `Location` is treated like a broken URL.
fn redirect_target(current: &Url, response: &reqwest::Response) -> Result<Url, FetchError> {
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or(FetchError::InvalidUrl)?;
    current.join(location).map_err(|_| FetchError::InvalidUrl)
}
