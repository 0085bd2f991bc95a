//! planc: compiler, checker, runner and tools for `.plan` files, the task plans
//! that AI agents follow.
//!
//! The stages: [`syntax`] (text → tree with spans) → [`check`] (names,
//! references, types, graph → [`ir`]) → [`emit`] (the JSON plan and the seed
//! formats). See `docs/architecture.md` for the map.
//!
//! Without features this is the compiler core (no async, no database, HTTP
//! or MCP crate); the features `runner`, `sqlite`, `postgres`, `mcp`,
//! `serve` and `cli` (the default) add the layers above it.

// The pest parser is built without `std` (which adds a stack probe to every
// rule call); its generated code names the `alloc` crate.
extern crate alloc;

pub mod check;
pub mod compile;
mod cores;
pub mod diagnostic;
pub mod diagram;
pub mod document;
pub mod emit;
pub mod escape;
pub mod fmt;
#[cfg(any(test, feature = "generate"))]
pub mod generate;
pub mod ide;
pub mod ir;
pub mod line_index;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod modules;
pub mod read;
pub mod render;
#[cfg(feature = "runner")]
pub mod runner;
#[cfg(feature = "serve")]
pub mod serve;
pub mod span;
pub mod suggest;
pub mod syntax;

pub use compile::{
    compile, compile_json, compile_shared, compile_shared_with, compile_with, decode,
    decode_shared, Compilation,
};
