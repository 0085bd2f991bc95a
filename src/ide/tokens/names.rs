//! The hash of the names in each block of tiles (where each stands in the
//! block, its kind, whether it is a definition), which tells whether a
//! block's tokens can be kept: from a pass over every name of the file
//! ([`Names`]), or from the old blocks' hashes and the names that changed
//! ([`NameSums`]). The same sums, over a block's names, tell which of its
//! tiles can be kept when it is made again.

use super::changed::ChangedNames;
use super::tiles::{self, Tile};
use super::{Token, TokenKind};
use crate::compile::Compilation;
use crate::span::Span;

/// How the hash of a tile's names is told.
pub(super) enum Hashes {
    /// Every name of the file hashed.
    Whole(Names),
    /// From the old tile's, with only the names that changed.
    Changed(NameSums),
}

impl Hashes {
    /// The hash of block `j`'s names, if told without its names: `was` is
    /// the hash of the old block it stands in place of, and that block's
    /// index in the old store.
    pub fn of(&self, j: usize, was: Option<(u64, usize)>) -> Option<u64> {
        match self {
            Hashes::Whole(names) => names.hashes.get(j).copied(),
            Hashes::Changed(sums) => {
                let (hash, k) = was?;
                let sum = |sums: &[(usize, u64)], at: usize| {
                    sums.binary_search_by_key(&at, |&(k, _)| k)
                        .map_or(0, |i| sums[i].1)
                };
                Some(
                    hash.wrapping_sub(sum(&sums.old, k))
                        .wrapping_add(sum(&sums.new, j)),
                )
            }
        }
    }
}

/// The hashes of the names that changed, summed per block: of the old
/// text's (by the old store's block) and of the new text's (by the new
/// block), each list by block, in order (looked up by a binary search: a
/// hash map's lookup for every block cost more than the names it spared).
/// A block's hash is a sum over its names, and every other name stands
/// where it stood in a block the edit left as it was.
pub(super) struct NameSums {
    old: Vec<(usize, u64)>,
    new: Vec<(usize, u64)>,
}

impl NameSums {
    /// The sums of `names`, the old store having `old_blocks` blocks,
    /// block `k` starting at `old_start(k)`.
    pub fn of(
        names: &ChangedNames,
        (old_blocks, old_start): (usize, impl Fn(usize) -> u32),
        blocks: &[Tile],
    ) -> NameSums {
        NameSums {
            old: summed(&names.old, old_blocks, old_start),
            new: summed(&names.new, blocks.len(), |j| blocks[j].start),
        }
    }
}

/// The hashes of `tokens` summed per block, of `count` blocks, block `k`
/// starting at `start(k)` (in order): by block, in order.
fn summed(tokens: &[Token], count: usize, start: impl Fn(usize) -> u32) -> Vec<(usize, u64)> {
    let mut hashes = Vec::with_capacity(tokens.len());
    for token in tokens {
        let at = token.span.start();
        // The last tile that starts at or before the name.
        let (mut low, mut high) = (0, count);
        while low < high {
            let middle = low + (high - low) / 2;
            match start(middle) as usize <= at {
                true => low = middle + 1,
                false => high = middle,
            }
        }
        let Some(k) = low.checked_sub(1) else {
            continue;
        };
        hashes.push((k, name_hash(at - start(k) as usize, token)));
    }
    hashes.sort_unstable_by_key(|&(k, _)| k);
    let mut sums: Vec<(usize, u64)> = Vec::with_capacity(hashes.len());
    for (k, hash) in hashes {
        match sums.last_mut() {
            Some(last) if last.0 == k => last.1 = last.1.wrapping_add(hash),
            _ => sums.push((k, hash)),
        }
    }
    sums
}

/// The file's names (definitions and references in it) by block (the
/// blocks given as their first tiles).
pub(super) struct Names {
    /// The block of each definition, then of each reference (`u32::MAX`:
    /// none, not in the file or empty).
    tile_of: Vec<u32>,
    /// Per block, a sum of a hash of each name in it (where it stands from
    /// the block's start).
    hashes: Vec<u64>,
}

impl Names {
    pub fn locate(compilation: &Compilation, tiles: &[Tile]) -> Names {
        let mut hashes = vec![0u64; tiles.len()];
        let mut tile_of = Vec::with_capacity(symbol_count(compilation));
        let mut cursor = 0;
        for token in name_tokens(compilation) {
            let Some(token) = token else {
                tile_of.push(u32::MAX);
                continue;
            };
            let tile = tile_at(tiles, &mut cursor, token.span.start());
            let relative = token.span.start() - tiles[tile].start as usize;
            hashes[tile] = hashes[tile].wrapping_add(name_hash(relative, &token));
            tile_of.push(tile as u32);
        }
        Names { tile_of, hashes }
    }

