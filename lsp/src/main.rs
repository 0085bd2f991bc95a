//! `planc-lsp`: the planc language server over standard input and output
//! (started by editors directly, or through `planc lsp`).

// The binary prints its version, its usage and why it could not start;
// the protocol itself goes through the library's transport.
#![allow(clippy::print_stdout, clippy::print_stderr)]

// As in `planc`: the compiler allocates many small nodes, and a keystroke
// copies and drops a large tree's worth of them; mimalloc serves them
// several times faster than the system allocator.
#[global_allocator]
static GLOBAL: planc_lsp::Allocator = planc_lsp::Allocator;

/// [`planc_lsp::small_pages_only`] before mimalloc sets itself up: an
/// initializer of a higher priority than mimalloc's own (which runs before
/// `main` and, with huge pages allowed, asks for them on the memory it maps
/// first: 4 MiB of huge pages before the open otherwise).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00101"]
static SMALL_PAGES_FIRST: extern "C" fn() = small_pages_first;

#[cfg(target_os = "linux")]
extern "C" fn small_pages_first() {
    planc_lsp::small_pages_only();
}

fn main() {
    // Where the initializer above did not run (or ran after mimalloc's).
    planc_lsp::small_pages_only();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("planc-lsp {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "planc-lsp {}: the language server for .plan files\n\n\
             Usage: planc lsp (or planc-lsp) [--stdio]\n\n\
             Speaks the Language Server Protocol over standard input and output;\n\
             editors start it (see docs/editors.md).",
            env!("CARGO_PKG_VERSION")
        );
        return;
    }
    // The messages are handled on this thread; the compiles run on the
    // server's compile threads, each publishing its own diagnostics; one
    // worker thread serves the rest (the standard input's reads, timers).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("planc-lsp: cannot start: {error}");
            std::process::exit(2);
        }
    };
    let code = runtime.block_on(planc_lsp::serve_stdio());
    // At once, without dropping the runtime: that would wait for the thread
    // blocked reading standard input, which a client that sent `exit` may
    // keep open.
    std::process::exit(code);
}
