//! The SSRF guard against real listeners on loopback: refused hosts never see a
//! connection.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;

use reqwest::dns::Resolve;
use url::Host;

use super::*;
use crate::fetch::tests::{dest, fetcher, spawn_counting_listener, spawn_media_server};
use crate::fetch::FetchError;

#[tokio::test]
async fn loopback_ip_literal_is_refused_without_a_connection() {
    let (addr, accepted) = spawn_counting_listener().await;
    let (_dir, dest) = dest();
    let url = Url::parse(&format!("http://{addr}/")).unwrap();
    let err = fetcher(false).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::ForbiddenAddress(a) if a == "127.0.0.1"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_without_a_connection() {
    let (addr, accepted) = spawn_counting_listener().await;
    let (_dir, dest) = dest();
    // The fetcher leaves names to the guarded resolver (check_url's early refusal of
    // "localhost" is not on this path), so this exercises the resolver end to end.
    let url = Url::parse(&format!("http://localhost:{}/", addr.port())).unwrap();
    let err = fetcher(false).fetch_to_file(&url, &dest).await.unwrap_err();
    assert!(
        matches!(&err, FetchError::ForbiddenAddress(h) if h == "localhost"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_resolver_refuses_names_with_a_non_public_address() {
    let resolver = GuardedResolver;
    let err = match resolver.resolve("localhost".parse().unwrap()).await {
        Ok(_) => panic!("localhost must be refused"),
        Err(e) => e,
    };
    assert!(err.downcast_ref::<RefusedName>().is_some(), "{err}");
}

#[tokio::test]
async fn a_redirect_from_an_allowed_source_to_a_private_address_is_refused() {
    let server = spawn_media_server().await;
    let (private, accepted) = spawn_counting_listener().await;
    let fetcher = fetcher(false).trust_for_tests(&[server.addr]);
    let (_dir, dest) = dest();

    // The trusted first hop really is fetched under the guard.
    fetcher
        .fetch_to_file(&server.url("/ok"), &dest)
        .await
        .unwrap();

    for target in [
        format!("http://{private}/"),
        format!("http://localhost:{}/", private.port()),
        format!("http://[::ffff:127.0.0.1]:{}/", private.port()),
    ] {
        let mut url = server.url("/goto");
        url.query_pairs_mut().append_pair("to", &target);
        let err = fetcher.fetch_to_file(&url, &dest).await.unwrap_err();
        assert!(
            matches!(err, FetchError::ForbiddenAddress(_)),
            "{target}: {err:?}"
        );
    }
    assert_eq!(server.hits(), 4, "the first hop was fetched each time");
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

const REFUSED_UNLESS_PRIVATE: &[&str] = &[
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://169.254.169.254/latest/meta-data",
    "http://0.0.0.0/",
    "http://10.1.2.3/",
    "https://192.168.1.1:8443/x.png",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://api.localhost/",
];

#[test]
fn the_url_parser_normalises_odd_ipv4_spellings() {
    for spelling in [
        "http://2130706433/",
        "http://0x7f.1/",
        "http://017700000001/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://127.0.0.1./",
    ] {
        let url = Url::parse(spelling).unwrap();
        assert_eq!(
            url.host(),
            Some(Host::Ipv4(std::net::Ipv4Addr::LOCALHOST)),
            "{spelling}"
        );
    }
}

#[test]
fn non_public_hosts_are_refused_unless_private_sources_are_allowed() {
    for url in REFUSED_UNLESS_PRIVATE {
        let err = check_url(url, false).unwrap_err();
        assert!(
            matches!(err, FetchError::ForbiddenAddress(_)),
            "{url}: {err:?}"
        );
        assert!(check_url(url, true).is_ok(), "{url} with allow_private");
    }
}

#[test]
fn malformed_or_unsupported_urls_are_invalid_either_way() {
    for url in [
        "ftp://example.com/a.png",
        "file:///etc/passwd",
        "data:image/png;base64,AAAA",
        "/relative/a.png",
        "a.png",
        "",
        "http://",
        "http://user:pass@example.com/a.png",
        "http://user@example.com/a.png",
    ] {
        for allow_private in [false, true] {
            let err = check_url(url, allow_private).unwrap_err();
            assert!(matches!(err, FetchError::InvalidUrl), "{url}: {err:?}");
            assert_eq!(err.code(), "invalid_source_url");
        }
    }
}

#[test]
fn public_urls_are_accepted() {
    for url in [
        "https://example.com/a.png",
        "http://example.com:8080/a.png?x=1",
        "http://8.8.8.8/a.png",
        "http://[2606:4700:4700::1111]/a.png",
    ] {
        assert_eq!(check_url(url, false).unwrap().as_str(), url);
    }
}

#[test]
fn trusted_test_addresses_only_match_their_port() {
    let trusted: SocketAddr = "127.0.0.1:4000".parse().unwrap();
    let ok = Url::parse("http://127.0.0.1:4000/a").unwrap();
    let other_port = Url::parse("http://127.0.0.1:4001/a").unwrap();
    assert!(check_parsed(&ok, false, &[trusted]).is_ok());
    assert!(check_parsed(&other_port, false, &[trusted]).is_err());
}
