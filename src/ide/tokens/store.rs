//! Semantic tokens kept per tile ([`tiles`](super::tiles)), with their
//! positions relative to the tile, so that the tokens of a new text are
//! made again only for the tiles an edit touched and for those holding
//! names whose resolution changed; every other tile's tokens are the old
//! text's, shared. What an answer to the protocol needs (the whole file's
//! tokens, a range's, the change since an earlier answer) is encoded from
//! them ([`super::encode`]).

use std::sync::Arc;

use super::changed::{self, NameChunks};
use super::cursor::{utf16_len, Cursor};
use super::names::{name_hash, Hashes, NameSums, Names};
use super::tiles::{self, Role};
use super::{semantic_tokens, Token, TokenKind};
use crate::compile::Compilation;
use crate::line_index::LineIndex;
use crate::syntax::{ast, Edit};

/// The semantic tokens of one text, kept per tile.
pub struct TokenStore {
    pub(super) segments: Vec<Segment>,
    /// The number of pieces (tokens as the protocol counts them: one per
    /// line of a token over several lines).
    pub(super) total: usize,
    /// The length of the text.
    text_len: usize,
    /// The chunks of the checker's names the tokens were made from, to
    /// tell a later text's store which names changed (`None`: not made
    /// from the whole file's names).
    chunks: Option<NameChunks>,
}

/// One tile's tokens.
#[derive(Clone)]
pub(super) struct Segment {
    pub start: u32,
    role: Role,
    /// Whether no text that did not parse touches the tile.
    clean: bool,
    /// A hash of the names in the tile: where each stands (from the tile's
    /// start), its kind, and whether it is a definition.
    names: u64,
    /// Shared by every later text's store that keeps the tile as it is.
    pub pieces: Arc<[Piece]>,
}

/// One token on one line, as the protocol encodes it: its line and column
/// from the piece before it in the tile (the first's from the tile's start:
/// its line counted from the tile's line, its column from the tile's start
/// when on that line), its length in UTF-16 code units, kind and modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Piece {
    pub delta_line: u32,
    pub delta_start: u32,
    /// The length (27 bits), the kind (4 bits) and whether it is a
    /// definition (the last bit).
    length_kind: u32,
}

/// The kinds in the order of their 4-bit number in a [`Piece`].
const KINDS: [TokenKind; 12] = [
    TokenKind::Keyword,
    TokenKind::Comment,
    TokenKind::String,
    TokenKind::Number,
    TokenKind::Bool,
    TokenKind::Type,
    TokenKind::Plan,
    TokenKind::Template,
    TokenKind::Param,
    TokenKind::Role,
    TokenKind::Step,
    TokenKind::Task,
];

impl Piece {
    fn new(delta_line: u32, delta_start: u32, length: usize, token: &Token) -> Piece {
        // `KINDS` is in the order the kinds are declared.
        let kind = token.kind as u32;
        // A piece is one line of a file of at most 64 MiB: 27 bits hold it.
        let length = u32::try_from(length).unwrap_or(u32::MAX).min((1 << 27) - 1);
        Piece {
            delta_line,
            delta_start,
            length_kind: length << 5 | kind << 1 | u32::from(token.definition),
        }
    }

    pub fn length(self) -> u32 {
        self.length_kind >> 5
    }

    pub fn kind(self) -> TokenKind {
        KINDS
            .get(((self.length_kind >> 1) & 0xf) as usize)
            .copied()
            .unwrap_or(TokenKind::Keyword)
    }

    pub fn definition(self) -> bool {
        self.length_kind & 1 == 1
    }
}

impl TokenStore {
    /// The tokens of `compilation`'s file (`lines` is its text's line
    /// index), reusing the tiles of `base` — the store of an earlier text,
    /// and the edit that made this text of it — whose text the edit left as
    /// it was, that stand where the tiles of this text do, and whose names
    /// resolve as they did.
    pub fn build(
        compilation: &Compilation,
        lines: &LineIndex,
        base: Option<(&TokenStore, Edit)>,
    ) -> TokenStore {
        TokenStore::build_with(compilation, lines, base, true)
    }

