//! The integration tests of `planc-lsp`, one test binary: each module was a
//! test file of its own (`cargo test -p planc-lsp --test it protocol::` runs
//! one). One binary links the planc library once instead of once per file.

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../common/mod.rs"]
mod common;
mod edits;
mod formatting;
mod helix;
mod json;
mod lifecycle;
mod malformed;
mod protocol;
mod responsiveness;
mod robustness;
mod stdio;
