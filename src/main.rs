//! The `planc` command line: a thin face over the library.

mod cli;

// The compiler allocates many small nodes; mimalloc serves them faster than
// the system allocator (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Has mimalloc give memory back to the system as soon as it is freed, for
/// `planc serve`: by default (mimalloc 3) it waits a second, and the wait
/// ends only when the thread that freed it calls the allocator again, so a
/// server thread that read a large plan and went idle kept that memory
/// (docs/performance.md, "Memory": 134 MB held after exports of a 20.7 MB
/// plan, 96 MB so). Left as it is when `MIMALLOC_PURGE_DELAY` is set.
pub(crate) fn purge_freed_memory_at_once() {
    use std::ffi::{c_int, c_long};
    // `mi_option_purge_delay` of mimalloc 3 (libmimalloc-sys 0.1.49,
    // c_src/mimalloc/v3/include/mimalloc.h).
    const PURGE_DELAY: c_int = 15;
    unsafe extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
    }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options, which it allows any time.
        unsafe { mi_option_set(PURGE_DELAY, 0) };
    }
}

fn main() {
    // Like other command-line tools, end quietly when the reader of standard
    // output goes away (`planc check --format json … | head`) instead of
    // panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: restoring the default action of a signal has no preconditions;
    // it happens before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::main());
}
