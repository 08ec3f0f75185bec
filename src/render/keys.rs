//! Checking a render URL's signature: base64url of HMAC-SHA256 of
//! `{transform}/{source}`, keyed by the bytes of one of an organization's render keys
//! (`rk_…`, as `mediaedit render-key create` prints it). The URL does not say whose
//! key signed it: the signature is checked against every key, and the key that matches
//! names the organization.
//!
//! The keys are held in memory, read again from the database at most every
//! [`REFRESH`] (so a revoked key stops working on every node within it); a signature
//! no key matches reads them again at once, but at most once per [`MISS_REFRESH`], so a
//! key made a moment ago works within a quarter of a second, and a flood of bad
//! signatures costs the database at most four reads a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::db::{Db, DbError};

type HmacSha256 = Hmac<Sha256>;

/// How long the keys read from the database are used.
pub const REFRESH: Duration = Duration::from_secs(5);
/// How soon after a read a signature no key matches may read them again.
const MISS_REFRESH: Duration = Duration::from_millis(250);

/// Each key's organization and its loaded MAC state.
type Keys = Arc<Vec<(String, HmacSha256)>>;

/// Every organization's render keys, as loaded MAC states.
pub struct KeyRing {
    db: Db,
    loaded: tokio::sync::Mutex<Option<(Instant, Keys)>>,
}

impl KeyRing {
    pub fn new(db: Db) -> KeyRing {
        KeyRing {
            db,
            loaded: tokio::sync::Mutex::new(None),
        }
    }

    /// The organization whose key signed `message` with `signature` (base64url, padded
    /// or not); `None` when no key did (or the signature does not even decode).
    pub async fn organization(
        &self,
        signature: &str,
        message: &str,
    ) -> Result<Option<String>, DbError> {
        let Some(signature) = decode(signature) else {
            return Ok(None);
        };
        let (keys, fresh) = self.keys(REFRESH).await?;
        if let Some(org) = find(&keys, &signature, message) {
            return Ok(Some(org));
        }
        if fresh {
            return Ok(None);
        }
        let (keys, _) = self.keys(MISS_REFRESH).await?;
        Ok(find(&keys, &signature, message))
    }

    /// The keys, read again when older than `max_age`; and whether they were read now.
    async fn keys(&self, max_age: Duration) -> Result<(Keys, bool), DbError> {
        let mut loaded = self.loaded.lock().await;
        if let Some((at, keys)) = loaded.as_ref() {
            if at.elapsed() < max_age {
                return Ok((keys.clone(), false));
            }
        }
        let keys: Vec<(String, HmacSha256)> = self
            .db
            .all_render_keys()
            .await?
            .into_iter()
            .map(|row| {
                let mac = HmacSha256::new_from_slice(row.secret.as_bytes())
                    .expect("HMAC accepts keys of any length");
                (row.org_id, mac)
            })
            .collect();
        let keys = Arc::new(keys);
        *loaded = Some((Instant::now(), keys.clone()));
        Ok((keys, true))
    }
}

/// The signature's 32 bytes.
fn decode(signature: &str) -> Option<Vec<u8>> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(signature.trim_end_matches('='))
        .ok()?;
    (bytes.len() == 32).then_some(bytes)
}

/// The organization of the key that signed `message` so (compared in constant time).
fn find(keys: &[(String, HmacSha256)], signature: &[u8], message: &str) -> Option<String> {
    keys.iter().find_map(|(org, mac)| {
        let mut mac = mac.clone();
        mac.update(message.as_bytes());
        mac.verify_slice(signature).is_ok().then(|| org.clone())
    })
}

/// The signature of `message` under `key`: what a client computes (tests and docs).
pub fn sign(key: &str, message: &str) -> String {
    let mut mac =
        HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(message.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_matches_only_its_key_and_message() {
        let key = |secret: &str| HmacSha256::new_from_slice(secret.as_bytes()).unwrap();
        let keys = vec![
            ("a".to_string(), key("rk_a")),
            ("b".to_string(), key("rk_b")),
        ];
        let message = "w:300/aHR0cHM6Ly9leGFtcGxlLmNvbS9hLmpwZw";
        let signature = decode(&sign("rk_b", message)).unwrap();
        assert_eq!(find(&keys, &signature, message).as_deref(), Some("b"));
        assert_eq!(find(&keys, &signature, "w:301/x"), None);
        assert_eq!(decode("not base64!"), None);
        assert_eq!(decode("c2hvcnQ"), None);
        // Padded base64url reads the same.
        let padded = format!("{}=", sign("rk_a", message));
        assert_eq!(
            find(&keys, &decode(&padded).unwrap(), message).as_deref(),
            Some("a")
        );
    }
}
