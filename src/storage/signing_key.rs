//! The download-signing key: one per installation, kept in the database's `settings`
//! table so every node that shares the database signs and verifies alike.

use std::path::Path;

use crate::db::Db;

/// Length of a freshly generated signing key, and the least accepted from disk.
const SIGNING_KEY_LEN: usize = 32;
/// The key's file in a data dir from before keys moved into the database.
const SIGNING_KEY_FILE: &str = "signing.key";

/// The setting that holds the download-signing key (hex).
const SIGNING_KEY_SETTING: &str = "download_signing_key";

/// The download-signing key every node sharing `db` uses: the `settings` row, created
/// on first start. When `legacy_dir` holds a `signing.key` from before keys moved into
/// the database, that key seeds the row, so download URLs already handed out stay valid.
pub async fn shared_signing_key(db: &Db, legacy_dir: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let legacy = legacy_dir
        .map(|dir| dir.join(SIGNING_KEY_FILE))
        .filter(|path| path.exists())
        .map(std::fs::read)
        .transpose()?
        .filter(|key| key.len() >= SIGNING_KEY_LEN);
    let initial = legacy.unwrap_or_else(|| {
        let mut key = vec![0u8; SIGNING_KEY_LEN];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut key);
        key
    });
    let stored = db
        .setting_or_insert(SIGNING_KEY_SETTING, &hex::encode(initial))
        .await?;
    let key = hex::decode(stored.trim())?;
    anyhow::ensure!(
        key.len() >= SIGNING_KEY_LEN,
        "the stored signing key has {} bytes, fewer than {SIGNING_KEY_LEN}",
        key.len()
    );
    Ok(key)
}
