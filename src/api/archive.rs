//! `GET /v1/edits/{id}/archive` (docs/API.md): every output of a done edit in one ZIP,
//! streamed as it is read from storage: entries are stored, not recompressed (images and
//! videos are compressed already), named as each download's `Content-Disposition`
//! names it, in `downloadUrls` order. A 125-frame fan-out downloads in one request.
//!
//! The ZIP is written by `async_zip` into one end of an in-memory pipe while the
//! response body reads the other, so memory holds a pipe's worth, whatever the size.
//! Entries of unknown CRC are written as ZIP streams them (a data descriptor after
//! each entry's bytes; the central directory holds the sizes and checksums).

use std::time::SystemTime;

use async_zip::base::write::ZipFileWriter;
use async_zip::{Compression, ZipEntryBuilder};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::Response;
use futures::io::AsyncWriteExt;
use futures::StreamExt;
use tokio_util::io::ReaderStream;

use super::auth::Organization;
use super::error::ApiError;
use super::files::file_name;
use super::AppState;
use crate::db::{unix_ms, EditStatus, StoredOutput};
use crate::error_code::Code;
use crate::storage::Storage;

/// Bytes buffered between the ZIP writer and the response.
const PIPE_BYTES: usize = 256 * 1024;

#[utoipa::path(get, path = "/v1/edits/{id}/archive", operation_id = "getEditArchive", tag = "edits",
    params(("id" = String, Path, description = "Edit id")),
    responses(
        (status = 200, description = "`application/zip`: every output, stored entries named as their downloads"),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "The edit is not done", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn archive(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = state
        .db
        .get_edit(&org.id, &id, unix_ms(SystemTime::now()))
        .await?
        .ok_or_else(|| ApiError::no_edit(&id))?;
    if row.status != EditStatus::Done {
        return Err(ApiError::conflict(
            Code::EditNotDone,
            format!(
                "Edit {id} is {}; its archive exists once it is done.",
                row.status.as_str()
            ),
        ));
    }
    let (writer, reader) = tokio::io::duplex(PIPE_BYTES);
    let storage = state.storage.clone();
    let outputs = row.outputs.clone();
    let edit = row.id.clone();
    tokio::spawn(async move {
        if let Err(e) = write_zip(&storage, &outputs, writer).await {
            // The client sees the body end early: the ZIP has no end record.
            tracing::warn!(edit.id = %edit, error = %e, "writing an edit's archive failed");
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/zip")
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}.zip\"", row.id),
        )
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(Body::from_stream(ReaderStream::new(reader)))
        .map_err(|e| ApiError::internal(&e))
}

/// Writes every output into a ZIP on `writer`, one stored entry each.
async fn write_zip(
    storage: &Storage,
    outputs: &[StoredOutput],
    writer: tokio::io::DuplexStream,
) -> anyhow::Result<()> {
    let mut zip = ZipFileWriter::with_tokio(writer);
    for output in outputs {
        let entry = ZipEntryBuilder::new(file_name(&output.key).into(), Compression::Stored);
        let mut entry = zip.write_entry_stream(entry).await?;
        let mut bytes = Storage::bytes_of(storage.get(&output.key, None).await?);
        while let Some(chunk) = bytes.next().await {
            entry.write_all(&chunk?).await?;
        }
        entry.close().await?;
    }
    zip.close().await?;
    Ok(())
}
