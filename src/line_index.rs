//! Converts byte offsets to lines and columns, at the edges only (output, LSP).

/// Line starts of one text, for offset → (line, column) conversions.
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

/// A zero-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr_newlines(text));
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// The zero-based line holding `offset`.
    pub fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset.min(self.len)) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Zero-based line and column, the column counted in Unicode scalar values.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let line = self.line(offset);
        let start = self.starts[line];
        let col = text[start..floor_char(text, offset)].chars().count();
        LineCol { line, col }
    }

    /// Zero-based line and column, the column counted in UTF-16 code units (LSP).
    pub fn line_col_utf16(&self, text: &str, offset: usize) -> LineCol {
        let line = self.line(offset);
        let start = self.starts[line];
        let col = text[start..floor_char(text, offset)]
            .chars()
            .map(char::len_utf16)
            .sum();
        LineCol { line, col }
    }

    /// The byte offset of a zero-based line and UTF-16 column, clamped to the text.
    pub fn offset_utf16(&self, text: &str, pos: LineCol) -> usize {
        let Some(&start) = self.starts.get(pos.line) else {
            return self.len;
        };
        let end = self.starts.get(pos.line + 1).copied().unwrap_or(self.len);
        let mut units = 0;
        for (i, c) in text[start..end].char_indices() {
            if units >= pos.col || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The number of lines.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The byte offset where a zero-based line starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
    }
}

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    // A vectorised search: the language server indexes a large file at each
    // keystroke.
    memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)
}

/// The largest char boundary at or before `offset`.
pub(crate) fn floor_char(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_utf16_units() {
        let text = "ab\n打开𝄞x\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.line_col(text, x), LineCol { line: 1, col: 3 });
        assert_eq!(index.line_col_utf16(text, x), LineCol { line: 1, col: 4 });
        assert_eq!(index.offset_utf16(text, LineCol { line: 1, col: 4 }), x);
        assert_eq!(
            index.offset_utf16(text, LineCol { line: 9, col: 0 }),
            text.len()
        );
    }
}
