//! `planc fmt`: format `.plan` files in place, or check that they are formatted.

use std::sync::Arc;

use clap::Args;
use planc::span::SourceMap;

pub(super) mod diff;

use super::input::{self, Kind};
use super::output::{self, Color};
use super::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(Args)]
pub struct FmtArgs {
    /// Files to format (`-` formats standard input to standard output)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Change nothing: print a diff of what would change, and fail if anything would
    #[arg(long)]
    check: bool,
    /// When to use colour in diagnostics
    #[arg(long, value_enum, default_value_t)]
    color: Color,
}

pub fn run(args: FmtArgs) -> i32 {
    // A file that cannot be read or formatted does not stop the others; the
    // worst outcome is the exit code (2 over 1).
    let mut status = EXIT_OK;
    for path in &args.files {
        let input = match input::read_reporting(path, args.color) {
            Ok(input) => input,
            Err(code) => {
                status = status.max(code);
                continue;
            }
        };
        if input.kind == Kind::Json {
            let path = planc::escape::path(path);
            output::fatal(&format!("{path}: planc fmt formats .plan files"));
            status = EXIT_USAGE;
            continue;
        }
        let formatted = match planc::fmt::format(&input.text) {
            Ok(formatted) => formatted,
            Err(diagnostics) => {
                let mut sources = SourceMap::new();
                sources.add(&input.name, Arc::clone(&input.text));
                output::human(&diagnostics, &sources, args.color);
                eprintln!(
                    "{}: not formatted: fix the syntax errors first",
                    planc::escape::path(&input.name)
                );
                status = status.max(EXIT_FAILURE);
                continue;
            }
        };
        if path == "-" {
            print!("{formatted}");
            if args.check && *formatted != *input.text {
                status = status.max(EXIT_FAILURE);
            }
            continue;
        }
        if *formatted == *input.text {
            continue;
        }
        if args.check {
            // The diff shows the file's own lines as they are, as `git diff`
            // does; only its name is escaped.
            let name = planc::escape::path(&input.name);
            print!("{}", diff::unified(&input.text, &formatted, &name));
            status = status.max(EXIT_FAILURE);
        } else if let Err(error) = std::fs::write(path, &formatted) {
            let path = planc::escape::path(path);
            output::fatal(&format!("cannot write {path}: {error}"));
            status = EXIT_USAGE;
        } else {
            eprintln!("formatted {}", planc::escape::path(&input.name));
        }
    }
    status
}
