//! An object key as the store's path, refused when it could leave the store's root.

use crate::storage::error::StorageError;
use object_store::path::Path as ObjectPath;

/// The object path for `key`, which must already be canonical (`a/b/c.webp`): a key
/// the store would silently rewrite (`/a//b/`) would sign differently from the object
/// it names.
pub(super) fn object_path(key: &str) -> Result<ObjectPath, StorageError> {
    match ObjectPath::parse(key) {
        Ok(path) if !key.is_empty() && path.as_ref() == key => Ok(path),
        _ => Err(StorageError::InvalidKey(key.to_owned())),
    }
}
