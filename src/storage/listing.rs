//! Listing and deleting objects: an edit's or an upload's folder, one part, and the
//! sweep's walk over everything stored under a prefix.

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::ObjectMeta;

use super::{object_path, Storage, StorageError};

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

    /// Every object whose key starts with `prefix` (a folder), with its size and time.
    pub fn list(&self, prefix: &str) -> BoxStream<'static, Result<ObjectMeta, StorageError>> {
        match object_path(prefix.trim_end_matches('/')) {
            Ok(location) => self.store.list(Some(&location)).err_into().boxed(),
            Err(e) => futures::stream::once(async move { Err::<ObjectMeta, _>(e) }).boxed(),
        }
    }
}
