//! A [`TokenStore`]'s tokens encoded as the protocol sends them: each
//! token's line and column counted from the token before it. Only the
//! first piece of each tile is counted again (from the tile's place in the
//! text); the others are copied as they are kept.

use std::sync::Arc;

use super::cursor::Cursor;
use super::store::{Block, Piece, Segment, TokenStore};
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

/// A tile of a store: its block's index, and its index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct At {
    block: usize,
    tile: usize,
}

impl TokenStore {
    /// Every token of the file.
    pub fn encode(&self, text: &str, lines: &LineIndex) -> Vec<EncodedToken> {
        let mut out = Vec::with_capacity(self.total);
        let first = At { block: 0, tile: 0 };
        self.emit(first, None, (text, lines), None, &mut out);
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
        let mut out = Vec::new();
        self.emit(
            self.holding(start),
            Some(end),
            (text, lines),
            None,
            &mut out,
        );
        out
    }

    /// The last tile that starts at or before `offset` (or the first).
    fn holding(&self, offset: usize) -> At {
        let blocks = &self.blocks;
        let block = blocks
            .partition_point(|b| b.start as usize <= offset)
            .saturating_sub(1);
        let tile = blocks.get(block).map_or(0, |b| {
            b.tiles
                .partition_point(|s| (b.start + s.offset) as usize <= offset)
                .saturating_sub(1)
        });
        At { block, tile }
    }

