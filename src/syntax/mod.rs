//! Source text → syntax tree with spans, and syntax diagnostics.

pub mod ast;
mod chunks;
pub mod grammar;
mod limits;
mod parser;
mod recover;
mod strings;

pub use limits::{MAX_FILE_BYTES, MAX_NESTING};
pub use parser::{parse, Parsed};
