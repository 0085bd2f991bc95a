//! Semantic tokens kept per tile ([`tiles`](super::tiles)), with their
//! positions relative to the tile, so that the tokens of a new text are
//! made again only for the tiles an edit touched and for those holding
//! names whose resolution changed; every other tile's tokens are the old
//! text's, shared. The tiles are kept in blocks (a step with its tasks is
//! one), so that a keystroke passes the blocks it left as they were, each
//! one `Arc`, without a look at their tiles. What an answer to the protocol
//! needs (the whole file's tokens, a range's, the change since an earlier
//! answer) is encoded from them ([`super::encode`]).

use std::sync::Arc;

use super::changed::{self, NameChunks};
use super::cursor::{utf16_len, Cursor};
use super::names::{self, Hashes, NameSums, Names};
use super::tiles::{self, Role};
use super::{semantic_tokens, Token, TokenKind};
use crate::compile::Compilation;
use crate::line_index::LineIndex;
use crate::syntax::{ast, Edit};

/// The semantic tokens of one text, kept per tile, the tiles in blocks.
pub struct TokenStore {
    pub(super) blocks: Vec<Block>,
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

/// The tokens of one block of tiles ([`tiles::blocks`]): a body item (a
/// step with its tasks), or the one tile of the file's start, of a top
/// item or of what follows a body's last item.
#[derive(Clone)]
pub(super) struct Block {
    pub start: u32,
    role: Role,
    /// Whether no text that did not parse touches the block.
    clean: bool,
    /// A hash of the names in the block: where each stands (from the
    /// block's start), its kind, and whether it is a definition.
    names: u64,
    /// The number of pieces of its tiles.
    pub pieces: usize,
    /// Its tiles, shared by every later text's store that keeps the block
    /// as it is.
    pub tiles: Arc<[Segment]>,
}

/// One tile's tokens.
#[derive(Clone)]
pub(super) struct Segment {
    /// Where the tile starts, from its block's start.
    pub offset: u32,
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
    /// index), reusing the blocks and tiles of `base` — the store of an
    /// earlier text, and the edit that made this text of it — whose text
    /// the edit left as it was, that stand where the blocks and tiles of
    /// this text do, and whose names resolve as they did.
    pub fn build(
        compilation: &Compilation,
        lines: &LineIndex,
        base: Option<(&TokenStore, Edit)>,
    ) -> TokenStore {
        TokenStore::build_with(compilation, lines, base, true)
    }

