//! The names whose tokens an edit may have changed, told without a pass
//! over the file's names: the checker keeps its definitions and references
//! in chunks (`ir::Shifted`) that the compilation of an edited text shares
//! with the one before wherever it left them as they were, moved only as
//! the edit moved the text. A store keeps the chunks its names were read
//! from ([`NameChunks`]); the store of a later text compares them with its
//! own, and only the names of the chunks that are not shared (in the old
//! text and in the new) can have changed ([`changed`]).

use crate::compile::Compilation;
use crate::ir::{ChunkRef, Definition, Reference, SymbolKind};
use crate::span::{FileId, Span};
use crate::syntax::Edit;

use super::tiles::symbol_token;
use super::Token;

/// The chunks a store's names were read from.
pub(super) struct NameChunks {
    file: FileId,
    definitions: Vec<ChunkRef<Definition>>,
    /// The index of each definition chunk's first definition.
    starts: Vec<usize>,
    references: Vec<ChunkRef<Reference>>,
}

impl NameChunks {
    /// The chunks of `compilation`'s names (one `Arc` each, shared).
    pub fn of(compilation: &Compilation) -> NameChunks {
        let symbols = &compilation.checked.symbols;
        let definitions = symbols.definitions.chunk_refs();
        let starts = definitions
            .iter()
            .scan(0, |start, chunk| {
                let this = *start;
                *start += chunk.len();
                Some(this)
            })
            .collect();
        NameChunks {
            file: compilation.file,
            definitions,
            starts,
            references: symbols.references.chunk_refs(),
        }
    }

    /// The kind of definition `index`.
    fn kind(&self, index: usize) -> Option<SymbolKind> {
        let c = self
            .starts
            .partition_point(|&s| s <= index)
            .checked_sub(1)?;
        let chunk = self.definitions.get(c)?.unmoved();
        chunk.get(index - self.starts[c]).map(|d| d.kind())
    }

    /// The tokens of the names that start in each of `ranges` (sorted,
    /// apart), read only from the chunks whose names reach into one: those
    /// of `ranges[k]` are `tokens[offsets[k]..offsets[k + 1]]`, definitions
    /// first, each in the symbols' order. Returns `(offsets, tokens)`.
    pub fn in_ranges(&self, ranges: &[(usize, usize)]) -> (Vec<usize>, Vec<Token>) {
        let file = self.file;
        let reaches = |extent: Option<Span>| {
            extent.is_some_and(|e| {
                let k = ranges.partition_point(|r| r.1 <= e.start());
                ranges.get(k).is_some_and(|r| r.0 <= e.end())
            })
        };
        let slot = |at: usize| {
            let k = ranges.partition_point(|r| r.0 <= at).checked_sub(1)?;
            (at < ranges[k].1).then_some(k)
        };
        let mut found: Vec<(usize, Token)> = Vec::new();
        let mut take = |f: FileId, token: Token| {
            if f == file && !token.span.is_empty() {
                if let Some(k) = slot(token.span.start()) {
                    found.push((k, token));
                }
            }
        };
        for chunk in self.definitions.iter().filter(|c| reaches(c.extent(file))) {
            for d in chunk.iter() {
                take(d.file(), symbol_token(d.kind(), d.span(), true));
            }
        }
        for chunk in self.references.iter().filter(|c| reaches(c.extent(file))) {
            for r in chunk.iter() {
                if let Some(kind) = self.kind(r.definition as usize) {
                    take(r.file, symbol_token(kind, r.span, false));
                }
            }
        }
        // Stable: each range's names stay in the order they were found.
        found.sort_by_key(|&(k, _)| k);
        let mut offsets = vec![0; ranges.len() + 1];
        for &(k, _) in &found {
            offsets[k + 1] += 1;
        }
        for k in 1..offsets.len() {
            offsets[k] += offsets[k - 1];
        }
        (offsets, found.into_iter().map(|(_, token)| token).collect())
    }

    /// The tokens of the names of the file in the definition chunks
    /// `definitions` and the reference chunks `references` (each its index
    /// in the list and that of its first item), where they stand.
    fn tokens(&self, definitions: &[(usize, usize)], references: &[(usize, usize)]) -> Vec<Token> {
        let file = self.file;
        let keep = |f: FileId, span: Span| f == file && !span.is_empty();
        let mut out = Vec::new();
        for &(c, _) in definitions {
            let names = self.definitions[c]
                .iter()
                .filter(|d| keep(d.file(), d.span()));
            out.extend(names.map(|d| symbol_token(d.kind(), d.span(), true)));
        }
        for &(c, _) in references {
            for r in self.references[c].iter().filter(|r| keep(r.file, r.span)) {
                // A reference to no definition has no token (as in a pass
                // over every name).
                if let Some(kind) = self.kind(r.definition as usize) {
                    out.push(symbol_token(kind, r.span, false));
                }
            }
        }
        out
    }
}

