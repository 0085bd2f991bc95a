//! A [`TokenStore`]'s tokens encoded as the protocol sends them: each
//! token's line and column counted from the token before it. Only the
//! first piece of each tile is counted again (from the tile's place in the
//! text); the others are copied as they are kept.

use std::ops::Range;
use std::sync::Arc;

use super::cursor::Cursor;
use super::store::{Piece, Segment, TokenStore};
use super::TokenKind;
use crate::line_index::LineIndex;

/// One token as the protocol encodes it: its line from the token before's,
/// its column from the token before's if on the same line (else from the
/// line's start, in UTF-16 code units), its length in UTF-16 code units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodedToken {
    pub delta_line: u32,
    pub delta_start: u32,
    pub length: u32,
    pub kind: TokenKind,
    pub definition: bool,
}

/// The change from an earlier answer's tokens to these: `deleted` tokens
/// from the `start`-th replaced by `tokens`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokensDelta {
    pub start: usize,
    pub deleted: usize,
    pub tokens: Vec<EncodedToken>,
}

impl TokenStore {
    /// Every token of the file.
    pub fn encode(&self, text: &str, lines: &LineIndex) -> Vec<EncodedToken> {
        let mut out = Vec::with_capacity(self.total);
        self.emit(0..self.segments.len(), (text, lines), None, &mut out);
        out
    }

    /// The tokens of the tiles that overlap the bytes `start..end`: every
    /// token that overlaps them, and those near it (the first counted from
    /// the file's start, as the protocol's range answer is).
    pub fn encode_range(
        &self,
        text: &str,
        lines: &LineIndex,
        start: usize,
        end: usize,
    ) -> Vec<EncodedToken> {
        let starts = |offset: usize| {
            self.segments
                .partition_point(|s| s.start as usize <= offset)
        };
        let first = starts(start).saturating_sub(1);
        let last = self
            .segments
            .partition_point(|s| (s.start as usize) < end)
            .max(first + 1)
            .min(self.segments.len());
        let mut out = Vec::new();
        self.emit(first..last, (text, lines), None, &mut out);
        out
    }

    /// The change from `old` (the store of an earlier text, whose tokens an
    /// answer sent) to these tokens, or `None` if they are the same: one
    /// run from the first tile that is not the old one's (in the same
    /// place, the same text before it) to the last (counting from the end);
    /// the first token after the run is sent again too, as its place is
    /// counted from the token before it.
    pub fn delta(&self, old: &TokenStore, text: &str, lines: &LineIndex) -> Option<TokensDelta> {
        let (a, b) = (&old.segments, &self.segments);
        let same = |x: &Segment, y: &Segment| Arc::ptr_eq(&x.pieces, &y.pieces);
        let mut front = 0;
        while front < a.len().min(b.len())
            && a[front].start == b[front].start
            && same(&a[front], &b[front])
        {
            front += 1;
        }
        let (mut old_back, mut back) = (a.len(), b.len());
        while old_back > front && back > front && same(&a[old_back - 1], &b[back - 1]) {
            old_back -= 1;
            back -= 1;
        }
        let count = |segments: &[Segment]| segments.iter().map(|s| s.pieces.len()).sum::<usize>();
        let prefix = count(&b[..front]);
        let suffix = count(&b[back..]).saturating_sub(1);
        let deleted = old.total - prefix - suffix;
        let inserted = self.total - prefix - suffix;
        if deleted == 0 && inserted == 0 {
            return None;
        }
        let mut tokens = Vec::with_capacity(inserted);
        let before = self.last_position_before(front, text, lines);
        self.emit(
            front..b.len(),
            (text, lines),
            Some((before, inserted)),
            &mut tokens,
        );
        Some(TokensDelta {
            start: prefix,
            deleted,
            tokens,
        })
    }

    /// Where the last token before tile `tile` stands (line, UTF-16
    /// column), or the file's start.
    fn last_position_before(&self, tile: usize, text: &str, lines: &LineIndex) -> (u32, u32) {
        let Some(k) = self.segments[..tile]
            .iter()
            .rposition(|s| !s.pieces.is_empty())
        else {
            return (0, 0);
        };
        let segment = &self.segments[k];
        let mut at = Cursor::new(lines, text, segment.start as usize);
        let origin = at.position(segment.start as usize);
        let mut position = (0, 0);
        for (i, piece) in segment.pieces.iter().enumerate() {
            position = match i {
                0 => first_position(origin, *piece),
                _ => next_position(position, *piece),
            };
        }
        position
    }

    /// The tokens of `tiles`, counted on from `before` (the last token's
    /// place before them, and at most how many to give), or from the
    /// file's start.
    fn emit(
        &self,
        tiles: Range<usize>,
        (text, lines): (&str, &LineIndex),
        before: Option<((u32, u32), usize)>,
        out: &mut Vec<EncodedToken>,
    ) {
        let (mut last, limit) = before.unwrap_or(((0, 0), usize::MAX));
        let Some(first) = self.segments.get(tiles.start) else {
            return;
        };
        let mut at = Cursor::new(lines, text, first.start as usize);
        let mut left = limit;
        for segment in &self.segments[tiles] {
            if left == 0 {
                return;
            }
            let Some((&head, rest)) = segment.pieces.split_first() else {
                continue;
            };
            let origin = at.position(segment.start as usize);
            let place = first_position(origin, head);
            let delta_line = place.0 - last.0;
            let delta_start = if delta_line == 0 {
                place.1 - last.1
            } else {
                place.1
            };
            out.push(encoded(delta_line, delta_start, head));
            last = place;
            left -= 1;
            for piece in rest.iter().take(left) {
                out.push(encoded(piece.delta_line, piece.delta_start, *piece));
                last = next_position(last, *piece);
            }
            left -= rest.len().min(left);
        }
    }
}

fn encoded(delta_line: u32, delta_start: u32, piece: Piece) -> EncodedToken {
    EncodedToken {
        delta_line,
        delta_start,
        length: piece.length(),
        kind: piece.kind(),
        definition: piece.definition(),
    }
}

/// Where a tile's first piece stands, the tile starting at `origin`.
fn first_position(origin: (u32, u32), piece: Piece) -> (u32, u32) {
    match piece.delta_line {
        0 => (origin.0, origin.1 + piece.delta_start),
        lines => (origin.0 + lines, piece.delta_start),
    }
}

/// Where a piece stands, the one before it at `last`.
fn next_position(last: (u32, u32), piece: Piece) -> (u32, u32) {
    match piece.delta_line {
        0 => (last.0, last.1 + piece.delta_start),
        lines => (last.0 + lines, piece.delta_start),
    }
}
