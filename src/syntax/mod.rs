//! Source text → syntax tree with spans, and syntax diagnostics.

pub mod ast;
mod entry;
mod expected;
mod explain;
mod fast;
pub mod grammar;
mod hints;
pub mod keywords;
mod limits;
mod parser;
mod recover;
mod reparse;
mod strings;

pub use entry::parse;
pub use keywords::Context;
pub use limits::{
    check_json as check_json_limits, dependency_pair_limit, expansion_limit, BYTES_PER_EXPANSION,
    DEPENDENCY_PAIRS_BASE, EXPANSION_BASE, MAX_EXPANSION, MAX_EXPLAINED_BYTES, MAX_FILE_BYTES,
    MAX_INPUT_BYTES, MAX_NESTING, MAX_STRING_BYTES, MAX_SYNTAX_ERRORS, MAX_TASKS,
};
pub use parser::Parsed;
pub(crate) use reparse::{
    edited_task, item_at, same_but_name, same_step_but_name, spans, step_items, step_task,
    StepItems, StepTask,
};

pub(crate) use reparse::{header_spans, reparse_header, reparse_import, same_header_shape};
pub use reparse::{reparse, Edit, Place, Reparsed};