    /// [`TokenStore::build`], telling the names that changed from the
    /// checker's chunks only if `chunks` (else every name is hashed).
    fn build_with(
        compilation: &Compilation,
        lines: &LineIndex,
        base: Option<(&TokenStore, Edit)>,
        chunks: bool,
    ) -> TokenStore {
        let use_chunks = chunks;
        let text = super::super::root_text(compilation);
        let file = super::super::root_syntax(compilation);
        let Some(tiles) = tiles::tiles(file).filter(|_| text.len() < u32::MAX as usize) else {
            return TokenStore::whole(compilation, lines);
        };
        let chunks = NameChunks::of(compilation);
        // The names the edit may have changed, if the chunks tell them;
        // else every name is hashed again.
        let changed = base.filter(|_| use_chunks).and_then(|(store, edit)| {
            let names = changed::changed(store.chunks.as_ref()?, &chunks, edit)?;
            let old = &store.segments;
            Some(NameSums::of(&names, (old.len(), |k| old[k].start), &tiles))
        });
        let names = match changed {
            Some(sums) => Hashes::Changed(sums),
            None => Hashes::Whole(Names::locate(compilation, &tiles)),
        };
        let end = |j: usize| tiles.get(j + 1).map_or(text.len(), |t| t.start as usize);
        let mut old = base.map(|(store, edit)| Old {
            store,
            edit,
            next: 0,
        });
        let placeholder: Arc<[Piece]> = Arc::from(Vec::new());
        let mut fresh = Vec::new();
        let mut segments = Vec::with_capacity(tiles.len());
        for (j, tile) in tiles.iter().enumerate() {
            let mut segment = Segment {
                start: tile.start,
                role: tile.role,
                clean: clean(file, tile.start as usize, end(j)),
                names: 0,
                pieces: Arc::clone(&placeholder),
            };
            let matched = old.as_mut().and_then(|old| old.matched(&segment, end(j)));
            let was = matched.map(|(k, old)| (old.names, k));
            match (names.of(j, was), matched) {
                (Some(hash), Some((_, old))) if hash == old.names => {
                    segment.names = hash;
                    segment.pieces = Arc::clone(&old.pieces);
                }
                _ => fresh.push(j),
            }
            segments.push(segment);
        }
        let (offsets, symbols) = match &names {
            Hashes::Whole(names) => names.tokens(compilation, &fresh, tiles.len()),
            Hashes::Changed(_) => {
                let ranges: Vec<_> = fresh
                    .iter()
                    .map(|&j| (tiles[j].start as usize, end(j)))
                    .collect();
                chunks.in_ranges(&ranges)
            }
        };
        let mut scratch = tiles::Scratch::default();
        let mut made = Vec::new();
        let mut at = Cursor::new(lines, text, 0);
        for (slot, &j) in fresh.iter().enumerate() {
            let tile = &tiles[j];
            let range = (tile.start as usize, end(j));
            let names = &symbols[offsets[slot]..offsets[slot + 1]];
            if tiles::fresh(compilation, range, tile.owner, names, &mut scratch).is_err() {
                return TokenStore::whole(compilation, lines);
            }
            pieces(&scratch.sorted, text, &mut at, range.0, &mut made);
            segments[j].pieces = Arc::from(&made[..]);
            segments[j].names = names.iter().fold(0u64, |sum, name| {
                sum.wrapping_add(name_hash(name.span.start() - range.0, name))
            });
        }
        let total = segments.iter().map(|s| s.pieces.len()).sum();
        TokenStore {
            segments,
            total,
            text_len: text.len(),
            chunks: Some(chunks),
        }
    }

    /// The tiles of `compilation`'s file that overlap the bytes
    /// `start..end`, alone: what a range asks of a text whose tokens are not
    /// kept yet, without making the others' (the names in those tiles read
    /// from the checker's chunks that reach into them, none hashed). `None` where the file cannot
    /// be cut. Its [`TokenStore::encode_range`] of the same bytes gives
    /// the whole store's.
    pub fn of_range(
        compilation: &Compilation,
        lines: &LineIndex,
        start: usize,
        end: usize,
    ) -> Option<TokenStore> {
        let text = super::super::root_text(compilation);
        let file = super::super::root_syntax(compilation);
        let tiles = tiles::tiles(file).filter(|_| text.len() < u32::MAX as usize)?;
        let end_of = |j: usize| tiles.get(j + 1).map_or(text.len(), |t| t.start as usize);
        let first = tiles
            .partition_point(|t| t.start as usize <= start)
            .saturating_sub(1);
        let last = tiles
            .partition_point(|t| (t.start as usize) < end)
            .max(first + 1)
            .min(tiles.len());
        let chosen = &tiles[first..last];
        let from = chosen.first()?.start as usize;
        let ranges: Vec<_> = (first..last)
            .map(|j| (tiles[j].start as usize, end_of(j)))
            .collect();
        let (offsets, names) = NameChunks::of(compilation).in_ranges(&ranges);
        let mut scratch = tiles::Scratch::default();
        let mut made = Vec::new();
        let mut at = Cursor::new(lines, text, from);
        let mut segments = Vec::with_capacity(chosen.len());
        for (k, tile) in chosen.iter().enumerate() {
            let range = (tile.start as usize, end_of(first + k));
            let names = &names[offsets[k]..offsets[k + 1]];
            tiles::fresh(compilation, range, tile.owner, names, &mut scratch).ok()?;
            pieces(&scratch.sorted, text, &mut at, range.0, &mut made);
            segments.push(Segment {
                start: tile.start,
                role: tile.role,
                clean: false,
                names: 0,
                pieces: Arc::from(&made[..]),
            });
        }
        Some(TokenStore {
            total: segments.iter().map(|s| s.pieces.len()).sum(),
            segments,
            text_len: text.len(),
            chunks: None,
        })
    }

