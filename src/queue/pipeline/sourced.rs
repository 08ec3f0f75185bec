//! What a step's input was fetched from, and one asset's outputs.

use crate::db::StoredOutput;
use crate::media::MediaFile;

/// What the network stage found for an asset.
pub(super) enum Sourced {
    /// Outputs copied from the result cache: nothing to run.
    Reused(Vec<StoredOutput>),
    /// The source on disk, and its result cache key when the cache is on.
    File(MediaFile, Option<String>),
}

/// One asset's stored outputs.
pub(super) struct AssetOutputs {
    pub(super) outputs: Vec<StoredOutput>,
    /// Copied from the result cache.
    pub(super) cached: bool,
    /// Where to remember them once the edit is done, if they were made here.
    pub(super) cache_key: Option<String>,
}
