//! Why a job failed, in the same code vocabulary as the API, classed as final or
//! retryable.

use crate::fetch::FetchError;
use crate::media::MediaError;
use crate::storage::StorageError;

/// A job failure: a stable code, a sentence for the client, and whether a later
/// attempt may succeed.
#[derive(Debug, Clone)]
pub struct JobError {
    pub code: &'static str,
    pub detail: String,
    pub retryable: bool,
}

impl JobError {
    pub fn new(code: &'static str, detail: impl Into<String>, retryable: bool) -> Self {
        JobError {
            code,
            detail: detail.into(),
            retryable,
        }
    }

    /// An unexpected fault of ours: never described in detail to the client.
    pub fn internal(retryable: bool) -> Self {
        JobError::new(
            "internal_error",
            "The service hit an internal error while processing this edit.",
            retryable,
        )
    }

    /// Prefixes the detail with where the failure happened (asset index, command).
    pub fn at(mut self, place: &str) -> Self {
        self.detail = format!("{place}: {}", self.detail);
        self
    }
}

impl From<FetchError> for JobError {
    fn from(e: FetchError) -> Self {
        if matches!(e, FetchError::Io(_)) {
            tracing::error!(error = %e, "writing a source to disk failed");
            return JobError::internal(true);
        }
        JobError::new(
            e.code(),
            format!("The source could not be downloaded: {e}."),
            e.is_retryable(),
        )
    }
}

impl From<MediaError> for JobError {
    fn from(e: MediaError) -> Self {
        if e.code() == "internal_error" {
            tracing::error!(error = %e, "media operation failed internally");
            return JobError::internal(e.is_retryable());
        }
        if let MediaError::ProcessFailed {
            program,
            stderr_tail,
        } = &e
        {
            tracing::warn!(%program, stderr = %stderr_tail, "an external program failed");
            let reason = stderr_tail.lines().last().unwrap_or_default().trim();
            let detail = format!("{program} could not process the file: {reason}");
            return JobError::new(e.code(), capitalise(&detail), e.is_retryable());
        }
        JobError::new(e.code(), capitalise(&e.to_string()), e.is_retryable())
    }
}

impl From<StorageError> for JobError {
    fn from(e: StorageError) -> Self {
        tracing::error!(error = %e, "storing an output failed");
        JobError::new(e.code(), "The output could not be stored.", true)
    }
}

/// Capitalises the first letter and ends with a period, so details read as sentences.
fn capitalise(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(1)
        .flat_map(char::to_uppercase)
        .chain(s.chars().skip(1))
        .collect();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}
