//! The SSRF guard: which URLs a source may have, checked at creation and on every
//! redirect hop, and a resolver that refuses names with a non-public address at
//! connect time (so a name cannot be re-pointed between the check and the fetch).

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use crate::fetch::error::{FetchError, RefusedName};
use crate::fetch::ip::is_public_ip;

/// Checks what can be checked without the network: an absolute `http`/`https` URL with a
/// host and no credentials, and (unless `allow_private`) a host that is not a non-public
/// IP literal (in any spelling the URL parser accepts: `2130706433`, `0x7f.1`,
/// `[::ffff:127.0.0.1]`, ...) nor `localhost`.
///
/// `Err(InvalidUrl)` for a malformed or unsupported URL, `Err(ForbiddenAddress)` for a
/// refused host; `Ok` with the parsed URL otherwise. Names that resolve to non-public
/// addresses are only caught when fetching.
pub fn check_url(url: &str, allow_private: bool) -> Result<Url, FetchError> {
    let url = Url::parse(url).map_err(|_| FetchError::InvalidUrl)?;
    check_parsed(&url, allow_private, &[])?;
    // Only a courtesy for an early 422: when fetching, the guarded resolver refuses
    // these names anyway, as it does every name with a non-public address.
    if let Some(Host::Domain(name)) = url.host() {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if !allow_private && (name == "localhost" || name.ends_with(".localhost")) {
            return Err(FetchError::ForbiddenAddress(name));
        }
    }
    Ok(url)
}

/// Scheme, host, credentials and IP-literal checks of [`check_url`] on a parsed URL, run
/// on every hop. `trusted` lists IP-literal `ip:port` pairs treated as
/// public; it is only ever non-empty in tests.
pub(super) fn check_parsed(
    url: &Url,
    allow_private: bool,
    trusted: &[SocketAddr],
) -> Result<(), FetchError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::InvalidUrl);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::InvalidUrl);
    }
    let ip = match url.host() {
        None => return Err(FetchError::InvalidUrl),
        Some(Host::Domain("")) => return Err(FetchError::InvalidUrl),
        // Names are left to the guarded resolver, which sees the addresses actually used.
        Some(Host::Domain(_)) => return Ok(()),
        Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
    };
    if allow_private || is_public_ip(ip) {
        return Ok(());
    }
    let port = url.port_or_known_default().unwrap_or(0);
    if trusted.contains(&SocketAddr::new(ip, port)) {
        return Ok(());
    }
    Err(FetchError::ForbiddenAddress(ip.to_string()))
}

/// Resolves with the system resolver and refuses a name when any of its addresses is
/// not public. Refusing on any (rather than dropping the bad ones) keeps a name that
/// mixes a public and an internal address from reaching the internal one on a retry or
/// a happy-eyeballs fallback, and it is the easier rule to reason about.
pub(super) struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port on every address afterwards.
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if addrs.iter().any(|a| !is_public_ip(a.ip())) {
                return Err(Box::new(RefusedName { host }) as _);
            }
            if addrs.is_empty() {
                return Err(format!("{host} has no addresses").into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests;
