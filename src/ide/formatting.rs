//! Formatting as the few edits that turn a file into its `planc fmt` layout,
//! not one edit of the whole text: an editor keeps the cursors, marks, folds
//! and undo steps of the text the edits leave alone.
//!
//! The lines both texts start and end with are skipped; a diff of lines
//! finds the runs of lines that change in the rest; a diff of characters
//! inside each run finds what in them changes (re-indenting a line inserts
//! or removes its leading spaces, a `\r\n` loses its `\r`). Both are Myers
//! diffs (`similar`), each under a deadline past which it settles for
//! larger edits, still exact: a whole large file re-indented comes as an
//! edit or a few per line.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, TextDiff, TextDiffConfig};

use super::{root_text, Edit};
use crate::compile::Compilation;
use crate::span::{FileId, Span};

/// How long one formatting's diffs may search for the fewest edits (half
/// for the lines, half for the characters).
const DIFF_TIME: Duration = Duration::from_millis(200);

/// The edits that turn the file being edited into what `planc fmt` prints:
/// in text order, none overlapping or touching another, each span in the
/// text as it is; none when it is formatted already. `None` for a file with
/// syntax errors, which the formatter leaves as it is.
pub fn formatting(compilation: &Compilation) -> Option<Vec<Edit>> {
    let text = root_text(compilation);
    let formatted = crate::fmt::format(text).ok()?;
    Some(text_edits(compilation.file, text, &formatted))
}

/// Edits of `file` that turn `old` into `new` (see [`formatting`] for their
/// order): applied together, each span in `old`, they give exactly `new`.
fn text_edits(file: FileId, old: &str, new: &str) -> Vec<Edit> {
    // The lines both texts start and end with are left out of the diffs: a
    // large file with one line to format is diffed in that line.
    let (prefix, suffix) = common_lines(old, new);
    let (old, new) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let line_runs = changed_runs(old, new, Unit::Lines, Instant::now() + DIFF_TIME / 2);
    let deadline = Instant::now() + DIFF_TIME / 2;
    let mut edits: Vec<Edit> = Vec::new();
    for (old_lines, new_lines) in line_runs {
        let (old_run, new_run) = (&old[old_lines.clone()], &new[new_lines]);
        let at = prefix + old_lines.start;
        for (o, n) in runs_in_lines(old_run, new_run, deadline) {
            let span = Span::new(at + o.start, at + o.end);
            let new_text = &new_run[n];
            match edits.last_mut() {
                // Two edits that touch become one: the protocol leaves the
                // order of two insertions at one place to the editor.
                Some(last) if last.span.end() == span.start() => {
                    last.span = Span::new(last.span.start(), span.end());
                    last.new_text.push_str(new_text);
                }
                _ => edits.push(Edit {
                    file,
                    span,
                    new_text: new_text.to_owned(),
                }),
            }
        }
    }
    edits
}

/// The lengths in bytes of the whole lines `old` and `new` both start with,
/// and of those both end with after them.
fn common_lines(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let prefix = a[..same]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let same = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (start_a, start_b) = (a.len() - same, b.len() - same);
    let line_start = |text: &[u8], at: usize| at == 0 || text[at - 1] == b'\n';
    let suffix = if line_start(a, start_a) && line_start(b, start_b) {
        same
    } else {
        // From the first line that starts inside the common end.
        a[start_a..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(0, |i| same - i - 1)
    };
    (prefix, suffix)
}

/// The pieces a diff compares.
#[derive(Clone, Copy)]
enum Unit {
    Lines,
    Chars,
}

/// The changed runs inside a run of changed lines, as byte ranges of
/// `old` and of `new`. As many lines on both sides (a block re-indented,
/// line ends changed): each line against its counterpart, so no diff spans
/// more than one line; otherwise the run's characters at once.
fn runs_in_lines(old: &str, new: &str, deadline: Instant) -> Vec<(Range<usize>, Range<usize>)> {
    let old_lines = old.split_inclusive('\n');
    let new_lines = new.split_inclusive('\n');
    if old_lines.clone().count() != new_lines.clone().count() {
        return changed_runs(old, new, Unit::Chars, deadline);
    }
    let mut runs = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for (o, n) in old_lines.zip(new_lines) {
        for (a, b) in changed_runs(o, n, Unit::Chars, deadline) {
            runs.push((
                old_at + a.start..old_at + a.end,
                new_at + b.start..new_at + b.end,
            ));
        }
        old_at += o.len();
        new_at += n.len();
    }
    runs
}

/// The runs of pieces that differ between `old` and `new`, as byte ranges
/// of each (a run with an empty range on one side is an insertion or a
/// deletion), in text order.
fn changed_runs(
    old: &str,
    new: &str,
    unit: Unit,
    deadline: Instant,
) -> Vec<(Range<usize>, Range<usize>)> {
    let mut config = TextDiffConfig::default();
    config.algorithm(Algorithm::Myers).deadline(deadline);
    let diff: TextDiff<'_, '_, '_, str> = match unit {
        Unit::Lines => config.diff_lines(old, new),
        Unit::Chars => config.diff_chars(old, new),
    };
    let old_starts = starts(diff.old_slices());
    let new_starts = starts(diff.new_slices());
    // The runs between two equal runs. Only the `Equal` ops are read:
    // similar 2 compacts its ops and may leave a `Delete` or `Insert` with
    // the wrong index on its empty side (mitsuhiko/similar#78).
    let mut runs = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    let equal = diff.ops().iter().filter_map(|op| match *op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => Some((old_index, new_index, len)),
        _ => None,
    });
    let ends = (old_starts.len() - 1, new_starts.len() - 1, 0);
    for (old_index, new_index, len) in equal.chain([ends]) {
        if old_index > old_at || new_index > new_at {
            runs.push((
                old_starts[old_at]..old_starts[old_index],
                new_starts[new_at]..new_starts[new_index],
            ));
        }
        (old_at, new_at) = (old_index + len, new_index + len);
    }
    runs
}

