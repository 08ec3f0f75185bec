//! `GET /v1/edits/{id}/archive` (docs/API.md): every output of a done edit in one ZIP,
//! streamed as it is read from storage: entries are stored, not recompressed (images and
//! videos are compressed already), named as each download's `Content-Disposition`
//! names it, in `downloadUrls` order. A 125-frame fan-out downloads in one request.
//!
//! The archive works offline, unpacked anywhere: an HLS output comes with its whole
//! ladder (media playlists, init sections, segments) in the folder named as the master
//! without its extension (`<id>-0-0/`), the master's URIs rewritten to point there,
//! and the master as stored inside that folder as `master.m3u8` (a DASH manifest,
//! likewise, at its root and as `manifest.mpd` inside the folder of the ladder it names);
//! a storyboard VTT's cues name its sheet by the sheet's name in the archive. Both are
//! relative names, the same rewriting a download does with signed URLs (`files::rewrite`).
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
use super::files::{format_of, rewrite};
use crate::api::state::AppState;
use crate::db::{unix_ms, EditStatus, StoredOutput};
use crate::error_code::Code;
use crate::format::MediaFormat;
use crate::ids::EditId;
use crate::storage::{companions_of, Storage};

/// Bytes buffered between the ZIP writer and the response.
const PIPE_BYTES: usize = 256 * 1024;

#[utoipa::path(get, path = "/v1/edits/{id}/archive", operation_id = "getEditArchive", tag = "edits",
    params(("id" = String, Path, description = "Edit id")),
    responses(
        (status = 200, description = "`application/zip`: every output, stored entries named as their downloads; an HLS output with its whole ladder and a storyboard's VTT naming its sheet by relative names, so the unpacked folder works offline"),
        (status = 401, description = "No valid token", body = crate::api::schemas::ErrorDocument),
        (status = 404, description = "No such edit", body = crate::api::schemas::ErrorDocument),
        (status = 409, description = "The edit is not done", body = crate::api::schemas::ErrorDocument),
    ))]
pub async fn archive(
    State(state): State<AppState>,
    org: Organization,
    Path(id): Path<EditId>,
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

/// Writes every output into a ZIP on `writer`, one stored entry each, with an HLS
/// output's companions after it.
async fn write_zip(
    storage: &Storage,
    outputs: &[StoredOutput],
    writer: tokio::io::DuplexStream,
) -> anyhow::Result<()> {
    let mut zip = ZipFileWriter::with_tokio(writer);
    for output in outputs {
        let key = &output.key;
        let format = format_of(key).filter(|f| rewrite::rewritten(Some(*f)));
        let Some(format) = format else {
            copy_entry(&mut zip, storage, key).await?;
            continue;
        };
        // Ours and small (a playlist line per segment), so read whole.
        let stored = storage.get(key, None).await?.bytes().await?;
        let text = String::from_utf8_lossy(&stored);
        let renamed = rewrite::rename(key, format, &text, &archive_name);
        let entry = ZipEntryBuilder::new(archive_name(key).into(), Compression::Stored);
        zip.write_entry_whole(entry, renamed.as_bytes()).await?;
        if format == MediaFormat::Hls {
            // The master again inside its ladder's folder, as `master.m3u8`: its
            // stored URIs are relative to that folder already, so the folder alone
            // plays (`ffprobe <id>-0-0/master.m3u8`).
            let folder = archive_name(key);
            let folder = folder.strip_suffix(".m3u8").unwrap_or(&folder);
            let inside =
                ZipEntryBuilder::new(format!("{folder}/master.m3u8").into(), Compression::Stored);
            zip.write_entry_whole(inside, &stored).await?;
            let mut companions: Vec<String> = storage
                .list(&companions_of(key))
                .map(|meta| meta.map(|m| m.location.as_ref().to_string()))
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .collect::<Result<_, _>>()?;
            companions.sort();
            for companion in &companions {
                copy_entry(&mut zip, storage, companion).await?;
            }
        }
        if let Some(ladder) = rewrite::ladder_of(key).filter(|_| format == MediaFormat::Mpd) {
            // Stored relative to its ladder's folder, so it plays from there as stored.
            let folder = archive_name(&companions_of(&ladder));
            let inside =
                ZipEntryBuilder::new(format!("{folder}manifest.mpd").into(), Compression::Stored);
            zip.write_entry_whole(inside, &stored).await?;
        }
    }
    zip.close().await?;
    Ok(())
}

/// The object under `key`, streamed into one stored entry named [`archive_name`].
async fn copy_entry(
    zip: &mut async_zip::tokio::write::ZipFileWriter<tokio::io::DuplexStream>,
    storage: &Storage,
    key: &str,
) -> anyhow::Result<()> {
    let entry = ZipEntryBuilder::new(archive_name(key).into(), Compression::Stored);
    let mut entry = zip.write_entry_stream(entry).await?;
    let mut bytes = Storage::bytes_of(storage.get(key, None).await?);
    while let Some(chunk) = bytes.next().await {
        entry.write_all(&chunk?).await?;
    }
    entry.close().await?;
    Ok(())
}

/// A stored object's path in the archive: `<edit id>-<path in the attempt folder>`,
/// so an output is named as its download (`<id>-0-0.m3u8`) and a companion sits in
/// the folder its output's relative names point at (`<id>-0-0/v0/index.m3u8`).
fn archive_name(key: &str) -> String {
    let name = match key.splitn(4, '/').collect::<Vec<_>>().as_slice() {
        ["edits", id, _, rest] => format!("{id}-{rest}"),
        _ => key.rsplit('/').next().unwrap_or("file").to_string(),
    };
    name.replace(['"', '\\'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_names_outputs_as_downloads_and_companions_beside_them() {
        assert_eq!(archive_name("edits/e1/2/0-0.m3u8"), "e1-0-0.m3u8");
        assert_eq!(
            archive_name("edits/e1/2/0-0/v1/seg3.m4s"),
            "e1-0-0/v1/seg3.m4s"
        );
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv0/index.m3u8\n";
        let renamed = rewrite::rename(
            "edits/e1/2/0-0.m3u8",
            MediaFormat::Hls,
            master,
            &archive_name,
        );
        assert!(renamed.ends_with("\ne1-0-0/v0/index.m3u8\n"), "{renamed}");
        let cue = "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nsheet.webp#xywh=0,0,8,8\n";
        let renamed = rewrite::rename("edits/e1/2/0-1.vtt", MediaFormat::Vtt, cue, &archive_name);
        assert!(
            renamed.ends_with("\ne1-0-0.webp#xywh=0,0,8,8\n"),
            "{renamed}"
        );
    }
}