    /// The file as one tile, from the whole file's tokens (where it cannot
    /// be cut).
    fn whole(compilation: &Compilation, lines: &LineIndex) -> TokenStore {
        let text = super::super::root_text(compilation);
        let mut made = Vec::new();
        let mut at = Cursor::new(lines, text, 0);
        pieces(&semantic_tokens(compilation), text, &mut at, 0, &mut made);
        let pieces: Arc<[Piece]> = Arc::from(made);
        TokenStore {
            total: pieces.len(),
            segments: vec![Segment {
                start: 0,
                role: Role::Whole,
                clean: false,
                names: 0,
                pieces,
            }],
            text_len: text.len(),
            chunks: None,
        }
    }

    /// The number of tokens as the protocol counts them.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether the file has no token.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many tiles the file is cut into.
    pub fn tiles(&self) -> usize {
        self.segments.len()
    }
}

/// Whether no text that did not parse touches `start..=end`.
fn clean(file: &ast::File, start: usize, end: usize) -> bool {
    let unparsed = &file.unparsed;
    let first = unparsed.partition_point(|u| u.end() < start);
    unparsed.get(first).is_none_or(|u| u.start() > end)
}

/// An earlier text's store, walked along the tiles of the new text.
struct Old<'a> {
    store: &'a TokenStore,
    edit: Edit,
    /// The first segment not yet passed.
    next: usize,
}

impl Old<'_> {
    /// Where segment `k` stands in the new text, if the edit left its text
    /// as it was: its start and end.
    fn moved(&self, k: usize) -> Option<(usize, usize)> {
        let segments = &self.store.segments;
        let start = segments[k].start as usize;
        let end = segments
            .get(k + 1)
            .map_or(self.store.text_len, |s| s.start as usize);
        let edit = self.edit;
        if end <= edit.start {
            Some((start, end))
        } else if start >= edit.old_end {
            let by = |offset: usize| offset - edit.old_end + edit.new_end;
            Some((by(start), by(end)))
        } else {
            None
        }
    }

    /// The old segment that `segment` (ending at `end`) stands where it
    /// stood, if there is one, and its index: the same text where it
    /// stands now, the same role, and no unparsed text near it before or
    /// now. Its tokens are the same if its names are too.
    fn matched(&mut self, segment: &Segment, end: usize) -> Option<(usize, &Segment)> {
        let start = segment.start as usize;
        let segments = &self.store.segments;
        while self.next < segments.len() {
            match self.moved(self.next) {
                Some((at, _)) if at >= start => break,
                _ => self.next += 1,
            }
        }
        let k = self.next;
        let old = segments.get(k)?;
        let same = self.moved(k) == Some((start, end))
            && old.role == segment.role
            && old.clean
            && segment.clean;
        same.then(|| {
            self.next += 1;
            (k, old)
        })
    }
}

/// The pieces of a tile's tokens (sorted, without overlaps), the tile
/// starting at `start`, into `out` (emptied first): a token over several
/// lines is cut into one piece per line, with no piece for an empty line or
/// a line's `\r`. `at` is not past the tile's start.
fn pieces(tokens: &[Token], text: &str, at: &mut Cursor<'_>, start: usize, out: &mut Vec<Piece>) {
    out.clear();
    let (first_line, first_column) = at.position(start);
    let mut last: Option<(u32, u32)> = None;
    for token in tokens {
        let mut from = token.span.start();
        while from < token.span.end() {
            let line_end = memchr::memchr(b'\n', &text.as_bytes()[from..token.span.end()])
                .map_or(token.span.end(), |i| from + i);
            let piece = text[from..line_end].trim_end_matches('\r');
            if !piece.is_empty() {
                let (line, column) = at.position(from);
                let (delta_line, delta_start) = match last {
                    Some((l, c)) if l == line => (0, column - c),
                    Some((l, _)) => (line - l, column),
                    None if line == first_line => (0, column - first_column),
                    None => (line - first_line, column),
                };
                out.push(Piece::new(delta_line, delta_start, utf16_len(piece), token));
                last = Some((line, column));
            }
            from = line_end + 1;
        }
    }
}

#[doc(hidden)]
impl TokenStore {
    /// [`TokenStore::build`] hashing every name of the file, as it did
    /// before it told the changed ones from the checker's chunks (for a
    /// benchmark's comparison).
    pub fn build_hashing_every_name(
        compilation: &Compilation,
        lines: &LineIndex,
        base: Option<(&TokenStore, Edit)>,
    ) -> TokenStore {
        TokenStore::build_with(compilation, lines, base, false)
    }

    /// How many of these tiles share their tokens with `other`'s (test
    /// support: what a store made from another kept).
    pub fn shared_with(&self, other: &TokenStore) -> usize {
        let theirs: std::collections::HashSet<*const Piece> =
            other.segments.iter().map(|s| s.pieces.as_ptr()).collect();
        self.segments
            .iter()
            .filter(|s| theirs.contains(&s.pieces.as_ptr()))
            .count()
    }
}

#[cfg(test)]
#[test]
fn each_kind_is_numbered_as_declared() {
    for (i, kind) in KINDS.into_iter().enumerate() {
        assert_eq!(kind as usize, i);
        let piece = Piece::new(
            0,
            0,
            3,
            &Token {
                span: crate::span::Span::default(),
                kind,
                definition: true,
            },
        );
        assert_eq!(
            (piece.kind(), piece.length(), piece.definition()),
            (kind, 3, true)
        );
    }
}