    /// The name tokens of the blocks of `fresh` (block indices, in order),
    /// each block's definitions first, each in the symbols' order: those of
    /// `fresh[k]` are `tokens[offsets[k]..offsets[k + 1]]`.
    pub fn tokens(
        &self,
        compilation: &Compilation,
        fresh: &[usize],
        tiles: usize,
    ) -> (Vec<usize>, Vec<Token>) {
        let mut slot_of = vec![u32::MAX; tiles];
        for (slot, &tile) in fresh.iter().enumerate() {
            slot_of[tile] = slot as u32;
        }
        let slot = |tile: u32| {
            slot_of
                .get(tile as usize)
                .copied()
                .filter(|&s| s != u32::MAX)
        };
        let mut offsets = vec![0usize; fresh.len() + 1];
        for &tile in &self.tile_of {
            if let Some(s) = slot(tile) {
                offsets[s as usize + 1] += 1;
            }
        }
        for k in 1..offsets.len() {
            offsets[k] += offsets[k - 1];
        }
        let mut next = offsets.clone();
        let empty = Token {
            span: Span::default(),
            kind: TokenKind::Keyword,
            definition: false,
        };
        let mut tokens = vec![empty; offsets[fresh.len()]];
        let symbols = &compilation.checked.symbols;
        let definitions = symbols.definitions.len();
        // Only the names of those tiles are made into tokens.
        for (i, &tile) in self.tile_of.iter().enumerate() {
            let Some(s) = slot(tile) else {
                continue;
            };
            let token = match i.checked_sub(definitions) {
                None => symbols
                    .definitions
                    .get(i)
                    .map(|d| tiles::symbol_token(d.kind(), d.span(), true)),
                Some(r) => symbols.references.get(r).and_then(|r| {
                    let kind = symbols.definitions.get(r.definition as usize)?.kind();
                    Some(tiles::symbol_token(kind, r.span, false))
                }),
            };
            if let Some(token) = token {
                tokens[next[s as usize]] = token;
                next[s as usize] += 1;
            }
        }
        (offsets, tokens)
    }
}

fn symbol_count(compilation: &Compilation) -> usize {
    let symbols = &compilation.checked.symbols;
    symbols.definitions.len() + symbols.references.len()
}

/// The token of every definition, then of every reference, of the
/// compilation (`None` for those in other files, or empty).
fn name_tokens(compilation: &Compilation) -> impl Iterator<Item = Option<Token>> + '_ {
    let symbols = &compilation.checked.symbols;
    let root = compilation.file;
    let keep = move |file, span: Span| file == root && !span.is_empty();
    let definitions = symbols.definitions.iter().map(move |d| {
        keep(d.file(), d.span()).then(|| tiles::symbol_token(d.kind(), d.span(), true))
    });
    // Each definition's kind, read once (not a chunk lookup per reference).
    let kinds: Vec<_> = symbols.definitions.unmoved().map(|d| d.kind()).collect();
    let references = symbols.references.iter().map(move |r| {
        let kind = *kinds.get(r.definition as usize)?;
        keep(r.file, r.span).then(|| tiles::symbol_token(kind, r.span, false))
    });
    definitions.chain(references)
}

/// The tile holding `offset`, looked for from `cursor` (names come mostly
/// in order) and kept there.
fn tile_at(tiles: &[Tile], cursor: &mut usize, offset: usize) -> usize {
    let holds = |j: usize| {
        tiles[j].start as usize <= offset
            && tiles.get(j + 1).is_none_or(|t| offset < t.start as usize)
    };
    let found = [*cursor, *cursor + 1]
        .into_iter()
        .find(|&j| j < tiles.len() && holds(j))
        .unwrap_or_else(|| {
            tiles
                .partition_point(|t| t.start as usize <= offset)
                .saturating_sub(1)
        });
    *cursor = found;
    found
}

/// A hash of a name where it stands in its tile (SplitMix64's finaliser
/// of its place, length, kind and whether it is a definition).
pub(super) fn name_hash(relative: usize, token: &Token) -> u64 {
    let kind = token.kind as u64;
    let mut x = (relative as u64 ^ (token.span.len() as u64) << 32).wrapping_add(
        (kind << 1 | u64::from(token.definition)).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The sum of the hashes of `names`, each where it stands from `from`.
pub(super) fn hash_from(from: usize, names: &[Token]) -> u64 {
    names.iter().fold(0u64, |sum, name| {
        sum.wrapping_add(name_hash(name.span.start() - from, name))
    })
}

/// A block's names (each starting in one of its tiles, in the order
/// given) by tile: those of `tiles[k]` are `out[offsets[k]..offsets[k + 1]]`,
/// in the order given. `out` and `offsets` are emptied first.
pub(super) fn by_tile(
    names: &[Token],
    tiles: &[Tile],
    (offsets, out): (&mut Vec<usize>, &mut Vec<Token>),
) {
    // Names come mostly in order: each looked for from the last one's tile.
    let mut cursor = 0;
    let mut tile_of = |name: &Token| tile_at(tiles, &mut cursor, name.span.start());
    offsets.clear();
    offsets.resize(tiles.len() + 1, 0);
    for name in names {
        offsets[tile_of(name) + 1] += 1;
    }
    for k in 1..offsets.len() {
        offsets[k] += offsets[k - 1];
    }
    let mut next = offsets.clone();
    out.clear();
    if let Some(&first) = names.first() {
        out.resize(names.len(), first);
    }
    for name in names {
        let k = tile_of(name);
        out[next[k]] = *name;
        next[k] += 1;
    }
}
