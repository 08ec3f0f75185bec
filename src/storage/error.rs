//! Why a storage operation failed, and why a download URL was refused.

use crate::error_code::Code;

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// No object is stored under this key.
    #[error("no object is stored under that key")]
    NotFound,
    /// The key is not a canonical object key (empty, leading/trailing/double `/`, `.`
    /// or `..` segments, or characters the store does not allow).
    #[error("{0:?} is not a valid storage key")]
    InvalidKey(String),
    /// The object store failed.
    #[error("object store error: {0}")]
    Store(#[source] object_store::Error),
    /// A `--storage-url` that is neither `file://DIR` nor `s3://BUCKET[/PREFIX]`.
    #[error("{0:?} is not a storage URL (file://DIR or s3://BUCKET[/PREFIX])")]
    InvalidUrl(String),
    /// Reading the local file to upload failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<object_store::Error> for StorageError {
    fn from(err: object_store::Error) -> Self {
        match err {
            object_store::Error::NotFound { .. } => StorageError::NotFound,
            other => StorageError::Store(other),
        }
    }
}

impl StorageError {
    pub fn code(&self) -> Code {
        match self {
            StorageError::NotFound => Code::NotFound,
            StorageError::InvalidKey(_) | StorageError::InvalidUrl(_) => Code::InvalidStorageKey,
            StorageError::Store(_) | StorageError::Io(_) => Code::StorageError,
        }
    }

    /// A store or disk failure may pass; a missing object or a bad key will not.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StorageError::Store(_) | StorageError::Io(_))
    }
}

/// Why a download URL was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the download link is invalid")]
    Invalid,
    #[error("the download link has expired")]
    Expired,
}
