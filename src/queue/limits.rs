//! Limits the engine checks while an edit runs: the files it may produce, and the
//! disk its temp files need.

use std::path::Path;
use std::sync::Mutex;

use crate::edits::{budget, EditJob};
use crate::error_code::Code;
use crate::queue::error::JobError;
use crate::storage::free_disk_bytes;

/// A retryable `storage_error` when the temp directory's disk has less than `min_free`
/// bytes free: a fetch that would fill the disk would fail later with a misleading
/// media error, and other edits with it.
pub(crate) fn ensure_free_disk(tmp: &Path, min_free: u64) -> Result<(), JobError> {
    if min_free == 0 {
        return Ok(());
    }
    match free_disk_bytes(tmp) {
        Some(free) if free < min_free => {
            tracing::warn!(free, min_free, "too little free disk to fetch a source");
            Err(JobError::disk_full())
        }
        _ => Ok(()),
    }
}

/// The output limit, checked before each step against the fewest files the edit can
/// still end with: for each asset (they run at once), the files it stored, or those
/// in hand times what the rest of the pipeline makes of each at least, or — for an
/// asset not that far yet — what one input makes at least.
pub(super) struct OutputBudget {
    /// Files one input becomes at least after each command (see `edits::budget`).
    per_input: Vec<u64>,
    limit: u64,
    /// The fewest files each asset can end with, as far as it is known now.
    bounds: Mutex<Vec<u64>>,
}

impl OutputBudget {
    pub fn new(edit: &EditJob, limit: u64) -> Self {
        let per_input = budget::min_files_per_input(&edit.commands, &edit.options);
        let last = *per_input.last().unwrap_or(&1);
        OutputBudget {
            per_input,
            limit,
            bounds: Mutex::new(vec![last; edit.assets.len()]),
        }
    }

    /// `too_many_outputs` when running command `c` of `asset` on `in_hand` files must
    /// end past the limit.
    pub fn check(&self, asset: usize, in_hand: usize, c: usize) -> Result<(), JobError> {
        let last = *self.per_input.last().unwrap_or(&1);
        // The pipeline's bound is a product of factors, so the rest of it from command
        // `c` on is the ratio of the bound after the last command and before `c`.
        let before = if c == 0 {
            1
        } else {
            self.per_input[c - 1].max(1)
        };
        let files = self.set(asset, (in_hand as u64).saturating_mul(last / before));
        if files <= self.limit {
            return Ok(());
        }
        Err(JobError::new(
            Code::TooManyOutputs,
            format!(
                "This edit would produce at least {files} files, more than the limit of {} \
                 per edit; it was stopped before the step that would pass it.",
                self.limit
            ),
            false,
        ))
    }

    /// Records that `asset` ended with `files` files.
    pub fn stored(&self, asset: usize, files: usize) {
        self.set(asset, files as u64);
    }

    /// Sets `asset`'s bound; returns the edit's.
    fn set(&self, asset: usize, bound: u64) -> u64 {
        let mut bounds = self.bounds.lock().unwrap_or_else(|e| e.into_inner());
        bounds[asset] = bound;
        bounds.iter().fold(0u64, |sum, b| sum.saturating_add(*b))
    }
}
