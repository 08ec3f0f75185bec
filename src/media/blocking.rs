//! The one way CPU-heavy media work leaves the async threads.

use super::cancel;
use super::image;
use crate::media::error::MediaError;

/// Runs CPU-heavy work off the async threads.
///
/// A panic inside is re-raised in the calling task so that the worker's panic boundary
/// sees it as it would any other bug, rather than as a media error.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, MediaError>
where
    F: FnOnce() -> Result<T, MediaError> + Send + 'static,
    T: Send + 'static,
{
    // Dropping this future (the job was given up) raises the flag the work checks
    // between its phases. The task's wish for placeholders goes with the work.
    let (_cancel_on_drop, f) = cancel::guarded(image::placeholders::kept::carried(f));
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(MediaError::Io(std::io::Error::other(e))),
    }
}
