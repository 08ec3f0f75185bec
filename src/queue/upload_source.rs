//! An asset whose `src` is one of this service's uploads: read from the object store,
//! never fetched over HTTP, and only for the organization that uploaded it. It is
//! still limited like any source (`--max-source-bytes`) and sniffed after.

use std::path::Path;
use std::time::SystemTime;

use crate::db::{unix_ms, Db, SourceValidators, UploadPart};
use crate::error_code::Code;
use crate::fetch::{Fetch, FetchError, Fetched};
use crate::queue::error::JobError;
use crate::storage::Storage;

/// Writes upload `id` of `org` into `dest`, at most `max_bytes` (`--max-source-bytes`). `UploadNotFound` when it expired or was
/// deleted since the edit was created.
pub async fn read_upload(
    (db, storage, max_bytes): (&Db, &Storage, u64),
    org: &str,
    id: &str,
    dest: &Path,
) -> Result<Fetch, JobError> {
    let parts = upload_parts_of((db, max_bytes), org, id).await?;
    let keys = parts.into_iter().map(|p| p.object_key).collect();
    let (bytes, sha256) = storage
        .concatenate_into(keys, dest)
        .await
        .map_err(|e| internal(&e))?;
    Ok(Fetch::Body(Fetched {
        bytes,
        validators: SourceValidators {
            etag: None,
            last_modified: None,
            sha256,
        },
    }))
}

/// The stored parts of upload `id` of `org`, in order, once it is complete and no
/// larger than `max_bytes`; `UploadNotFound` when it expired or was deleted.
pub async fn upload_parts_of(
    (db, max_bytes): (&Db, u64),
    org: &str,
    id: &str,
) -> Result<Vec<UploadPart>, JobError> {
    let now = unix_ms(SystemTime::now());
    let row = db
        .get_upload(&org.into(), &id.into(), now)
        .await
        .map_err(|e| internal(&e))?;
    let Some(row) = row.filter(|r| r.is_complete()) else {
        return Err(JobError::new(
            Code::UploadNotFound,
            format!("Upload \"{id}\" is gone (it expired or was deleted); upload the file again."),
            false,
        ));
    };
    if row.received as u64 > max_bytes {
        return Err(FetchError::TooLarge(max_bytes).into());
    }
    db.upload_parts(id).await.map_err(|e| internal(&e))
}

fn internal(e: &dyn std::fmt::Display) -> JobError {
    tracing::warn!(error = %e, "reading an upload failed");
    JobError::internal(true)
}
