//! A chunk whose items an edit parts: those before it stay, those after
//! it move, none in it. The chunk is shared, its two parts read with an
//! offset each ([`Split`]), where it was copied before.

use std::sync::Arc;

use super::{Chunk, Spanned, Window};
use crate::span::{FileId, Span};

/// Where the items of a chunk of the list's file part in two that an edit
/// between them moved apart (those of a template before the edit and the
/// plan's after it, in a chunk of an instance's references): an item
/// whose span (as stored) starts before `from` is read with the offset
/// `before`, the others with the chunk's. So a chunk whose items lie on
/// both sides of an edit, none in it, is shared, not copied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Split {
    pub(super) from: usize,
    pub(super) before: i64,
    /// What the spans of the items before `from` and of the others cover,
    /// as stored.
    pub(super) before_extent: Span,
    pub(super) after_extent: Span,
}

impl Split {
    /// The offset `item` (of the list's file) is read with, `by` being the
    /// chunk's.
    pub(super) fn offset<T: Spanned>(&self, item: &T, by: i64) -> i64 {
        match item.extent().start() < self.from {
            true => self.before,
            false => by,
        }
    }

    /// What the spans of both parts cover as they stand now.
    pub(super) fn extent(&self, by: i64) -> Span {
        let before = self.before_extent.shifted(self.before);
        before.to(self.after_extent.shifted(by))
    }
}

impl<T: Spanned> Chunk<T> {
    /// The chunk after an edit whose window cuts its extent, its items
    /// shared, when none of its items of `file` (the list's, or the list
    /// has none yet) reaches into the window: those before it stay, those
    /// after it move, a [`Split`] between them. `None` where one reaches
    /// into it (or the two parts cannot be told by where they start).
    pub(super) fn parted(&self, file: FileId, window: Window) -> Option<Chunk<T>> {
        let (mut before, mut after): (Option<Span>, Option<Span>) = (None, None);
        let mut last_before = 0;
        for item in self.items.iter().filter(|i| i.file() == file) {
            let stored = item.extent();
            let now = stored.shifted(self.by);
            let part = if now.end() <= window.keep_until {
                last_before = last_before.max(stored.start());
                &mut before
            } else if now.start() >= window.shift_from {
                &mut after
            } else {
                return None;
            };
            *part = Some(part.map_or(stored, |p| p.to(stored)));
        }
        let (before_extent, after_extent) = (before?, after?);
        let from = after_extent.start();
        (last_before < from).then(|| Chunk {
            items: Arc::clone(&self.items),
            by: self.by + window.by,
            split: Some(Split {
                from,
                before: self.by,
                before_extent,
                after_extent,
            }),
            extent: Some(Some(before_extent.to(after_extent))),
            renumber: self.renumber,
        })
    }

    /// A chunk with `split` after an edit of the list's file, shared: each
    /// part stays or moves whole. `None` where the window cuts a part.
    pub(super) fn split_moved(&self, split: Split, window: Window) -> Option<Chunk<T>> {
        let before = split.before_extent.shifted(split.before);
        let after = split.after_extent.shifted(self.by);
        let stays = |s: Span| s.end() <= window.keep_until;
        let moves = |s: Span| s.start() >= window.shift_from;
        let (new_before, by) = match (stays(before), stays(after)) {
            (true, true) => (split.before, self.by),
            (true, false) if moves(after) => (split.before, self.by + window.by),
            (false, false) if moves(before) => (split.before + window.by, self.by + window.by),
            _ => return None,
        };
        let stored = split.before_extent.to(split.after_extent);
        // Moved alike again (a letter typed, then taken back): one part.
        let split = (new_before != by).then_some(Split {
            before: new_before,
            ..split
        });
        Some(Chunk {
            items: Arc::clone(&self.items),
            by,
            split,
            extent: Some(Some(stored)),
            renumber: self.renumber,
        })
    }
}