/// The byte offset where each piece starts, and the end of the last.
fn starts(pieces: &[&str]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(pieces.len() + 1);
    let mut at = 0;
    starts.push(at);
    for piece in pieces {
        at += piece.len();
        starts.push(at);
    }
    starts
}

/// Applies `edits` (spans in `text`, in order, not overlapping): what an
/// editor does with them.
#[cfg(test)]
fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for edit in edits {
        assert!(edit.span.start() >= at, "edits in order, not overlapping");
        out.push_str(&text[at..edit.span.start()]);
        out.push_str(&edit.new_text);
        at = edit.span.end();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn edits(old: &str, new: &str) -> Vec<(Range<usize>, String)> {
        let edits = text_edits(FileId(0), old, new);
        assert_eq!(apply(old, &edits), new);
        for pair in edits.windows(2) {
            assert!(pair[0].span.end() < pair[1].span.start(), "{edits:?}");
        }
        edits
            .into_iter()
            .map(|e| (e.span.range(), e.new_text))
            .collect()
    }

    #[test]
    fn the_same_text_needs_no_edit() {
        assert_eq!(edits("", ""), []);
        assert_eq!(edits("plan p {}\n", "plan p {}\n"), []);
    }

    #[test]
    fn edits_are_as_small_as_the_change() {
        assert_eq!(
            edits(
                "plan p {\n  goal \"g\"\n}\n",
                "plan p {\n    goal \"g\"\n}\n"
            ),
            [(11..11, "  ".to_owned())]
        );
        assert_eq!(
            edits("a {after b}\n", "a { after b }\n"),
            [(3..3, " ".to_owned()), (10..10, " ".to_owned())]
        );
        assert_eq!(
            edits("a\r\nb\r\n", "a\nb\n"),
            [(1..2, String::new()), (4..5, String::new())]
        );
        assert_eq!(edits("x", ""), [(0..1, String::new())]);
        assert_eq!(edits("", "x\n"), [(0..0, "x\n".to_owned())]);
        assert_eq!(
            edits("a\n\n\nb", "a\n\nb\n"),
            [(3..3, "b".to_owned()), (4..5, String::new())]
        );
    }

    #[test]
    fn edits_count_bytes_of_any_width() {
        assert_eq!(
            edits("题 \"构建\"  𝄞\n", "题 \"构建\" 𝄞\n"),
            [(13..14, String::new())]
        );
    }

    #[test]
    fn common_lines_are_whole_lines() {
        assert_eq!(common_lines("a\nb\nc\n", "a\nb\nc\n"), (6, 0));
        assert_eq!(common_lines("a\nb\nc\n", "a\nx\nc\n"), (2, 2));
        assert_eq!(common_lines("a\nbc\n", "a\nxc\n"), (2, 0));
        assert_eq!(common_lines("x\n", "y\nx\n"), (0, 2));
        assert_eq!(common_lines("ab", "b"), (0, 0));
        assert_eq!(common_lines("", "a\n"), (0, 0));
    }

    proptest! {
        #[test]
        fn a_spliced_text_is_reached_by_its_edits(
            old in "[ab\n\r é𝄞{}]{0,60}",
            at in 0.0..1.0f64,
            cut in 0..6usize,
            insert in "[ab\n\r é𝄞{}]{0,6}",
        ) {
            let mut start = (old.len() as f64 * at) as usize;
            while !old.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + cut).min(old.len());
            while !old.is_char_boundary(end) {
                end += 1;
            }
            let new = format!("{}{insert}{}", &old[..start], &old[end..]);
            edits(&old, &new);
        }

        #[test]
        fn applied_edits_give_the_new_text(
            old in "[ab\n\r é𝄞{}]{0,40}",
            new in "[ab\n\r é𝄞{}]{0,40}",
        ) {
            edits(&old, &new);
        }
    }
}
