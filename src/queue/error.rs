//! Why a job failed, in the same code vocabulary as the API, classed as final or
//! retryable.

use crate::error_code::Code;
use crate::fetch::FetchError;
use crate::media::MediaError;
use crate::storage::StorageError;

/// A job failure: a stable code, a sentence for the client, and whether a later
/// attempt may succeed.
#[derive(Debug, Clone)]
pub struct JobError {
    pub code: Code,
    pub detail: String,
    pub retryable: bool,
    /// Retries this failure allows at most, when fewer than the job's own limit (see
    /// [`FetchError::max_retries`]); `None` leaves it to `--max-attempts`.
    pub max_retries: Option<u32>,
    /// Not a failure: the node is stopping before this edit's work began, and hands
    /// the edit back to the queue rather than record anything.
    pub hand_back: bool,
}

impl JobError {
    pub fn new(code: Code, detail: impl Into<String>, retryable: bool) -> Self {
        JobError {
            code,
            detail: detail.into(),
            retryable,
            max_retries: None,
            hand_back: false,
        }
    }

    /// The edit is handed back because the node is stopping (see [`JobError::hand_back`]).
    pub fn handed_back() -> Self {
        JobError {
            hand_back: true,
            ..JobError::new(
                Code::InternalError,
                "The node stopped before this edit ran.",
                true,
            )
        }
    }

    /// Whether another attempt is allowed after `failures` earlier retryable
    /// failures of the same edit (the job's `--max-attempts` is checked apart).
    pub fn may_retry(&self, failures: u32) -> bool {
        self.retryable && self.max_retries.map_or(true, |max| failures < max)
    }

    /// An unexpected fault of ours: never described in detail to the client.
    pub fn internal(retryable: bool) -> Self {
        JobError::new(
            Code::InternalError,
            "The service hit an internal error while processing this edit.",
            retryable,
        )
    }

    /// The disk for temp files is full, or nearly: a retryable `storage_error` rather
    /// than the misleading media or internal error the failed write would give.
    pub fn disk_full() -> Self {
        JobError::new(
            Code::StorageError,
            "The server is short of disk space for this edit; it will be retried.",
            true,
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
        if let FetchError::Io(io) = &e {
            if is_disk_full(io) {
                tracing::warn!(error = %e, "the disk is full: a source could not be written");
                return JobError::disk_full();
            }
        }
        if matches!(e, FetchError::Io(_)) {
            tracing::error!(error = %e, "writing a source to disk failed");
            return JobError::internal(true);
        }
        let mut error = JobError::new(
            e.code(),
            format!("The source could not be downloaded: {e}."),
            e.is_retryable(),
        );
        error.max_retries = e.max_retries();
        error
    }
}

impl From<MediaError> for JobError {
    fn from(e: MediaError) -> Self {
        let disk_full = match &e {
            MediaError::Io(io) => is_disk_full(io),
            MediaError::ProcessFailed { stderr_tail, .. } => {
                stderr_tail.contains("No space left on device")
            }
            _ => false,
        };
        if disk_full {
            tracing::warn!(error = %e, "the disk is full: an output could not be written");
            return JobError::disk_full();
        }
        if e.code() == Code::InternalError {
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

/// Whether a write failed because the file system is full (or the quota is spent).
fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::Stall;

    #[test]
    fn a_stalled_source_may_be_retried_once_and_a_refused_one_as_often_as_the_job_allows() {
        let stalled = JobError::from(FetchError::Stalled(Stall::NoFirstByte { secs: 15 }));
        assert_eq!(stalled.code, "source_timeout");
        assert!(stalled.may_retry(0));
        assert!(!stalled.may_retry(1));
        let timed_out = JobError::from(FetchError::Timeout);
        assert!(timed_out.may_retry(0) && !timed_out.may_retry(1));
        let refused = JobError::from(FetchError::Unreachable("connection refused".into()));
        assert!(refused.may_retry(0) && refused.may_retry(10));
        let server_error = JobError::from(FetchError::HttpStatus(503));
        assert!(server_error.may_retry(4));
        assert!(!JobError::from(FetchError::HttpStatus(404)).may_retry(0));
    }

    #[test]
    fn a_full_disk_is_a_retryable_storage_error_whichever_layer_meets_it() {
        let full = || std::io::Error::from_raw_os_error(libc::ENOSPC);
        for e in [
            JobError::from(FetchError::Io(full())),
            JobError::from(MediaError::Io(full())),
            JobError::from(MediaError::ProcessFailed {
                program: "ffmpeg".into(),
                stderr_tail: "av_interleaved_write_frame(): No space left on device".into(),
            }),
        ] {
            assert_eq!((e.code, e.retryable), (Code::StorageError, true), "{e:?}");
        }
    }

    #[test]
    fn a_stall_detail_is_a_sentence_a_person_can_act_on() {
        let e = JobError::from(FetchError::Stalled(Stall::TooSlow {
            bytes: 12,
            secs: 10,
            min_per_sec: 16384,
        }));
        assert_eq!(
            e.detail,
            "The source could not be downloaded: the source sent only 12 bytes in 10 s, \
             slower than the minimum of 16384 bytes per second; serve the file from a \
             faster host."
        );
    }
}