    /// The change from `old` (the store of an earlier text, whose tokens an
    /// answer sent) to these tokens, or `None` if they are the same: one
    /// run from the first tile that is not the old one's (in the same
    /// place, the same text before it) to the last (counting from the end);
    /// the first token after the run is sent again too, as its place is
    /// counted from the token before it. Blocks both stores share are
    /// passed whole; only in the blocks where the run starts and ends are
    /// the tiles compared.
    pub fn delta(&self, old: &TokenStore, text: &str, lines: &LineIndex) -> Option<TokensDelta> {
        let (front, prefix) = same_front(old, self);
        let suffix = same_back(old, self, front).saturating_sub(1);
        let deleted = old.total - prefix - suffix;
        let inserted = self.total - prefix - suffix;
        if deleted == 0 && inserted == 0 {
            return None;
        }
        let mut tokens = Vec::with_capacity(inserted);
        let before = self.last_position_before(front, text, lines);
        self.emit(
            front,
            None,
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
    fn last_position_before(&self, tile: At, text: &str, lines: &LineIndex) -> (u32, u32) {
        fn in_block(b: &Block, to: usize) -> Option<(u32, &Segment)> {
            let mut tiles = b.tiles[..to].iter().rev();
            let found = tiles.find(|s| !s.pieces.is_empty());
            found.map(|s| (b.start + s.offset, s))
        }
        let found = self
            .blocks
            .get(tile.block)
            .and_then(|b| in_block(b, tile.tile));
        let found = found.or_else(|| {
            let before = self.blocks[..tile.block.min(self.blocks.len())]
                .iter()
                .rev();
            before
                .filter(|b| b.pieces > 0)
                .find_map(|b| in_block(b, b.tiles.len()))
        });
        let Some((start, segment)) = found else {
            return (0, 0);
        };
        let mut at = Cursor::new(lines, text, start as usize);
        let origin = at.position(start as usize);
        let mut position = (0, 0);
        for (i, piece) in segment.pieces.iter().enumerate() {
            position = match i {
                0 => first_position(origin, *piece),
                _ => next_position(position, *piece),
            };
        }
        position
    }

    /// The tiles from `from` on, each with where it starts.
    fn tiles_from(&self, from: At) -> impl Iterator<Item = (u32, &Segment)> + '_ {
        let blocks = self.blocks.get(from.block..).unwrap_or_default();
        blocks.iter().enumerate().flat_map(move |(i, b)| {
            let skip = if i == 0 { from.tile } else { 0 };
            let tiles = b.tiles.get(skip..).unwrap_or_default();
            tiles.iter().map(move |s| (b.start + s.offset, s))
        })
    }

    /// The tokens of the tiles from `from` on (up to the first after it
    /// that starts at or after `until`), counted on from `before` (the last
    /// token's place before them, and at most how many to give), or from
    /// the file's start.
    fn emit(
        &self,
        from: At,
        until: Option<usize>,
        (text, lines): (&str, &LineIndex),
        before: Option<((u32, u32), usize)>,
        out: &mut Vec<EncodedToken>,
    ) {
        let (mut last, limit) = before.unwrap_or(((0, 0), usize::MAX));
        let mut tiles = self.tiles_from(from).peekable();
        let Some(&(first, _)) = tiles.peek() else {
            return;
        };
        let mut at = Cursor::new(lines, text, first as usize);
        let mut left = limit;
        for (k, (start, segment)) in tiles.enumerate() {
            if left == 0 || (k > 0 && until.is_some_and(|end| start as usize >= end)) {
                return;
            }
            let Some((&head, rest)) = segment.pieces.split_first() else {
                continue;
            };
            let origin = at.position(start as usize);
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

/// The first tile at which `new` is not `old` (the same tiles, at the same
/// places, before it), and how many pieces come before it: whole blocks
/// both share are passed at once; in the first that differs, tile by tile.
fn same_front(old: &TokenStore, new: &TokenStore) -> (At, usize) {
    let (a, b) = (&old.blocks, &new.blocks);
    let mut prefix = 0;
    let mut block = 0;
    while block < a.len().min(b.len()) && a[block].start == b[block].start {
        if Arc::ptr_eq(&a[block].tiles, &b[block].tiles) {
            prefix += b[block].pieces;
            block += 1;
            continue;
        }
        let (x, y) = (&a[block].tiles, &b[block].tiles);
        let mut tile = 0;
        while tile < x.len().min(y.len())
            && x[tile].offset == y[tile].offset
            && Arc::ptr_eq(&x[tile].pieces, &y[tile].pieces)
        {
            prefix += y[tile].pieces.len();
            tile += 1;
        }
        if tile < x.len() || tile < y.len() {
            return (At { block, tile }, prefix);
        }
        block += 1;
    }
    (At { block, tile: 0 }, prefix)
}

/// How many pieces at the end of `new` are `old`'s (the same tiles, their
/// places counted from the tile before), none at or before `front`.
fn same_back(old: &TokenStore, new: &TokenStore, front: At) -> usize {
    let (a, b) = (&old.blocks, &new.blocks);
    let (mut i, mut j) = (a.len(), b.len());
    let mut suffix = 0;
    let after = |block: usize, tile: usize| At { block, tile } >= front;
    while i > 0 && j > 0 && after(i - 1, 0) && after(j - 1, 0) {
        let (x, y) = (&a[i - 1], &b[j - 1]);
        if Arc::ptr_eq(&x.tiles, &y.tiles) {
            suffix += y.pieces;
            i -= 1;
            j -= 1;
            continue;
        }
        let (mut s, mut t) = (x.tiles.len(), y.tiles.len());
        while s > 0 && t > 0 && Arc::ptr_eq(&x.tiles[s - 1].pieces, &y.tiles[t - 1].pieces) {
            suffix += y.tiles[t - 1].pieces.len();
            s -= 1;
            t -= 1;
        }
        if s > 0 || t > 0 {
            return suffix;
        }
        i -= 1;
        j -= 1;
    }
    // The blocks holding `front` (or after it), tile by tile down to it.
    if i > 0 && j > 0 && i - 1 == front.block && j - 1 == front.block {
        let (x, y) = (&a[i - 1].tiles, &b[j - 1].tiles);
        let (mut s, mut t) = (x.len(), y.len());
        while s > front.tile && t > front.tile && Arc::ptr_eq(&x[s - 1].pieces, &y[t - 1].pieces) {
            suffix += y[t - 1].pieces.len();
            s -= 1;
            t -= 1;
        }
    }
    suffix
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
