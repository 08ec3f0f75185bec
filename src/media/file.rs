//! A local file with its detected format, and the fresh output paths the operations
//! write to.

use std::path::{Path, PathBuf};

use crate::format::MediaFormat;

/// A local file together with its detected format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFile {
    pub path: PathBuf,
    pub format: MediaFormat,
}

/// A fresh, unused path in `dir` with the extension of `format`.
///
/// A random name rather than a counter: several workers share one data directory.
pub(crate) fn output_path(dir: &Path, format: MediaFormat) -> PathBuf {
    dir.join(format!("{}.{}", uuid::Uuid::new_v4(), format.extension()))
}
