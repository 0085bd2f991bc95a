//! planc: compiler, checker, runner and tools for `.plan` files, the task plans
//! that AI agents follow.
//!
//! The stages: [`syntax`] (text → tree with spans) → [`check`] (names,
//! references, types, graph → [`ir`]) → [`emit`] (the JSON plan and the seed
//! formats). See `docs/architecture.md` for the map.

pub mod check;
pub mod compile;
pub mod diagnostic;
pub mod document;
pub mod emit;
pub mod ide;
pub mod line_index;
pub mod span;
pub mod suggest;
pub mod syntax;
pub mod ir;
pub mod render;

pub use compile::{compile, decode, Compilation};
