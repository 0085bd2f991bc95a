//! Source text for miette that finds lines through a [`LineIndex`]: miette's
//! own `SourceCode` for strings scans the file from its start for every
//! label, which made thousands of diagnostics on a large file quadratic.

use std::collections::HashMap;
use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::line_index::LineIndex;
use crate::span::{FileId, SourceMap};

/// Line indexes of the files a rendering touches, each built once.
#[derive(Default)]
pub(crate) struct Lines {
    indexes: HashMap<FileId, Arc<LineIndex>>,
}

impl Lines {
    /// The line index of `file`.
    pub(crate) fn of(&mut self, sources: &SourceMap, file: FileId) -> Arc<LineIndex> {
        self.indexes
            .entry(file)
            .or_insert_with(|| Arc::new(LineIndex::new(&sources.get(file).text)))
            .clone()
    }
}

/// A named source file with its line index.
pub(crate) struct IndexedSource {
    pub name: String,
    pub text: Arc<str>,
    pub lines: Arc<LineIndex>,
}

impl SourceCode for IndexedSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text = &*self.text;
        let start = span.offset();
        let end = start + span.len();
        if end > text.len() {
            return Err(MietteError::OutOfBounds);
        }
        let lines = &self.lines;
        let first_line = lines.line(start);
        let last_line = lines.line(end.saturating_sub(1).max(start));
        let context_first = first_line.saturating_sub(context_lines_before);
        let context_last = (last_line + context_lines_after).min(lines.line_count() - 1);
        let from = lines.line_start(context_first);
        let to = if context_last + 1 < lines.line_count() {
            lines.line_start(context_last + 1)
        } else {
            text.len()
        };
        let column = if context_lines_before == 0 {
            start - lines.line_start(first_line)
        } else {
            0
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &text.as_bytes()[from..to],
            (from, to - from).into(),
            context_first,
            column,
            // As miette counts it: the lines up to the end of the contents.
            lines.line(to),
        )))
    }
}
