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
//!
//! Mapped afresh, such a block is faulted in 4 KiB at a time, and on a virtual machine
//! each fault is dear: jxl-oxide maps nine 48 MB planes for one 12 MP JPEG XL, and its
//! decode spent as long in page faults (417 000 over three decodes) as in decoding.
//! [`LargeBlocksOnHugePages`], the process's allocator, is glibc's `malloc` with each
//! such block marked `MADV_HUGEPAGE` (what glibc's own `glibc.malloc.hugetlb=1`
//! tunable does), so the kernel backs it with 2 MiB pages where it lets a process ask
//! (`transparent_hugepage/enabled` `madvise` or `always`): 29 000 faults, 30 % less
//! CPU for the decode, the same peak RSS, and the block still handed back when freed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks of this size or more get pages of their own, returned when freed: every
/// picture of 1 MP or more, while a 720p frame (1.4 MB in 4:2:0) is reused from the
/// arena as the frames go by.
pub const MMAP_THRESHOLD_BYTES: i32 = 4 << 20;

/// The system allocator, with every block of [`MMAP_THRESHOLD_BYTES`] or more marked
/// for huge pages (see the module's docs). The binary installs it (`main.rs`).
pub struct LargeBlocksOnHugePages;

// SAFETY: every call is passed to the system allocator unchanged; `madvise` only
// changes how the kernel backs pages of a block just handed out, not its contents.
unsafe impl GlobalAlloc for LargeBlocksOnHugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = System.alloc(layout);
        advise_huge_pages(block, layout.size());
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = System.alloc_zeroed(layout);
        advise_huge_pages(block, layout.size());
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        System.dealloc(block, layout)
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(block, layout, new_size);
        advise_huge_pages(moved, new_size);
        moved
    }
}

/// Marks the whole pages of `block` (`size` bytes) `MADV_HUGEPAGE` when it is a block
/// glibc mapped of its own (our threshold in force and `size` past it).
fn advise_huge_pages(block: *mut u8, size: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if !block.is_null()
        && size >= MMAP_THRESHOLD_BYTES as usize
        && OWN_THRESHOLD.load(Ordering::Relaxed)
    {
        const PAGE: usize = 4096;
        let start = (block as usize).next_multiple_of(PAGE);
        let end = (block as usize + size) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside the block just allocated; MADV_HUGEPAGE
            // changes no data. A refusal (a kernel without THP) changes nothing.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (block, size);
}

/// Whether [`return_large_buffers`] set the threshold: with the operator's own
/// `MALLOC_MMAP_THRESHOLD_`, a large block may lie inside an arena, whose pages are
/// left as they are.
static OWN_THRESHOLD: AtomicBool = AtomicBool::new(false);

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
        OWN_THRESHOLD.store(true, Ordering::Relaxed);
    }
}
