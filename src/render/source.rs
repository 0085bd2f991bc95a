//! Source text for miette that finds lines through a [`LineIndex`]: miette's
//! own `SourceCode` for strings scans the file from its start for every
//! label, which made thousands of diagnostics on a large file quadratic.

use std::collections::HashMap;
use std::sync::Arc;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::escape::snippet_char;
use crate::line_index::LineIndex;
use crate::span::{FileId, SourceMap};

/// Line indexes of the files a rendering touches, each built once, and the
/// text their snippets show.
#[derive(Default)]
pub(crate) struct Lines {
    indexes: HashMap<FileId, Arc<LineIndex>>,
    shown: HashMap<FileId, Option<Arc<Shown>>>,
}

impl Lines {
    /// The line index of `file`.
    pub(crate) fn of(&mut self, sources: &SourceMap, file: FileId) -> Arc<LineIndex> {
        self.indexes
            .entry(file)
            .or_insert_with(|| Arc::new(LineIndex::new(&sources.get(file).text)))
            .clone()
    }

    /// The text snippets of `file` show, when it differs from the file's
    /// own: see [`Shown`].
    pub(crate) fn shown(&mut self, sources: &SourceMap, file: FileId) -> Option<Arc<Shown>> {
        self.shown
            .entry(file)
            .or_insert_with(|| Shown::new(&sources.get(file).text).map(Arc::new))
            .clone()
    }
}

/// A file's text as its snippets show it: every character that must not
/// reach a terminal replaced by a visible one ([`snippet_char`]); a lone
/// carriage return too, a `\r\n` line break left to miette. One character
/// stands for one, so lines and columns are the file's own; byte offsets
/// move, and [`Shown::offset`] moves a span's with them.
pub(crate) struct Shown {
    pub text: Arc<str>,
    pub lines: Arc<LineIndex>,
    /// (offset in the file of a replaced character, bytes added up to and
    /// including it), for the replacements that add bytes.
    shifts: Vec<(usize, usize)>,
}

impl Shown {
    /// The text `text` shows, or `None` when it shows as it is.
    fn new(text: &str) -> Option<Shown> {
        let replaced = |c: char, next: Option<&char>| match c {
            '\t' | '\n' => None,
            '\r' if next == Some(&'\n') => None,
            c => snippet_char(c),
        };
        let mut chars = text.chars().peekable();
        let mut any = false;
        while let Some(c) = chars.next() {
            if replaced(c, chars.peek()).is_some() {
                any = true;
                break;
            }
        }
        if !any {
            return None;
        }
        let mut shown = String::with_capacity(text.len() + 16);
        let mut shifts = Vec::new();
        let mut added = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match replaced(c, chars.peek().map(|(_, c)| c)) {
                Some(picture) => {
                    shown.push(picture);
                    if picture.len_utf8() > c.len_utf8() {
                        added += picture.len_utf8() - c.len_utf8();
                        shifts.push((at, added));
                    }
                }
                None => shown.push(c),
            }
        }
        Some(Shown {
            lines: Arc::new(LineIndex::new(&shown)),
            text: shown.into(),
            shifts,
        })
    }

    /// Where byte `offset` of the file is in the shown text.
    pub(crate) fn offset(&self, offset: usize) -> usize {
        let before = self.shifts.partition_point(|&(at, _)| at < offset);
        offset + before.checked_sub(1).map_or(0, |i| self.shifts[i].1)
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
        // In characters, as the JSON output counts columns.
        let column = if context_lines_before == 0 {
            let line_start = lines.line_start(first_line);
            text.get(line_start..start)
                .map_or(start - line_start, |before| before.chars().count())
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
