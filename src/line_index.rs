//! Converts byte offsets to lines and columns, at the edges only (output, LSP).

/// Line starts of one text, for offset → (line, column) conversions.
///
/// The starts are kept in 32 bits (4 bytes a line, not 8: the language
/// server keeps the index of each open file). A file planc reads is at most
/// `MAX_FILE_BYTES` (64 MiB), but the language server's text is what the
/// client sent and changed (256 MiB a message, and no bound on what many
/// changes add up to), so the starts at or past [`NARROW`] are kept in full
/// beside them: every offset stays exact, and no real text has any there.
#[derive(Clone, Debug, PartialEq)]
pub struct LineIndex {
    /// The line starts below [`NARROW`], in order.
    starts: Vec<u32>,
    /// The line starts at or past [`NARROW`], in order (after `starts`).
    far: Vec<usize>,
    len: usize,
}

/// The first offset not kept in 32 bits (small under test, so that the
/// tests reach the far starts).
const NARROW: usize = if cfg!(test) { 24 } else { 1 << 32 };

/// A zero-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut index = LineIndex::with_capacity(0, text.len());
        index.push(0);
        memchr_newlines(text).for_each(|start| index.push(start));
        index
    }

    /// An index without starts yet, of a text `len` bytes long.
    fn with_capacity(lines: usize, len: usize) -> LineIndex {
        LineIndex {
            starts: Vec::with_capacity(lines),
            far: Vec::new(),
            len,
        }
    }

    /// Adds the next line start.
    fn push(&mut self, start: usize) {
        match u32::try_from(start) {
            Ok(narrow) if start < NARROW => self.starts.push(narrow),
            _ => self.far.push(start),
        }
    }

    /// The line start of line `line`, if there is that line.
    fn start(&self, line: usize) -> Option<usize> {
        match self.starts.get(line) {
            Some(&start) => Some(start as usize),
            None => self.far.get(line - self.starts.len()).copied(),
        }
    }

    /// The number of line starts at or before `offset`.
    fn starts_through(&self, offset: usize) -> usize {
        let narrow = self.starts.partition_point(|&s| s as usize <= offset);
        if narrow < self.starts.len() {
            return narrow;
        }
        narrow + self.far.partition_point(|&s| s <= offset)
    }

    /// The line starts from line `line` on.
    fn starts_from(&self, line: usize) -> impl Iterator<Item = usize> + '_ {
        let narrow = line.min(self.starts.len());
        let far = line - narrow;
        let narrow = self.starts[narrow..].iter().map(|&s| s as usize);
        narrow.chain(self.far[far.min(self.far.len())..].iter().copied())
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
        let kept = self.starts_through(start);
        let after = self.starts_through(old_end);
        let moved = self.line_count() - after;
        let mut index = LineIndex::with_capacity(kept + moved + 1, text.len());
        if kept <= self.starts.len() {
            index.starts.extend_from_slice(&self.starts[..kept]);
        } else {
            index.starts.extend_from_slice(&self.starts);
            index
                .far
                .extend_from_slice(&self.far[..kept - self.starts.len()]);
        }
        memchr::memchr_iter(b'\n', &text.as_bytes()[start..new_end])
            .for_each(|i| index.push(start + i + 1));
        self.starts_from(after)
            .for_each(|s| index.push(s - old_end + new_end));
        index
    }

    /// The zero-based line holding `offset`.
    pub fn line(&self, offset: usize) -> usize {
        // Line 0 starts at 0, so at least one start is at or before it.
        self.starts_through(offset.min(self.len)) - 1
    }

    /// Zero-based line and column, the column counted in Unicode scalar values.
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let line = self.line(offset);
        let start = self.line_start(line);
        let col = text[start..floor_char(text, offset)].chars().count();
        LineCol { line, col }
    }

    /// Zero-based line and column, the column counted in UTF-16 code units (LSP).
    pub fn line_col_utf16(&self, text: &str, offset: usize) -> LineCol {
        let line = self.line(offset);
        let start = self.line_start(line);
        let col = text[start..floor_char(text, offset)]
            .chars()
            .map(char::len_utf16)
            .sum();
        LineCol { line, col }
    }

    /// The byte offset of a zero-based line and UTF-16 column, clamped to the text.
    pub fn offset_utf16(&self, text: &str, pos: LineCol) -> usize {
        let Some(start) = self.start(pos.line) else {
            return self.len;
        };
        let end = self.line_start(pos.line + 1);
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
        self.starts.len() + self.far.len()
    }

    /// The byte offset where a zero-based line starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.start(line).unwrap_or(self.len)
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
        /// The lines and their starts, those past `NARROW` (24 bytes
        /// under test) included, are what counting newlines gives.
        #[test]
        fn lines_are_counted_newlines(text in text()) {
            let index = LineIndex::new(&text);
            prop_assert_eq!(index.line_count(), text.matches('\n').count() + 1);
            for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                let line = index.line(offset);
                prop_assert_eq!(line, text[..offset].matches('\n').count());
                let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
                prop_assert_eq!(index.line_start(line), start);
                let col = text[start..offset].chars().map(char::len_utf16).sum();
                prop_assert_eq!(index.line_col_utf16(&text, offset), LineCol { line, col });
            }
            prop_assert_eq!(index.line_start(index.line_count()), text.len());
        }

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
                prop_assert_eq!(&index, &fresh, "{:?}", text);
            }
        }
    }
}
