//! The `planc` command line: a thin face over the library.

mod cli;

// The compiler allocates many small nodes; mimalloc serves them faster than
// the system allocator (measured in docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::main());
}
