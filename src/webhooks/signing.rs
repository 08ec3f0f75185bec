//! Signing per the Standard Webhooks specification, with the specification's own
//! library (`standardwebhooks`): `webhook-id`, `webhook-timestamp` and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by
//! the organization's `whsec_<base64>` secret. During the 24 hours after a rotation the
//! signature header carries one signature per secret, space-separated, which every
//! Standard Webhooks verifier accepts.

use base64::Engine;
use standardwebhooks::Webhook;

use crate::db::WebhookSecrets;

/// How long a rotated-out secret keeps signing, in ms.
pub const ROTATION_OVERLAP_MS: i64 = 24 * 3600 * 1000;

/// A new secret: 32 random bytes, `whsec_` and their base64.
pub fn new_secret() -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// The `webhook-signature` value for one attempt: by the current secret, and by the
/// previous one while the overlap lasts.
pub fn signature(
    secrets: &WebhookSecrets,
    now_ms: i64,
    id: &str,
    timestamp: i64,
    body: &str,
) -> anyhow::Result<String> {
    let mut keys = vec![secrets.current.as_str()];
    if let Some((previous, rotated_at)) = &secrets.previous {
        if now_ms - rotated_at < ROTATION_OVERLAP_MS {
            keys.push(previous);
        }
    }
    let signatures = keys
        .into_iter()
        .map(|key| {
            Webhook::new(key)
                .and_then(|webhook| webhook.sign(id, timestamp, body.as_bytes()))
                .map_err(|e| anyhow::anyhow!("signing a webhook failed: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(current: &str) -> WebhookSecrets {
        WebhookSecrets {
            current: current.into(),
            previous: None,
        }
    }

    #[test]
    fn signatures_match_the_specifications_example() {
        // The example of the Standard Webhooks specification (spec/standard-webhooks.md).
        let signed = signature(
            &only("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            0,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn both_secrets_sign_during_the_overlap_and_only_the_new_one_after() {
        let rotated_at = 1_000_000;
        let secrets = WebhookSecrets {
            current: new_secret(),
            previous: Some((new_secret(), rotated_at)),
        };
        let during = signature(&secrets, rotated_at + 1000, "msg_1", 1, "{}").unwrap();
        assert_eq!(during.split(' ').count(), 2, "{during}");
        let after =
            signature(&secrets, rotated_at + ROTATION_OVERLAP_MS, "msg_1", 1, "{}").unwrap();
        assert_eq!(after.split(' ').count(), 1);
        assert_eq!(
            during.split(' ').next(),
            Some(after.as_str()),
            "the current one first"
        );
    }

    #[test]
    fn a_new_secret_is_whsec_and_32_bytes_of_base64() {
        let secret = new_secret();
        let encoded = secret.strip_prefix("whsec_").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(bytes.len(), 32);
        assert_ne!(secret, new_secret());
    }
}
