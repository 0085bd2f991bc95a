//! Lines and UTF-16 columns of offsets taken in order: what the encoding
//! of the kept tokens (`encode.rs`) and their making (`store.rs`) count
//! positions with.

use crate::line_index::LineIndex;

/// The length of a text in UTF-16 code units.
pub(super) fn utf16_len(text: &str) -> usize {
    match text.is_ascii() {
        true => text.len(),
        false => text.chars().map(char::len_utf16).sum(),
    }
}

/// Lines and UTF-16 columns of offsets taken in ascending order, each
/// counted on from the one before (the line index searched only when a
/// line is left).
pub(super) struct Cursor<'t> {
    lines: &'t LineIndex,
    text: &'t str,
    line: usize,
    /// Where the next line starts.
    next_line: usize,
    /// The last offset given, on `line`, and its UTF-16 column.
    offset: usize,
    column: usize,
}

impl<'t> Cursor<'t> {
    /// A cursor at the start of the line holding `offset`.
    pub fn new(lines: &'t LineIndex, text: &'t str, offset: usize) -> Cursor<'t> {
        let line = lines.line(offset);
        Cursor {
            lines,
            text,
            line,
            next_line: lines.line_start(line + 1),
            offset: lines.line_start(line),
            column: 0,
        }
    }

    /// The line and column of `offset` (a char boundary, not before the
    /// last one given).
    pub fn position(&mut self, offset: usize) -> (u32, u32) {
        if offset < self.offset {
            *self = Cursor::new(self.lines, self.text, offset);
        }
        if offset >= self.next_line {
            // Mostly the next line or one soon after it.
            let near = (self.line + 1..self.line + 4)
                .find(|&l| offset < self.lines.line_start(l + 1) && l < self.lines.line_count());
            self.line = near.unwrap_or_else(|| self.lines.line(offset));
            self.next_line = self.lines.line_start(self.line + 1);
            self.offset = self.lines.line_start(self.line);
            self.column = 0;
        }
        self.column += utf16_len(&self.text[self.offset..offset]);
        self.offset = offset;
        (narrow(self.line), narrow(self.column))
    }
}

fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
