//! planc: compiler, checker, runner and tools for `.plan` files, the task plans
//! that AI agents follow.
//!
//! The stages: [`syntax`] (text → tree with spans) → [`check`] (names,
//! references, types, graph → [`ir`]) → [`emit`] (the JSON plan and the seed
//! formats). See `docs/architecture.md` for the map.

// The pest parser is built without `std` (which adds a stack probe to every
// rule call); its generated code names the `alloc` crate.
extern crate alloc;

pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod document;
pub mod emit;
pub mod escape;
pub mod fmt;
pub mod generate;
pub mod graph;
pub mod ide;
pub mod ir;
pub mod line_index;
pub mod mcp;
pub mod modules;
pub mod read;
pub mod render;
pub mod runner;
pub mod serve;
pub mod span;
pub mod suggest;
pub mod syntax;

pub use compile::{
    compile, compile_json, compile_shared, compile_shared_with, compile_with, decode,
    decode_shared, Compilation,
};

/// Whether the machine runs two threads at once, so that a large file's
/// work is worth splitting: asked once per process (the standard library
/// reads the process's CPU quota from files at each call, which costs tens
/// of microseconds, a tenth of a keystroke's budget in a large plan).
pub(crate) fn two_cores() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}
