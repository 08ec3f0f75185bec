//! Work on every core: how many bands of rows a picture is cut into, and waiting
//! for them.

/// The cores this process may use.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many bands of rows a picture `rows` high is worked in at once: one per core,
/// none under `min_rows` rows (a thread would cost more than it saves).
pub(crate) fn band_count(rows: u32, min_rows: u32) -> usize {
    cores().min((rows / min_rows) as usize).max(1)
}

/// Waits for every band of a picture worked on scoped threads (one per core): the
/// first error, or `Ok`. A panic in a band is re-raised here, as `blocking` does.
pub(crate) fn join_bands<E>(
    bands: Vec<std::thread::ScopedJoinHandle<'_, Result<(), E>>>,
) -> Result<(), E> {
    bands.into_iter().try_for_each(joined)
}

/// What a scoped thread returned; its panic is re-raised here, as `blocking` does.
pub(crate) fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