/// The names (as tokens) of the chunks only one of two texts holds: `old`
/// where they stood in the old text, `new` where they stand in the new.
/// Every other name of either text is in a chunk both hold, moved as the
/// edit moved the text, with the same kind.
pub(super) struct ChangedNames {
    pub old: Vec<Token>,
    pub new: Vec<Token>,
}

/// The names that differ between `old`'s chunks and `new`'s, `edit` being
/// the edit from the old text to the new; `None` where that cannot be told
/// from the chunks (another file, a definition more or less — every
/// reference then may name another — a definition whose kind changed) or
/// where more than an eighth of the names are in chunks not shared (a
/// pass over every name costs less).
pub(super) fn changed(old: &NameChunks, new: &NameChunks, edit: Edit) -> Option<ChangedNames> {
    if old.file != new.file {
        return None;
    }
    let file = new.file;
    let count = |chunks: &[ChunkRef<Definition>]| chunks.iter().map(ChunkRef::len).sum::<usize>();
    if count(&old.definitions) != count(&new.definitions) {
        return None;
    }
    let definitions = pair(&old.definitions, &new.definitions, file, edit);
    let references = pair(&old.references, &new.references, file, edit);
    // More than an eighth of the names in chunks not shared (a whole
    // compile, lists the checker made again): a pass over every name costs
    // less than hashing them one by one into maps.
    let sizes =
        |list: &Unshared, old_of: &dyn Fn(usize) -> usize, new_of: &dyn Fn(usize) -> usize| {
            list.old.iter().map(|&(c, _)| old_of(c)).sum::<usize>()
                + list.new.iter().map(|&(c, _)| new_of(c)).sum::<usize>()
        };
    let unshared = sizes(&definitions, &|c| old.definitions[c].len(), &|c| {
        new.definitions[c].len()
    }) + sizes(&references, &|c| old.references[c].len(), &|c| {
        new.references[c].len()
    });
    let all = count(&new.definitions) + new.references.iter().map(ChunkRef::len).sum::<usize>();
    // The library's tests (chunks of 8) take this way unless nothing is
    // shared, so that the property tests follow it.
    let limit = match cfg!(test) {
        true => 2 * all,
        false => all / 8,
    };
    if unshared > limit || (cfg!(test) && unshared == limit) {
        return None;
    }
    // A reference's token is of its definition's kind: the references in
    // shared chunks name the same indices, whose kinds must be the same.
    for &(c, start) in &definitions.new {
        for (k, definition) in new.definitions[c].unmoved().iter().enumerate() {
            if old.kind(start + k) != Some(definition.kind()) {
                return None;
            }
        }
    }
    Some(ChangedNames {
        old: old.tokens(&definitions.old, &references.old),
        new: new.tokens(&definitions.new, &references.new),
    })
}

/// The chunks of a list that only one side holds: each as its index in its
/// side's list and the index of its first item.
struct Unshared {
    old: Vec<(usize, usize)>,
    new: Vec<(usize, usize)>,
}

/// The chunks of `old` and `new` (the same list in two texts) that are not
/// shared: a chunk is shared when both hold it, as the same items of the
/// list (the same index of its first), and its items of `file` moved as the
/// edit moved the text (all before it, not moved; or all after it, moved by
/// as much as the text grew).
fn pair<T: crate::ir::Spanned>(
    old: &[ChunkRef<T>],
    new: &[ChunkRef<T>],
    file: FileId,
    edit: Edit,
) -> Unshared {
    let grew = edit.new_end as i64 - edit.old_end as i64;
    let mut unshared = Unshared {
        old: Vec::new(),
        new: Vec::new(),
    };
    let mut old_start = vec![0; old.len()];
    let mut start = 0;
    for (c, chunk) in old.iter().enumerate() {
        old_start[c] = start;
        start += chunk.len();
    }
    let mut matched = vec![false; old.len()];
    // Chunks stay in order: look for each from the last one matched.
    let mut from = 0;
    let mut start = 0;
    for (c, chunk) in new.iter().enumerate() {
        let found = (from..old.len())
            .chain(0..from)
            .find(|&o| old[o].same(chunk));
        let shared = found.filter(|&o| {
            let moved = chunk.by(file) - old[o].by(file);
            old_start[o] == start
                && match old[o].extent(file) {
                    None => true,
                    Some(was) => {
                        (moved == 0 && was.end() <= edit.start)
                            || (moved == grew && was.start() >= edit.old_end)
                    }
                }
        });
        match shared {
            Some(o) => {
                matched[o] = true;
                from = o + 1;
            }
            None => unshared.new.push((c, start)),
        }
        start += chunk.len();
    }
    for (o, &was_matched) in matched.iter().enumerate() {
        if !was_matched {
            unshared.old.push((o, old_start[o]));
        }
    }
    unshared
}
