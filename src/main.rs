//! The `planc` command line: a thin face over the library.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
