//! The `webhook` field of an edit request (docs/API.md): `{"url": "https://…"}`,
//! held to the same URL and address rules as an asset's `src`.

use serde_json::Value;
use url::Url;

use super::error::ValidationError;
use super::options::escape_pointer;
use super::rules::{ValidationRules, MAX_URL_LEN};
use crate::error_code::Code;
use crate::fetch::{self, FetchError};

/// The URL the edit's endings are posted to, when the request names one.
pub fn parse_webhook(
    value: Option<&Value>,
    rules: &ValidationRules,
) -> Result<Option<Url>, ValidationError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let Value::Object(webhook) = value else {
        return Err(ValidationError::new(
            Code::InvalidType,
            "/webhook",
            "`webhook` must be an object: {\"url\": \"https://…\"}.",
        ));
    };
    if let Some(extra) = webhook.keys().find(|k| k.as_str() != "url") {
        return Err(ValidationError::new(
            Code::UnknownField,
            format!("/webhook/{}", escape_pointer(extra)),
            format!("`{extra}` is not a field of a webhook; the only field is url."),
        ));
    }
    let url = match webhook.get("url") {
        None => {
            return Err(ValidationError::new(
                Code::MissingField,
                "/webhook/url",
                "`url` is required.",
            ))
        }
        Some(Value::String(url)) => url,
        Some(_) => {
            return Err(ValidationError::new(
                Code::InvalidType,
                "/webhook/url",
                "`url` must be a string.",
            ))
        }
    };
    if url.len() > MAX_URL_LEN {
        return Err(ValidationError::new(
            Code::InvalidUrl,
            "/webhook/url",
            format!(
                "`url` is {} bytes long; at most {MAX_URL_LEN} are allowed.",
                url.len()
            ),
        ));
    }
    fetch::check_url(url, rules.allow_private_sources)
        .map(Some)
        .map_err(|e| match e {
            FetchError::ForbiddenAddress(addr) => ValidationError::new(
                Code::SourceAddressForbidden,
                "/webhook/url",
                format!("The webhook `url` points at {addr}, which is not a public address."),
            ),
            _ => ValidationError::new(
                Code::InvalidUrl,
                "/webhook/url",
                "The webhook `url` must be an absolute http or https URL.",
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(value: Value) -> Result<Option<Url>, ValidationError> {
        parse_webhook(Some(&value), &ValidationRules::default())
    }

    #[test]
    fn a_public_https_url_is_taken() {
        let url = parsed(json!({"url": "https://hooks.example.com/mediaedit"})).unwrap();
        assert_eq!(url.unwrap().as_str(), "https://hooks.example.com/mediaedit");
        assert_eq!(
            parse_webhook(None, &ValidationRules::default()).unwrap(),
            None
        );
    }

    #[test]
    fn anything_else_is_refused_where_it_is_wrong() {
        for (value, code, pointer) in [
            (json!("https://a.example"), Code::InvalidType, "/webhook"),
            (json!({}), Code::MissingField, "/webhook/url"),
            (json!({"url": 3}), Code::InvalidType, "/webhook/url"),
            (
                json!({"url": "ftp://a.example/"}),
                Code::InvalidUrl,
                "/webhook/url",
            ),
            (
                json!({"url": "http://127.0.0.1/"}),
                Code::SourceAddressForbidden,
                "/webhook/url",
            ),
            (
                json!({"url": "https://a.example", "secret": "x"}),
                Code::UnknownField,
                "/webhook/secret",
            ),
        ] {
            let error = parsed(value.clone()).unwrap_err();
            assert_eq!(
                (error.code, error.pointer.as_str()),
                (code, pointer),
                "{value}"
            );
        }
    }
}
