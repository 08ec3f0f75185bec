use base64::Engine;
use url::Url;

use super::job::*;
use crate::commands::{Command, Options};
use crate::error_code::Code;

#[test]
fn a_source_is_an_upload_or_the_base64url_of_an_http_url() {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    assert_eq!(
        parse_source(&b64("https://example.com/a.jpg?x=1")),
        Ok(Source::Url(
            Url::parse("https://example.com/a.jpg?x=1").unwrap()
        ))
    );
    let id = "0b9e4cde-8f0a-4c1e-9d7e-2b1f3c4d5e6f";
    assert_eq!(
        parse_source(&format!("upload:{id}")),
        Ok(Source::Upload(id.into()))
    );
    for bad in [b64("ftp://example.com/a"), b64("/relative"), "%%%".into()] {
        assert_eq!(
            parse_source(&bad).unwrap_err().code,
            Code::InvalidUrl,
            "{bad}"
        );
    }
    assert_eq!(
        parse_source("upload:nope").unwrap_err().code,
        Code::UploadNotFound
    );
}

#[test]
fn results_and_sources_differ_by_options_source_and_organization() {
    let url = Source::Url(Url::parse("https://example.com/a.jpg").unwrap());
    let cmds = [Command::ResizeImage];
    let small = Options::of(&[("width", 10.into())]);
    let large = Options::of(&[("width", 20.into())]);
    assert_ne!(
        result_key("a", &cmds, &small, &url),
        result_key("a", &cmds, &large, &url)
    );
    assert_ne!(
        result_key("a", &cmds, &small, &url),
        result_key("b", &cmds, &small, &url),
        "nothing cached crosses organizations"
    );
    let upload = Source::Upload("u".into());
    assert_ne!(
        result_key("a", &cmds, &small, &upload),
        result_key("b", &cmds, &small, &upload)
    );
    let a = Url::parse("https://example.com/a.jpg").unwrap();
    let b = Url::parse("https://example.com/b.jpg").unwrap();
    assert_eq!(source_key("a", &a), source_key("a", &a));
    assert_ne!(source_key("a", &a), source_key("b", &a));
    assert_ne!(source_key("a", &a), source_key("a", &b));
}
