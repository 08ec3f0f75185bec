//! Storing an upload's bytes: one part per body, streamed to the object store and then
//! recorded, or deleted again, so no part outlives its row. What may be stored is
//! bounded before a byte is read: by the free-disk floor, by the organization's
//! quota, by the upload's own length.

use std::time::SystemTime;

use axum::body::Body;
use axum::http::StatusCode;

use crate::api::error::ApiError;
use crate::api::state::AppState;
use crate::api::uploads::replies::{bad_header, finish, not_found, offset_mismatch, too_large};
use crate::db::{unix_ms, UploadPart, UploadRow};
use crate::error_code::Code;
use crate::storage::{free_disk_bytes, PutStreamError};
use crate::uploads::part_key;

use super::in_flight::InFlight;

/// `507 insufficient_storage` when a disk that would hold upload bytes (the local
/// store's, and the data dir's) has less than `--min-free-disk-bytes` free; else the
/// bytes a body may still bring before the local store's disk reaches that floor.
pub(super) fn disk_room(state: &AppState) -> Result<u64, ApiError> {
    let floor = state.uploads.min_free_disk_bytes;
    if floor == 0 {
        return Ok(u64::MAX);
    }
    let store = state.storage.local_root();
    let mut room = u64::MAX;
    for (disk, holds_parts) in [
        (store, true),
        (Some(state.probing.tmp_root.as_path()), false),
    ] {
        let Some(free) = disk.and_then(free_disk_bytes) else {
            continue;
        };
        if free < floor {
            tracing::warn!(free, floor, "too little free disk to accept an upload");
            return Err(insufficient_storage());
        }
        if holds_parts {
            room = room.min(free - floor);
        }
    }
    Ok(room)
}

pub(super) fn insufficient_storage() -> ApiError {
    ApiError::new(
        StatusCode::INSUFFICIENT_STORAGE,
        Code::InsufficientStorage,
        "The server is short of disk space and accepts no upload bytes now; try again later.",
    )
}

/// How many bytes a body of `row` may bring, and which limit says so.
struct Rooms {
    /// What `Upload-Length` leaves, or `--max-upload-bytes` when there is none.
    declared: u64,
    /// What the organization's byte quota leaves (for an upload of no declared
    /// length; a declared one was counted whole when it was created).
    quota: u64,
    disk: u64,
}

impl Rooms {
    async fn of(state: &AppState, row: &UploadRow) -> Result<Rooms, ApiError> {
        let disk = disk_room(state)?;
        let (declared, quota) = match row.length {
            Some(length) => ((length - row.received).max(0) as u64, u64::MAX),
            None => {
                let now = unix_ms(SystemTime::now());
                let used = state.db.upload_usage(&row.org_id, now).await?.bytes;
                let quota = state.uploads.max_bytes_per_org.saturating_sub(used);
                (state.uploads.max_bytes, quota)
            }
        };
        Ok(Rooms {
            declared,
            quota,
            disk,
        })
    }

    fn max(&self) -> u64 {
        self.declared.min(self.quota).min(self.disk)
    }

    /// The error of a body that brought more than [`Rooms::max`].
    fn refusal(&self, state: &AppState, row: &UploadRow, whole: bool) -> ApiError {
        if self.disk < self.declared.min(self.quota) {
            return insufficient_storage();
        }
        if self.quota < self.declared {
            return quota_exceeded(state.uploads.max_bytes_per_org);
        }
        if row.length.is_some() && !whole {
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                Code::UploadTooLarge,
                "The body carries more bytes than the upload's `Upload-Length` leaves room for.",
            );
        }
        too_large(state.uploads.max_bytes)
    }
}

pub(super) fn quota_exceeded(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        Code::UploadQuotaExceeded,
        format!(
            "Your organization's uploads would pass its quota of {max} bytes; delete uploads \
             it no longer needs (or let them expire) and try again."
        ),
    )
}

/// Streams `body` into a new part of `row` at its current offset and records it.
/// `whole` (a direct upload) makes the body the entire upload, completed with the hash
/// taken while it streamed.
///
/// The work runs in a task of its own: a client that goes away mid-body ends the
/// body, and what follows — recording the part, or deleting it — still runs, rather
/// than stop with the request and leave an object that no row names.
pub(super) async fn append(
    state: &AppState,
    row: &UploadRow,
    body: Body,
    whole: bool,
) -> Result<UploadRow, ApiError> {
    let rooms = Rooms::of(state, row).await?;
    let in_flight = state.uploads_in_flight.enter(&row.id);
    let (state, row) = (state.clone(), row.clone());
    tokio::spawn(async move { store_part(&state, row, body, whole, rooms, in_flight).await })
        .await
        .map_err(|e| ApiError::internal(&e))?
}

async fn store_part(
    state: &AppState,
    mut row: UploadRow,
    body: Body,
    whole: bool,
    rooms: Rooms,
    in_flight: InFlight,
) -> Result<UploadRow, ApiError> {
    let key = part_key(&row.id, row.received);
    let streamed = state
        .storage
        .put_stream(&key, body.into_data_stream(), rooms.max(), &in_flight.token)
        .await
        .map_err(|e| match e {
            PutStreamError::TooLarge => rooms.refusal(state, &row, whole),
            PutStreamError::Stopped => not_found(&row.id),
            PutStreamError::Storage(e) => ApiError::internal(&e),
        })?;
    if whole && (streamed.interrupted || row.length.is_some_and(|n| n != streamed.bytes as i64)) {
        forget_part(state, &key).await;
        return Err(bad_header(
            "The body ended before `Content-Length` bytes arrived.",
        ));
    }
    let now = unix_ms(SystemTime::now());
    let one_part = row.received == 0;
    if streamed.bytes > 0 {
        let part = UploadPart {
            start: row.received,
            length: streamed.bytes as i64,
            object_key: key.clone(),
        };
        match state.db.append_upload_part(&row.id, &part, now).await {
            Ok(true) => {}
            Ok(false) => {
                // Not this upload's part: another request took this offset first, or
                // the upload was deleted or expired meanwhile.
                forget_part(state, &key).await;
                let current = state
                    .db
                    .get_upload(&row.org_id.as_str().into(), &row.id.as_str().into(), now)
                    .await?;
                return Err(match current {
                    Some(current) => offset_mismatch(current.received),
                    None => not_found(&row.id),
                });
            }
            Err(e) => {
                forget_part(state, &key).await;
                return Err(e.into());
            }
        }
        row.received += streamed.bytes as i64;
    }
    drop(in_flight);
    if whole {
        state
            .db
            .complete_upload(&row.id, row.received, &streamed.sha256)
            .await?;
        row.length = Some(row.received);
        row.sha256 = Some(streamed.sha256);
        return Ok(row);
    }
    // A body that brought the whole upload hashed it on the way.
    let sha256 = one_part.then_some(streamed.sha256);
    finish(state, row, sha256).await
}

/// Deletes the object of a part that will not be recorded; should that fail, the
/// sweep of unreferenced parts deletes it later.
async fn forget_part(state: &AppState, key: &str) {
    if let Err(e) = state.storage.delete(key).await {
        tracing::warn!(error = %e, key, "deleting an unrecorded upload part failed; the sweep will");
    }
}
