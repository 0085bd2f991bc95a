//! The `planc` command line: a thin face over the library.

mod cli;

// The compiler allocates many small nodes; mimalloc serves them faster than
// the system allocator (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
