//! Diagnostics → text: human (miette), JSON, and GitHub workflow annotations.

mod github;
mod human;
mod json;
mod source;

pub use github::github;
pub use human::human;
pub use json::{json, json_files, json_values};

use crate::diagnostic::{Diagnostic, Label};
use crate::span::SourceMap;

/// A 1-based position in a file, columns counted in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub line: usize,
    pub column: usize,
}

/// The 1-based start and end positions of a label.
pub(crate) fn positions(
    sources: &SourceMap,
    lines: &mut source::Lines,
    label: &Label,
) -> (Position, Position) {
    let text = &sources.get(label.file).text;
    let index = lines.of(sources, label.file);
    let convert = |offset| {
        let lc = index.line_col(text, offset);
        Position {
            line: lc.line + 1,
            column: lc.col + 1,
        }
    };
    (convert(label.span.start()), convert(label.span.end()))
}

/// "2 errors and 1 warning", or `None` when there is nothing to say.
pub fn summary(diagnostics: &[Diagnostic]) -> Option<String> {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let count = |n: usize, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    match (errors, warnings) {
        (0, 0) => None,
        (e, 0) => Some(count(e, "error")),
        (0, w) => Some(count(w, "warning")),
        (e, w) => Some(format!("{} and {}", count(e, "error"), count(w, "warning"))),
    }
}
