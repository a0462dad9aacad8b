//! What a command may tell the binary's allocator (mimalloc) once it is running.

/// mimalloc 3's `mi_option_purge_delay` (the crate's constants are version 2's; `main.rs`
/// gives the same option its default before mimalloc starts).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// mimalloc 3's `mi_option_purge_decommits`.
const PURGE_DECOMMITS: libmimalloc_sys::mi_option_t = 5;

/// Freed pages are kept until the process exits instead of returned to the system one by one
/// (the binary returns them at once: `main.rs`). For the end of a small run: each return is an
/// `madvise` and a TLB flush on every core the process runs on, and the reports' threads
/// return each of their pages as they end; that was most of a default batch's last
/// milliseconds, for memory the exit returns anyway a moment later. A process not running on
/// mimalloc (the library's tests) only has an unused option set.
pub(crate) fn keep_freed_pages() {
    return_freed_pages_after(-1);
}

/// Freed pages are returned to the system only after `ms` milliseconds unused, instead of at
/// once (`main.rs`). For `ppcert proxy`: each large body it judges is parsed into a fresh
/// megabyte, and a megabyte returned at once was faulted in and zeroed again, page by page,
/// for the next one; on a 1 MiB body that was about a fifth of the proxy's CPU
/// (BENCHMARKS.md, issue 45). Kept for a moment, the pages serve the next body.
pub(crate) fn return_freed_pages_after(ms: std::ffi::c_long) {
    // SAFETY: a plain store into mimalloc's option table, a static array; `mi_version`
    // returns a constant. mimalloc reads the option at each purge, so it takes effect at once.
    unsafe {
        if libmimalloc_sys::mi_version() >= 300 {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, ms);
        }
    }
}

/// Freed pages are returned lazily (`MADV_FREE`: the system takes them back when it needs
/// memory) rather than unmapped: a page used again before that is not faulted in and zeroed
/// again. For `ppcert proxy`, whose large bodies come and go faster than the delay above
/// covers: under 16 clients sending one megabyte body in ten, 12 page faults per request
/// fell to about 1, and its CPU per request by about a tenth (BENCHMARKS.md, issue 45).
pub(crate) fn return_freed_pages_lazily() {
    // SAFETY: as in `return_freed_pages_after`.
    unsafe {
        if libmimalloc_sys::mi_version() >= 300 {
            libmimalloc_sys::mi_option_set(PURGE_DECOMMITS, 0);
        }
    }
}
