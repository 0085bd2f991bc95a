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

    /// The index of `text`, made by an edit that replaced `start..old_end`
    /// of the text this index is of with `text[start..new_end]`: the line
    /// starts before the edit are kept, those after it moved by the change
    /// in length, and only the inserted text is searched for newlines. Gives
    /// what [`LineIndex::new`] gives for `text` (the language server keeps
    /// the index of a large file this way at each keystroke).
    ///
    /// The offsets must describe such an edit: `start <= old_end <= ` the
    /// old length, `start <= new_end <= text.len()`, and the text after the
    /// edit as long as before it.
    pub fn edited(&self, text: &str, start: usize, old_end: usize, new_end: usize) -> LineIndex {
        debug_assert!(start <= old_end && old_end <= self.len);
        debug_assert!(start <= new_end && new_end <= text.len());
        debug_assert_eq!(self.len - old_end, text.len() - new_end);
        // The line start `s` follows the newline at `s - 1`: that newline is
        // before the edit when `s <= start`, after it when `s > old_end`.
        let kept = self.starts.partition_point(|&s| s <= start);
        let after = self.starts.partition_point(|&s| s <= old_end);
        let moved = &self.starts[after..];
        let mut starts = Vec::with_capacity(kept + moved.len() + 1);
        starts.extend_from_slice(&self.starts[..kept]);
        starts.extend(
            memchr::memchr_iter(b'\n', &text.as_bytes()[start..new_end]).map(|i| start + i + 1),
        );
        starts.extend(moved.iter().map(|&s| s - old_end + new_end));
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
    use proptest::prelude::*;

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

    /// Pieces of random texts: line ends of each kind (a lone `\r` is no
    /// line end) and characters of every UTF-8 length.
    const PIECES: &[&str] = &["a", "bc", "\n", "\r\n", "\r", "\n\n", "é", "打", "𝄞", " "];

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
    }

    /// An edit: where it starts and how far it reaches (fractions of the
    /// text, moved back to char boundaries), and what it inserts.
    fn edit() -> impl Strategy<Value = (f64, f64, String)> {
        (0.0..=1.0f64, 0.0..=1.0f64, text())
    }

    fn boundary(text: &str, fraction: f64) -> usize {
        floor_char(text, (text.len() as f64 * fraction) as usize)
    }

    proptest! {
        #[test]
        fn an_edited_index_is_the_index_of_the_edited_text(
            mut text in text(),
            edits in proptest::collection::vec(edit(), 1..6),
        ) {
            let mut index = LineIndex::new(&text);
            for (at, to, insert) in edits {
                let (a, b) = (boundary(&text, at), boundary(&text, to));
                let (start, old_end) = (a.min(b), a.max(b));
                text.replace_range(start..old_end, &insert);
                index = index.edited(&text, start, old_end, start + insert.len());
                let fresh = LineIndex::new(&text);
                prop_assert_eq!(&index.starts, &fresh.starts, "{:?}", text);
                prop_assert_eq!(index.len, fresh.len);
            }
        }
    }
}
