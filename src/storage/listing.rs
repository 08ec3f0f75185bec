//! Listing and deleting objects: an edit's or an upload's folder, one part, and the
//! sweep's walk over everything stored under a prefix.

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::ObjectMeta;

use crate::storage::error::StorageError;
use crate::storage::paths::object_path;
use crate::storage::store::Storage;

impl Storage {
    /// Deletes every object whose key starts with `prefix` (a folder: `edits/<id>/`);
    /// objects already gone are no error. Returns how many were deleted.
    pub async fn delete_prefix(&self, prefix: &str) -> Result<usize, StorageError> {
        let location = object_path(prefix.trim_end_matches('/'))?;
        let listed = self
            .store
            .list(Some(&location))
            .map_ok(|meta| meta.location)
            .boxed();
        let deleted: Vec<ObjectPath> = self
            .store
            .delete_stream(listed)
            .or_else(|e| async move {
                match e {
                    object_store::Error::NotFound { .. } => Ok(ObjectPath::default()),
                    other => Err(other),
                }
            })
            .try_collect()
            .await?;
        Ok(deleted.len())
    }

    /// Deletes the one object under `key`; one already gone is no error. (A key is not
    /// a folder: `delete_prefix` of a part's key would delete nothing.)
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        match self.store.delete(&object_path(key)?).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Stores every file under the local directory `dir` but `except`, each under
    /// `prefix` followed by its path inside `dir` (`/`-separated).
    pub async fn put_dir(
        &self,
        prefix: &str,
        dir: &std::path::Path,
        except: &std::path::Path,
    ) -> Result<(), StorageError> {
        let mut pending = vec![dir.to_path_buf()];
        while let Some(folder) = pending.pop() {
            let mut entries = tokio::fs::read_dir(&folder).await?;
            while let Some(entry) = entries.next_entry().await? {
                let path = entry.path();
                if entry.file_type().await?.is_dir() {
                    pending.push(path);
                    continue;
                }
                if path == except {
                    continue;
                }
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                let names: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let key = format!("{prefix}{}", names.join("/"));
                self.put_file(&key, &path).await?;
            }
        }
        Ok(())
    }

    /// Copies every object under the folder `from` to the same name under `to`.
    pub async fn copy_prefix(&self, from: &str, to: &str) -> Result<(), StorageError> {
        let listed: Vec<ObjectMeta> = self.list(from).try_collect().await?;
        for meta in listed {
            let key = meta.location.as_ref();
            let rest = key.strip_prefix(from).unwrap_or(key);
            self.copy(key, &format!("{to}{rest}")).await?;
        }
        Ok(())
    }

    /// Every object whose key starts with `prefix` (a folder), with its size and time.
    pub fn list(&self, prefix: &str) -> BoxStream<'static, Result<ObjectMeta, StorageError>> {
        match object_path(prefix.trim_end_matches('/')) {
            Ok(location) => self.store.list(Some(&location)).err_into().boxed(),
            Err(e) => futures::stream::once(async move { Err::<ObjectMeta, _>(e) }).boxed(),
        }
    }
}
