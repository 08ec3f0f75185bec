//! How the process's memory allocator treats large buffers.
//!
//! glibc's `malloc` gives a block of 128 KiB or more pages of its own (`mmap`), handed
//! back to the system when freed — until such a block is freed: then it raises that
//! threshold to the block's size, up to 32 MiB, and later blocks of that size are
//! carved from the arena of the thread that asks. A decoded picture is such a block (a
//! 12 MP picture is 36 MB in RGB, 18 MB as 4:2:0), made and freed on blocking threads
//! that each use an arena of their own, so the pages of every picture stayed with the
//! process in whichever arena last held one: over `bench/perf.py`'s image rows (three
//! runs each, one server) the server peaked at 195 MiB that way against 108 MiB with
//! the threshold held at [`MMAP_THRESHOLD_BYTES`], for 1–3 % more CPU on those rows
//! (the pages of each picture are mapped afresh). docs/PERFORMANCE.md has the figures.

/// Blocks of this size or more get pages of their own, returned when freed: every
/// picture of 1 MP or more, while a 720p frame (1.4 MB in 4:2:0) is reused from the
/// arena as the frames go by.
pub const MMAP_THRESHOLD_BYTES: i32 = 4 << 20;

/// Holds glibc's mmap threshold at [`MMAP_THRESHOLD_BYTES`] (see the module's docs),
/// unless `MALLOC_MMAP_THRESHOLD_` is set, which glibc reads itself and which then
/// stays the operator's choice. To be called first thing in `main`, before any thread
/// starts. Elsewhere than on glibc, nothing.
pub fn return_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: mallopt only sets a parameter of the allocator; called before any
        // other thread exists, nothing allocates concurrently.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
        }
    }
}
