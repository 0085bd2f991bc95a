//! Random edits for the differential tests of incremental work: the
//! re-read item (`syntax::reparse`), the recompile
//! (`Compilation::recompile`) and the language server's documents each
//! apply sequences of them and compare the result with reading or compiling
//! the edited text whole. Test support, hidden from the documentation.

/// The char boundary at or before `offset`, or the end of `text`.
/// (`str::floor_char_boundary` is not stable at the crate's minimum Rust.)
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// One edit: the bytes `start..end` of a text replaced by `insert`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splice<'s> {
    pub start: usize,
    pub end: usize,
    pub insert: &'s str,
}

impl<'s> Splice<'s> {
    /// The edit a test draws: from `start` over `len` bytes of `text`, each
    /// end moved back to a char boundary, replaced by `snippets[snippet]`,
    /// or by nothing when `snippet` is past the end of `snippets` (a
    /// deletion; with `len` 0, no edit).
    pub fn pick(
        text: &str,
        start: usize,
        len: usize,
        snippets: &[&'s str],
        snippet: usize,
    ) -> Self {
        let start = floor_char_boundary(text, start);
        Splice {
            start,
            end: floor_char_boundary(text, start + len),
            insert: snippets.get(snippet).copied().unwrap_or(""),
        }
    }

    /// `text` with the edit made.
    pub fn apply(&self, text: &str) -> String {
        format!(
            "{}{}{}",
            &text[..self.start],
            self.insert,
            &text[self.end..]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{floor_char_boundary, Splice};

    #[test]
    fn edits_fall_on_char_boundaries() {
        let text = "aé𝄞b";
        let floors: Vec<usize> = (0..=9).map(|n| floor_char_boundary(text, n)).collect();
        assert_eq!(floors, [0, 1, 1, 3, 3, 3, 3, 7, 8, 8]);
        let splice = Splice::pick(text, 2, 3, &["x"], 0);
        assert_eq!((splice.start, splice.end), (1, 3));
        assert_eq!(splice.apply(text), "ax𝄞b");
        // Past the snippets: a deletion.
        assert_eq!(Splice::pick(text, 4, 4, &["x"], 1).apply(text), "aéb");
    }
}
