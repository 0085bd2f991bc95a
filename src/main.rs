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
///
/// And keeps the server's memory in small pages, not transparent huge
/// pages: mimalloc asks for huge pages on its arenas (`MADV_HUGEPAGE`), so
/// every fresh 2 MiB of them was faulted in whole and the kernel's
/// khugepaged folded sparse ranges back into whole huge pages; a server
/// holding a 100,000-task plan and answering paged reads grew to 160-190
/// MB, of which 129 MB huge pages, against 60-80 MB without them
/// (docs/performance.md, "Memory of a 100,000-task plan"). Left as it is
/// when `MIMALLOC_ALLOW_THP` is set.
pub(crate) fn purge_freed_memory_at_once() {
    use std::ffi::{c_int, c_long};
    // `mi_option_purge_delay` and `mi_option_allow_thp` of mimalloc 3
    // (libmimalloc-sys 0.1.49, c_src/mimalloc/v3/include/mimalloc.h).
    const PURGE_DELAY: c_int = 15;
    const ALLOW_THP: c_int = 43;
    unsafe extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
    }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options, which it allows any time.
        unsafe { mi_option_set(PURGE_DELAY, 0) };
    }
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: as above. mimalloc read this option for the mappings it
        // made before `main`: the process-wide flag below covers those.
        unsafe { mi_option_set(ALLOW_THP, 0) };
        // SAFETY: `PR_SET_THP_DISABLE` sets a flag of this process's
        // memory; it takes no pointers.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}

/// Gives the calling thread's freed memory back to the system: its pages
/// mimalloc keeps in reserve (the last free page of each size) included.
/// `planc serve` calls it on a thread that has just read a large plan
/// whole (`planc::serve::on_large_read`).
pub(crate) fn give_back_freed_memory() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: `mi_collect` takes a plain flag and collects the calling
    // thread's heap; it may be called from any thread at any time.
    unsafe { mi_collect(true) }
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
