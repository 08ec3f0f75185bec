//! Uploads (docs/API.md): files that are not hosted anywhere, sent to the service
//! first and then named as an asset `src`. This module owns what both the API and the
//! workers need: the Upload document, the `src` URL of an upload and its reverse, part
//! keys, tus `Upload-Metadata` ([`metadata`]), finishing an upload (its hash, taken
//! once) when every byte is in, and the sweep of parts no row references.

pub mod metadata;
mod orphans;
pub use orphans::{sweep_orphan_parts, ORPHAN_GRACE};

use std::time::SystemTime;

use serde_json::{json, Value};
use url::Url;

use crate::db::timestamp;
use crate::db::{unix_ms, Db, DbError, UploadRow};
use crate::storage::{Storage, StorageError};

/// The `src` of upload `id`: `<public url>/v1/uploads/<id>/content`.
pub fn content_url(public_url: &Url, id: &str) -> String {
    format!("{}{id}/content", uploads_prefix(public_url))
}

/// `<public url>/v1/uploads/`, the start of every upload's `src`.
pub fn uploads_prefix(public_url: &Url) -> String {
    format!("{}/v1/uploads/", public_url.as_str().trim_end_matches('/'))
}

/// The upload a `src` names, when it is exactly one of this service's upload URLs.
pub fn upload_id_in(src: &str, prefix: &str) -> Option<String> {
    let id = src.strip_prefix(prefix)?.strip_suffix("/content")?;
    valid_id(id).then(|| id.to_string())
}

/// Ids are UUIDs; anything else names no upload (and is never put in a key).
pub fn valid_id(id: &str) -> bool {
    uuid::Uuid::try_parse(id).is_ok()
}

/// The key of a part of upload `id` starting at `start`; unique, so that two writers
/// racing at one offset never write the same object (only one of them is recorded).
pub fn part_key(id: &str, start: i64) -> String {
    // Short: some S3-compatible servers derive a file name from the whole key.
    let unique = &uuid::Uuid::new_v4().simple().to_string()[..12];
    format!("uploads/{id}/{start}-{unique}")
}

/// The Upload document.
pub fn render_upload(row: &UploadRow, public_url: &Url) -> Value {
    let mut attributes = json!({
        "createdAt": timestamp(row.created_at),
        "expiresAt": timestamp(row.expires_at),
        "size": row.length,
        "offset": row.received,
        "status": if row.is_complete() { "complete" } else { "uploading" },
        "src": content_url(public_url, &row.id),
    });
    if let Some(sha256) = &row.sha256 {
        attributes["sha256"] = json!(sha256);
    }
    json!({
        "type": "upload",
        "id": row.id,
        "attributes": attributes,
        "relationships": {
            "organization": {
                "links": { "self": format!("/v1/organizations/{}", row.org_id) },
                "data": { "type": "organization", "id": row.org_id },
            }
        }
    })
}

/// Deletes the objects of upload `id`: its parts, and every render cached from it
/// (docs/API.md, "Render"), so no render URL made before the delete serves it after.
/// The rows go next (`Db::delete_expired_upload`, the render cache's entries of it
/// included); cut short in between, the sweep does both again. Returns the keys of the
/// renders deleted, for this node to forget.
pub async fn delete_objects(db: &Db, storage: &Storage, id: &str) -> anyhow::Result<Vec<String>> {
    storage.delete_prefix(&format!("uploads/{id}/")).await?;
    let renders = db.render_cache_keys_of_upload(id).await?;
    for key in &renders {
        storage.delete(key).await?;
    }
    Ok(renders)
}

/// Why finishing an upload failed.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// How long the request hashing a finished upload holds its claim: past it (its node
/// stopped), the next read hashes the upload instead. Hashing 2 GiB takes seconds.
const FINISHING_CLAIM_MS: i64 = 10 * 60 * 1000;

/// Marks `row` complete once every byte is in. The upload is hashed once: by the
/// request that stored its last byte, from `whole_sha256` when that request streamed
/// every byte itself (one part), else by reading its parts back; concurrent reads meanwhile
/// find the claim taken and answer the row as stored (all bytes in, not yet
/// complete) without reading a byte. Any node may finish an upload whose claim ran
/// out (its node stopped right after the last part).
pub async fn finish(
    db: &Db,
    storage: &Storage,
    mut row: UploadRow,
    whole_sha256: Option<String>,
) -> Result<UploadRow, FinishError> {
    if !row.needs_finishing() {
        return Ok(row);
    }
    let now = unix_ms(SystemTime::now());
    if !db
        .claim_upload_finishing(&row.id, now, now + FINISHING_CLAIM_MS)
        .await?
    {
        // Hashed or being hashed elsewhere: what is stored is the answer.
        return Ok(db
            .get_upload(&row.org_id.as_str().into(), &row.id.as_str().into(), now)
            .await?
            .unwrap_or(row));
    }
    let sha256 = match whole_sha256 {
        Some(sha256) => sha256,
        None => {
            let keys = db
                .upload_parts(&row.id)
                .await?
                .into_iter()
                .map(|p| p.object_key)
                .collect();
            let mut hash = <sha2::Sha256 as sha2::Digest>::new();
            let mut stream = std::pin::pin!(storage.concatenated(keys));
            while let Some(chunk) = futures::TryStreamExt::try_next(&mut stream).await? {
                sha2::Digest::update(&mut hash, &chunk);
            }
            hex::encode(sha2::Digest::finalize(hash))
        }
    };
    db.complete_upload(&row.id, row.received, &sha256).await?;
    row.length = Some(row.received);
    row.sha256 = Some(sha256);
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_services_upload_urls_name_an_upload() {
        let public: Url = "https://media.example.com/base/".parse().unwrap();
        let prefix = uploads_prefix(&public);
        let id = "0b9e4cde-8f0a-4c1e-9d7e-2b1f3c4d5e6f";
        let src = content_url(&public, id);
        assert_eq!(
            src,
            format!("https://media.example.com/base/v1/uploads/{id}/content")
        );
        assert_eq!(upload_id_in(&src, &prefix).as_deref(), Some(id));
        assert_eq!(upload_id_in(&src.replace("/content", ""), &prefix), None);
        assert_eq!(
            upload_id_in("https://elsewhere.example/v1/uploads/x/content", &prefix),
            None
        );
        assert_eq!(
            upload_id_in(&format!("{prefix}../../etc/content"), &prefix),
            None
        );
    }
}