    /// [`TokenStore::build`], telling the names that changed from the
    /// checker's chunks only if `chunks` (else every name is hashed). A
    /// block kept is one `Arc` shared; only a block made again is cut into
    /// its tiles, each kept or made again alone.
    fn build_with(
        compilation: &Compilation,
        lines: &LineIndex,
        base: Option<(&TokenStore, Edit)>,
        chunks: bool,
    ) -> TokenStore {
        let use_chunks = chunks;
        let text = super::super::root_text(compilation);
        let file = super::super::root_syntax(compilation);
        let Some(blocks) = tiles::blocks(file).filter(|_| text.len() < u32::MAX as usize) else {
            return TokenStore::whole(compilation, lines);
        };
        let chunks = NameChunks::of(compilation);
        // The names the edit may have changed, if the chunks tell them;
        // else every name is hashed again.
        let changed = base.filter(|_| use_chunks).and_then(|(store, edit)| {
            let names = changed::changed(store.chunks.as_ref()?, &chunks, edit)?;
            let old = &store.blocks;
            Some(NameSums::of(&names, (old.len(), |k| old[k].start), &blocks))
        });
        let names = match changed {
            Some(sums) => Hashes::Changed(sums),
            None => Hashes::Whole(Names::locate(compilation, &blocks)),
        };
        let end = |j: usize| blocks.get(j + 1).map_or(text.len(), |t| t.start as usize);
        let old = base.map(|(store, edit)| Old { store, edit });
        let placeholder: Arc<[Segment]> = Arc::from(Vec::new());
        let mut fresh = Vec::new();
        let mut kept = Vec::with_capacity(blocks.len());
        for (j, block) in blocks.iter().enumerate() {
            let clean = clean(file, block.start as usize, end(j));
            let matched = old
                .as_ref()
                .and_then(|old| old.block(block.start as usize, end(j), block.role, clean));
            let was = matched.map(|(k, old)| (old.names, k));
            match (names.of(j, was), matched) {
                (Some(hash), Some((_, old))) if hash == old.names => kept.push(Block {
                    start: block.start,
                    ..old.clone()
                }),
                _ => {
                    fresh.push(j);
                    kept.push(Block {
                        start: block.start,
                        role: block.role,
                        clean,
                        names: 0,
                        pieces: 0,
                        tiles: Arc::clone(&placeholder),
                    });
                }
            }
        }
        let (offsets, symbols) = match &names {
            Hashes::Whole(names) => names.tokens(compilation, &fresh, blocks.len()),
            Hashes::Changed(_) => {
                let ranges: Vec<_> = fresh
                    .iter()
                    .map(|&j| (blocks[j].start as usize, end(j)))
                    .collect();
                chunks.in_ranges(&ranges)
            }
        };
        let mut maker = Maker::new(compilation, lines, old.as_ref());
        for (slot, &j) in fresh.iter().enumerate() {
            let names = &symbols[offsets[slot]..offsets[slot + 1]];
            let made = tiles::expand(file, blocks[j], end(j))
                .and_then(|tiles| maker.block(&tiles, end(j), names));
            match made {
                Some(block) => kept[j] = block,
                None => return TokenStore::whole(compilation, lines),
            }
        }
        TokenStore {
            total: kept.iter().map(|b| b.pieces).sum(),
            blocks: kept,
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
        let blocks = tiles::blocks(file).filter(|_| text.len() < u32::MAX as usize)?;
        let end_of = |j: usize| blocks.get(j + 1).map_or(text.len(), |t| t.start as usize);
        let first = blocks
            .partition_point(|t| t.start as usize <= start)
            .saturating_sub(1);
        let last = blocks
            .partition_point(|t| (t.start as usize) < end)
            .max(first + 1)
            .min(blocks.len());
        // The tiles of those blocks, each with its end and its block.
        let mut all = Vec::new();
        for (j, &block) in blocks.iter().enumerate().take(last).skip(first) {
            let tiles = tiles::expand(file, block, end_of(j))?;
            for (i, tile) in tiles.iter().enumerate() {
                let tile_end = tiles.get(i + 1).map_or(end_of(j), |t| t.start as usize);
                all.push((*tile, tile_end, j));
            }
        }
        // The tiles `encode_range` picks: the one holding `start`, and
        // those after it that start before `end`.
        let from = all
            .partition_point(|t| t.0.start as usize <= start)
            .saturating_sub(1);
        let to = all
            .partition_point(|t| (t.0.start as usize) < end)
            .max(from + 1)
            .min(all.len());
        let chosen = all.get(from..to)?;
        let ranges: Vec<_> = chosen.iter().map(|t| (t.0.start as usize, t.1)).collect();
        let (offsets, names) = NameChunks::of(compilation).in_ranges(&ranges);
        let mut scratch = tiles::Scratch::default();
        let mut made = Vec::new();
        let mut at = Cursor::new(lines, text, ranges.first()?.0);
        let mut out: Vec<(usize, Vec<Segment>)> = Vec::new();
        for (k, &(tile, tile_end, j)) in chosen.iter().enumerate() {
            let range = (tile.start as usize, tile_end);
            let names = &names[offsets[k]..offsets[k + 1]];
            tiles::fresh(compilation, range, tile.owner, names, &mut scratch).ok()?;
            pieces(&scratch.sorted, text, &mut at, range.0, &mut made);
            let segment = Segment {
                offset: tile.start - blocks[j].start,
                role: tile.role,
                clean: false,
                names: 0,
                pieces: Arc::from(&made[..]),
            };
            match out.last_mut() {
                Some((block, segments)) if *block == j => segments.push(segment),
                _ => out.push((j, vec![segment])),
            }
        }
        let blocks: Vec<Block> = out
            .into_iter()
            .map(|(j, segments)| Block {
                start: blocks[j].start,
                role: blocks[j].role,
                clean: false,
                names: 0,
                pieces: segments.iter().map(|s| s.pieces.len()).sum(),
                tiles: Arc::from(segments),
            })
            .collect();
        Some(TokenStore {
            total: blocks.iter().map(|b| b.pieces).sum(),
            blocks,
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
        let tile = Segment {
            offset: 0,
            role: Role::Whole,
            clean: false,
            names: 0,
            pieces,
        };
        TokenStore {
            total: tile.pieces.len(),
            blocks: vec![Block {
                start: 0,
                role: Role::Whole,
                clean: false,
                names: 0,
                pieces: tile.pieces.len(),
                tiles: Arc::from(vec![tile]),
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
        self.blocks.iter().map(|b| b.tiles.len()).sum()
    }
}

/// What makes the blocks of a new text that are not kept whole: each cut
/// into its tiles, each tile kept from the old store where it stands as it
/// stood with the same names, else made again.
struct Maker<'a> {
    compilation: &'a Compilation,
    old: Option<&'a Old<'a>>,
    at: Cursor<'a>,
    scratch: tiles::Scratch,
    made: Vec<Piece>,
    /// A block's names by tile ([`names::by_tile`]).
    offsets: Vec<usize>,
    names: Vec<Token>,
}

impl<'a> Maker<'a> {
    fn new(compilation: &'a Compilation, lines: &'a LineIndex, old: Option<&'a Old<'a>>) -> Self {
        let text = super::super::root_text(compilation);
        Maker {
            compilation,
            old,
            at: Cursor::new(lines, text, 0),
            scratch: tiles::Scratch::default(),
            made: Vec::new(),
            offsets: Vec::new(),
            names: Vec::new(),
        }
    }

    /// The block of `tiles` (its first tile the block's own), which ends
    /// at `end` and holds `names`; `None` where the file cannot be cut
    /// there.
    fn block(&mut self, tiles: &[tiles::Tile], end: usize, names: &[Token]) -> Option<Block> {
        let text = super::super::root_text(self.compilation);
        let file = super::super::root_syntax(self.compilation);
        let first = *tiles.first()?;
        names::by_tile(names, tiles, (&mut self.offsets, &mut self.names));
        let mut segments = Vec::with_capacity(tiles.len());
        for (i, tile) in tiles.iter().enumerate() {
            let range = (
                tile.start as usize,
                tiles.get(i + 1).map_or(end, |t| t.start as usize),
            );
            let names = &self.names[self.offsets[i]..self.offsets[i + 1]];
            let hash = names::hash_from(range.0, names);
            let clean = clean(file, range.0, range.1);
            let kept = self
                .old
                .and_then(|old| old.tile(range, tile.role, clean))
                .filter(|old| old.names == hash);
            let pieces = match kept {
                Some(old) => Arc::clone(&old.pieces),
                None => {
                    let (compilation, scratch) = (self.compilation, &mut self.scratch);
                    tiles::fresh(compilation, range, tile.owner, names, scratch).ok()?;
                    pieces(&scratch.sorted, text, &mut self.at, range.0, &mut self.made);
                    Arc::from(&self.made[..])
                }
            };
            segments.push(Segment {
                offset: tile.start - first.start,
                role: tile.role,
                clean,
                names: hash,
                pieces,
            });
        }
        Some(Block {
            start: first.start,
            role: first.role,
            clean: clean(file, first.start as usize, end),
            names: names::hash_from(first.start as usize, names),
            pieces: segments.iter().map(|s| s.pieces.len()).sum(),
            tiles: Arc::from(segments),
        })
    }
}

/// Whether no text that did not parse touches `start..=end`.
fn clean(file: &ast::File, start: usize, end: usize) -> bool {
    let unparsed = &file.unparsed;
    let first = unparsed.partition_point(|u| u.end() < start);
    unparsed.get(first).is_none_or(|u| u.start() > end)
}

/// An earlier text's store, and the edit from its text to the new one.
struct Old<'a> {
    store: &'a TokenStore,
    edit: Edit,
}

impl Old<'_> {
    /// Where the new text's offset `at` stood in the old text, if the edit
    /// did not make it.
    fn was(&self, at: usize) -> Option<usize> {
        let edit = self.edit;
        if at < edit.start {
            Some(at)
        } else if at >= edit.new_end {
            Some(at - edit.new_end + edit.old_end)
        } else {
            None
        }
    }

    /// Where the old text's bytes `start..end` stand in the new text, if
    /// the edit left them as they were.
    fn moved(&self, start: usize, end: usize) -> Option<(usize, usize)> {
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

    /// Where old block `k` ends.
    fn block_end(&self, k: usize) -> usize {
        let blocks = &self.store.blocks;
        blocks
            .get(k + 1)
            .map_or(self.store.text_len, |b| b.start as usize)
    }

    /// The old block that the new block `start..end` (of `role`; `clean`:
    /// touched by no unparsed text) stands where it stood, if there is
    /// one, and its index: the same text where it stands now, the same
    /// role, and no unparsed text near it before or now. Its tokens are
    /// the same if its names are too.
    fn block(&self, start: usize, end: usize, role: Role, clean: bool) -> Option<(usize, &Block)> {
        let was = self.was(start)?;
        let blocks = &self.store.blocks;
        let k = blocks
            .binary_search_by_key(&was, |b| b.start as usize)
            .ok()?;
        let old = &blocks[k];
        let same = self.moved(was, self.block_end(k)) == Some((start, end))
            && old.role == role
            && old.clean
            && clean;
        same.then_some((k, old))
    }

    /// The old tile that the new tile `start..end` stands where it stood,
    /// as [`Old::block`] tells of blocks.
    fn tile(&self, (start, end): (usize, usize), role: Role, clean: bool) -> Option<&Segment> {
        let was = self.was(start)?;
        let blocks = &self.store.blocks;
        let k = blocks
            .partition_point(|b| b.start as usize <= was)
            .checked_sub(1)?;
        let block = &blocks[k];
        let offset = was - block.start as usize;
        let tiles = &block.tiles;
        let i = tiles
            .binary_search_by_key(&offset, |s| s.offset as usize)
            .ok()?;
        let tile_end = tiles
            .get(i + 1)
            .map_or(self.block_end(k), |s| (block.start + s.offset) as usize);
        let old = &tiles[i];
        let same = self.moved(was, tile_end) == Some((start, end))
            && old.role == role
            && old.clean
            && clean;
        same.then_some(old)
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
        fn tiles(store: &TokenStore) -> impl Iterator<Item = *const Piece> + '_ {
            let blocks = store.blocks.iter();
            blocks.flat_map(|b| b.tiles.iter().map(|s| s.pieces.as_ptr()))
        }
        let theirs: std::collections::HashSet<*const Piece> = tiles(other).collect();
        tiles(self).filter(|p| theirs.contains(p)).count()
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
