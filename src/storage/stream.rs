//! Objects written from a stream (an upload's body) and read back into a file (an
//! uploaded source): memory stays at a few parts whatever the size.

use std::path::Path;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use object_store::{GetResult, GetResultPayload, WriteMultipart};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio_util::io::ReaderStream;
use tokio_util::sync::CancellationToken;

use crate::storage::error::StorageError;
use crate::storage::paths::object_path;
use crate::storage::store::{Storage, PARTS_IN_FLIGHT, PART_SIZE};

/// How much of a local file one read takes.
const READ_CHUNK: usize = 1 << 20;

/// What [`Storage::put_stream`] stored.
#[derive(Debug)]
pub struct Streamed {
    pub bytes: u64,
    /// Hex SHA-256 of what was stored.
    pub sha256: String,
    /// The body broke off (the client went away): what came before is stored.
    pub interrupted: bool,
}

/// Why [`Storage::put_stream`] stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum PutStreamError {
    /// The body carried more than the allowed bytes.
    #[error("the body is larger than allowed")]
    TooLarge,
    /// `stop` was cancelled (the upload was deleted) while the body streamed.
    #[error("the write was stopped")]
    Stopped,
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl Storage {
    /// Stores `body` under `key` as it arrives, at most `max` bytes: more is
    /// `TooLarge` and nothing is kept; `stop` cancelled is `Stopped`, and nothing is
    /// kept either (a multipart upload is aborted, so no part lingers in the store).
    /// A body that breaks off keeps what it sent. An empty body stores no object
    /// (`bytes == 0`).
    pub async fn put_stream<S, E>(
        &self,
        key: &str,
        body: S,
        max: u64,
        stop: &CancellationToken,
    ) -> Result<Streamed, PutStreamError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
    {
        let location = object_path(key)?;
        let mut body = body;
        let mut hash = Sha256::new();
        let mut bytes = 0u64;
        let mut writer: Option<WriteMultipart> = None;
        let mut head: Vec<u8> = Vec::new();
        let mut interrupted = false;
        let outcome: Result<(), PutStreamError> = async {
            loop {
                let chunk = tokio::select! {
                    chunk = body.next() => chunk,
                    () = stop.cancelled() => return Err(PutStreamError::Stopped),
                };
                let Some(chunk) = chunk else { break };
                let Ok(chunk) = chunk else {
                    interrupted = true;
                    break;
                };
                bytes += chunk.len() as u64;
                if bytes > max {
                    return Err(PutStreamError::TooLarge);
                }
                hash.update(&chunk);
                // Up to one part is held back: a body that ends within it is one PUT.
                if writer.is_none() && head.len() + chunk.len() <= PART_SIZE {
                    head.extend_from_slice(&chunk);
                    continue;
                }
                let writing = match &mut writer {
                    Some(w) => w,
                    None => {
                        let upload = self
                            .store
                            .put_multipart(&location)
                            .await
                            .map_err(StorageError::from)?;
                        let w =
                            writer.insert(WriteMultipart::new_with_chunk_size(upload, PART_SIZE));
                        w.write(&std::mem::take(&mut head));
                        w
                    }
                };
                writing
                    .wait_for_capacity(PARTS_IN_FLIGHT)
                    .await
                    .map_err(StorageError::from)?;
                writing.write(&chunk);
            }
            Ok(())
        }
        .await;
        match (outcome, writer) {
            (Ok(()), Some(writer)) => {
                writer.finish().await.map_err(StorageError::from)?;
            }
            (Ok(()), None) if head.is_empty() => {}
            (Ok(()), None) => {
                let payload = Bytes::from(head).into();
                self.store
                    .put(&location, payload)
                    .await
                    .map_err(StorageError::from)?;
            }
            (Err(e), Some(writer)) => {
                let _ = writer.abort().await;
                return Err(e);
            }
            (Err(e), None) => return Err(e),
        }
        Ok(Streamed {
            bytes,
            sha256: hex::encode(hash.finalize()),
            interrupted,
        })
    }

    /// The bytes of `object` as a stream. A local file is read 1 MiB at a time:
    /// object_store's own `into_stream` reads 8 KiB per blocking task, which made
    /// reading a large upload back several times slower than writing it.
    pub fn bytes_of(object: GetResult) -> BoxStream<'static, Result<Bytes, StorageError>> {
        match object.payload {
            GetResultPayload::File(file, _) => {
                let range = object.range;
                futures::stream::once(async move {
                    let mut file = tokio::fs::File::from_std(file);
                    file.seek(std::io::SeekFrom::Start(range.start)).await?;
                    let reader = file.take(range.end - range.start);
                    Ok::<_, std::io::Error>(ReaderStream::with_capacity(reader, READ_CHUNK))
                })
                .try_flatten()
                .map_err(StorageError::from)
                .boxed()
            }
            GetResultPayload::Stream(stream) => stream.map_err(StorageError::from).boxed(),
        }
    }

    /// The objects under `keys`, one after another, as one stream of bytes.
    pub fn concatenated(
        &self,
        keys: Vec<String>,
    ) -> impl Stream<Item = Result<Bytes, StorageError>> + Send + 'static {
        let storage = self.clone();
        futures::stream::iter(keys)
            .then(move |key| {
                let storage = storage.clone();
                async move {
                    let object = storage.get(&key, None).await?;
                    Ok::<_, StorageError>(Storage::bytes_of(object))
                }
            })
            .try_flatten()
    }

    /// Writes the objects under `keys`, one after another, into the file at `dest`;
    /// returns the bytes written and their hex SHA-256.
    pub async fn concatenate_into(
        &self,
        keys: Vec<String>,
        dest: &Path,
    ) -> Result<(u64, String), StorageError> {
        let mut file = tokio::fs::File::create(dest).await?;
        let mut hash = Sha256::new();
        let mut bytes = 0u64;
        let mut stream = std::pin::pin!(self.concatenated(keys));
        while let Some(chunk) = stream.try_next().await? {
            hash.update(&chunk);
            bytes += chunk.len() as u64;
            file.write_all(&chunk).await?;
        }
        file.flush().await?;
        Ok((bytes, hex::encode(hash.finalize())))
    }
}
