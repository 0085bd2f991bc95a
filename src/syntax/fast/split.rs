//! Reading a large file on two threads: a second thread reads the plan body
//! from a guessed item start past the middle; the first thread takes its
//! items only if it reaches an item of the body starting exactly there, so a
//! wrong guess costs only the second thread's work.

use super::Reader;
use crate::span::Span;
use crate::syntax::ast::{Keywords, PlanItem};

/// Files at least this large are read on two threads.
pub(super) const PARALLEL_THRESHOLD: usize = 256 << 10;

/// A guess at where an item of a plan's body starts, past the middle of
/// `text`: the least indented of the next lines that begin with `step` or
/// `task`. A wrong guess only costs the second thread's work.
pub(super) fn guess_item_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut line = text.len() / 2;
    let mut best: Option<(usize, usize)> = None;
    for _ in 0..256 {
        let end = bytes[line..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| line + i);
        let indent = bytes[line..end]
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        let word = &bytes[line + indent..end];
        let starts_item = (word.starts_with(b"step") || word.starts_with(b"task"))
            && matches!(word.get(4), Some(b' ' | b'\t'));
        // The first line may be cut in the middle: it does not count.
        if starts_item && line != text.len() / 2 && best.is_none_or(|(i, _)| indent < i) {
            best = Some((indent, line + indent));
        }
        if end == bytes.len() {
            break;
        }
        line = end + 1;
    }
    best.map(|(_, offset)| offset)
}

/// What the second thread read: the items of a plan's body from the guessed
/// start up to the `}` that closes the body.
pub(super) struct Tail {
    pub items: Vec<PlanItem>,
    pub comments: Vec<Span>,
    pub keywords: Keywords,
    /// Where the body's `}` is.
    pub end: usize,
}

pub(super) fn read_tail(text: &str, start: usize) -> Option<Tail> {
    let (reader, items) = body_from(text, start)?;
    Some(Tail {
        items,
        comments: reader.comments,
        keywords: reader.keywords,
        end: reader.pos,
    })
}

impl Reader<'_> {
    /// The second thread's items, when the item at `at` is where it started
    /// and it read on to the end of the body.
    pub(super) fn take_tail(&mut self, at: usize) -> Option<Tail> {
        if self.tail.as_ref()?.0 != at {
            return None;
        }
        let (_, answer) = self.tail.take()?;
        answer.recv().ok().flatten()
    }
}

/// What follows an item of a plan's body that was read elsewhere, to the end
/// of the file: the body's other items, its `}`, and the top-level items
/// after the plan (see `syntax/explain.rs`).
pub(in crate::syntax) struct Rest {
    pub items: Vec<PlanItem>,
    pub close: Span,
    pub top: Vec<crate::syntax::ast::TopItem>,
    pub comments: Vec<Span>,
    pub keywords: Keywords,
}

/// Reads the rest of a plan's body from `start` (where an item of it ends)
/// and the rest of the file after the plan; `None` where the reader gives
/// up (a mistake there, or anything it is not sure of).
pub(in crate::syntax) fn read_rest(text: &str, start: usize) -> Option<Rest> {
    let (mut reader, items) = body_from(text, start)?;
    let close = reader.eat(b'}').ok()?;
    reader.file().ok()?;
    Some(Rest {
        items,
        close,
        top: reader.items,
        comments: reader.comments,
        keywords: reader.keywords,
    })
}

/// A reader at `start` (where an item of a plan's body begins) that has read
/// the body's items up to its `}`, and those items; `None` where it gives up.
fn body_from(text: &str, start: usize) -> Option<(Reader<'_>, Vec<PlanItem>)> {
    let mut reader = Reader::new(text, text.len() - start);
    reader.pos = start;
    let mut items = Vec::new();
    while !reader.next_is(b'}') {
        let (keyword, word) = reader.keyword().ok()?;
        items.push(reader.plan_item(keyword, word).ok()?);
    }
    Some((reader, items))
}
