//! A [`Definition`] in 32 bytes, not 48: a large plan has about one a task,
//! and the symbols keep every one.
//!
//! The name (a `SmolStr`, 24 bytes, before) is 16 bytes: up to
//! [`INLINE`] bytes of it in place, a longer one an `Arc<str>`. The two
//! spans' four offsets are 27 bits each of four `u32`s (a file planc parses
//! is at most `MAX_FILE_BYTES`, 64 MiB = 2²⁶ bytes, so its offsets are at
//! most 2²⁶), and their top 5 bits, 20 in all, hold the kind (3), whether
//! the name is an `Arc` (1), whether the definition is wide (1) and the
//! file (15). A definition whose offsets or file do not fit (an offset
//! past 2²⁷ − 1: the language server moves spans by edits before a text
//! past the limit is read again; the 32,768th file) is wide: its file, its
//! offsets and its name are one `Arc<str>`, the five numbers in hexadecimal
//! before the name, so every definition reads back exactly.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use super::SymbolKind;
use crate::span::{FileId, Span};

/// The longest name kept in the definition itself.
const INLINE: usize = 15;
/// The bits of an offset in each word.
const OFFSET_BITS: u32 = 27;
/// The largest offset the packed form holds.
const OFFSET_MAX: u32 = (1 << OFFSET_BITS) - 1;
/// The bits of the kind, of the meta bits the words' tops hold.
const KIND_MASK: u32 = 0b111;
/// The meta bit saying the name is an `Arc<str>`.
const HEAP: u32 = 1 << 3;
/// The meta bit saying the file, offsets and name are in the `Arc<str>`.
const WIDE: u32 = 1 << 4;
/// Where the file starts in the meta bits.
const FILE_SHIFT: u32 = 5;
/// The largest file the packed form holds.
const FILE_MAX: u32 = (1 << (4 * (32 - OFFSET_BITS) - FILE_SHIFT)) - 1;
/// The hexadecimal digits before a wide definition's name.
const WIDE_DIGITS: usize = 5 * 8;

/// A name: its bytes in place (the last byte its length), or an `Arc<str>`
/// (which of the two the definition's meta bits say).
union Name {
    inline: [u8; INLINE + 1],
    heap: ManuallyDrop<Arc<str>>,
}

/// A declaration: what the language server jumps to.
pub struct Definition {
    name: Name,
    /// The name's span's start and end, the whole declaration's span's
    /// start and end: 27 bits each, and 5 meta bits on top of each.
    words: [u32; 4],
}

const _: () = assert!(std::mem::size_of::<Definition>() == 32);

/// The kind numbered `bits` (as [`kind_bits`] numbers it).
fn kind_of(bits: u32) -> SymbolKind {
    match bits {
        0 => SymbolKind::Plan,
        1 => SymbolKind::Param,
        2 => SymbolKind::Role,
        3 => SymbolKind::Step,
        4 => SymbolKind::Task,
        5 => SymbolKind::Template,
        _ => SymbolKind::Instance,
    }
}

/// The number `kind` is kept as.
fn kind_bits(kind: SymbolKind) -> u32 {
    match kind {
        SymbolKind::Plan => 0,
        SymbolKind::Param => 1,
        SymbolKind::Role => 2,
        SymbolKind::Step => 3,
        SymbolKind::Task => 4,
        SymbolKind::Template => 5,
        SymbolKind::Instance => 6,
    }
}

/// `from` (at most [`INLINE`] bytes) at the start of `to`, in two copies
/// of a fixed size that may overlap: a call to copy so few bytes costs
/// more than they do.
#[inline]
fn copy_short(to: &mut [u8; INLINE + 1], from: &[u8]) {
    let len = from.len();
    match len {
        8.. => {
            to[..8].copy_from_slice(&from[..8]);
            to[len - 8..len].copy_from_slice(&from[len - 8..]);
        }
        4.. => {
            to[..4].copy_from_slice(&from[..4]);
            to[len - 4..len].copy_from_slice(&from[len - 4..]);
        }
        _ => to[..len]
            .iter_mut()
            .zip(from)
            .for_each(|(to, &from)| *to = from),
    }
}

/// The words holding `offsets` and `meta`.
#[inline]
fn words(offsets: [u32; 4], meta: u32) -> [u32; 4] {
    let top = 32 - OFFSET_BITS;
    let mut words = [0; 4];
    for (i, word) in words.iter_mut().enumerate() {
        let bits = (meta >> (top * i as u32)) & ((1 << top) - 1);
        *word = offsets[i] | (bits << OFFSET_BITS);
    }
    words
}

impl Definition {
    /// A definition of `name`, a `kind`, at `span` of `file`, the whole
    /// declaration at `full_span`.
    pub fn new(kind: SymbolKind, name: &str, file: FileId, span: Span, full_span: Span) -> Self {
        let offsets = [span, full_span].map(|s| [s.start() as u32, s.end() as u32]);
        let offsets = [offsets[0][0], offsets[0][1], offsets[1][0], offsets[1][1]];
        let kind = kind_bits(kind);
        if offsets.iter().any(|&o| o > OFFSET_MAX) || file.0 > FILE_MAX {
            return Definition::wide(kind, name, file, offsets);
        }
        let file = file.0 << FILE_SHIFT;
        match name.len() <= INLINE {
            true => {
                let mut inline = [0; INLINE + 1];
                copy_short(&mut inline, name.as_bytes());
                inline[INLINE] = name.len() as u8;
                Definition {
                    name: Name { inline },
                    words: words(offsets, kind | file),
                }
            }
            false => Definition {
                name: Name {
                    heap: ManuallyDrop::new(Arc::from(name)),
                },
                words: words(offsets, kind | HEAP | file),
            },
        }
    }

    /// A definition whose offsets or file do not fit the words: all of it
    /// in the `Arc<str>`, the numbers in hexadecimal before the name.
    #[cold]
    fn wide(kind: u32, name: &str, file: FileId, offsets: [u32; 4]) -> Definition {
        let [a, b, c, d] = offsets;
        let text = format!("{:08x}{a:08x}{b:08x}{c:08x}{d:08x}{name}", file.0);
        Definition {
            name: Name {
                heap: ManuallyDrop::new(Arc::from(text)),
            },
            words: words([0; 4], kind | HEAP | WIDE),
        }
    }

    /// The kind and the two flags: the first word's meta bits, all that
    /// the readers of a name or a kind look at (the file is above them).
    #[inline]
    fn flags(&self) -> u32 {
        self.words[0] >> OFFSET_BITS
    }

    /// The meta bits the words' tops hold.
    #[inline]
    fn meta(&self) -> u32 {
        self.flags() | (self.file_bits() << FILE_SHIFT)
    }

    /// The file, as the top bits of the last three words hold it (the
    /// first word's are [`flags`](Self::flags)).
    #[inline]
    fn file_bits(&self) -> u32 {
        let [_, b, c, d] = self.words.map(|w| w >> OFFSET_BITS);
        let top = 32 - OFFSET_BITS;
        b | (c << top) | (d << (2 * top))
    }

    /// The `Arc<str>` holding the name (and a wide definition's numbers),
    /// if the name is not in place.
    fn heap(&self) -> Option<&str> {
        // SAFETY: the meta bits say which field of the union was written;
        // `HEAP` set means `heap`, made by `new` and never moved out.
        (self.flags() & HEAP != 0).then(|| unsafe { &**self.name.heap })
    }

    /// The number `i` (0: the file, then the four offsets) of a wide
    /// definition's hexadecimal digits.
    #[cold]
    fn wide_number(text: &str, i: usize) -> u32 {
        u32::from_str_radix(&text[i * 8..i * 8 + 8], 16).unwrap_or(u32::MAX)
    }

    /// Offset `i`: the name's span's start and end, the declaration's.
    #[inline]
    fn offset(&self, i: usize) -> u32 {
        match self.flags() & WIDE {
            0 => self.words[i] & OFFSET_MAX,
            _ => Self::wide_number(self.heap().unwrap_or_default(), i + 1),
        }
    }

    /// What kind of thing it declares.
    #[inline]
    pub fn kind(&self) -> SymbolKind {
        kind_of(self.flags() & KIND_MASK)
    }

    /// The name declared.
    #[inline]
    pub fn name(&self) -> &str {
        match self.heap() {
            Some(text) if self.flags() & WIDE != 0 => &text[WIDE_DIGITS..],
            Some(text) => text,
            None => {
                // SAFETY: without `HEAP`, `inline` was written by `new`,
                // a `&str`'s bytes and then their number in its last byte
                // (at most `INLINE`): those bytes are UTF-8.
                unsafe {
                    let inline = &self.name.inline;
                    std::str::from_utf8_unchecked(&inline[..usize::from(inline[INLINE])])
                }
            }
        }
    }

    /// The file it is in.
    #[inline]
    pub fn file(&self) -> FileId {
        match self.flags() & WIDE {
            0 => FileId(self.file_bits()),
            _ => FileId(Self::wide_number(self.heap().unwrap_or_default(), 0)),
        }
    }

    /// The name's span.
    #[inline]
    pub fn span(&self) -> Span {
        Span::new(self.offset(0) as usize, self.offset(1) as usize)
    }

    /// The whole declaration's span.
    #[inline]
    pub fn full_span(&self) -> Span {
        Span::new(self.offset(2) as usize, self.offset(3) as usize)
    }

    /// The same definition at `span`, the whole declaration at `full_span`.
    pub fn at(&self, span: Span, full_span: Span) -> Definition {
        let offsets = [span.start(), span.end(), full_span.start(), full_span.end()];
        match self.flags() & WIDE == 0 && offsets.iter().all(|&o| o <= OFFSET_MAX as usize) {
            true => Definition {
                name: self.name_clone(),
                words: words(offsets.map(|o| o as u32), self.meta()),
            },
            false => Definition::new(self.kind(), self.name(), self.file(), span, full_span),
        }
    }

    /// The same definition named `name`.
    pub fn named(&self, name: &str) -> Definition {
        Definition::new(
            self.kind(),
            name,
            self.file(),
            self.span(),
            self.full_span(),
        )
    }

    /// A copy of the name (the `Arc` shared).
    fn name_clone(&self) -> Name {
        match self.flags() & HEAP {
            0 => {
                // SAFETY: without `HEAP`, `inline` was written (see `name`).
                let inline = unsafe { self.name.inline };
                Name { inline }
            }
            _ => {
                // SAFETY: `HEAP` says `heap` was written (see `heap`).
                let heap = unsafe { Arc::clone(&self.name.heap) };
                Name {
                    heap: ManuallyDrop::new(heap),
                }
            }
        }
    }
}

impl Clone for Definition {
    fn clone(&self) -> Definition {
        Definition {
            name: self.name_clone(),
            words: self.words,
        }
    }
}

impl Drop for Definition {
    fn drop(&mut self) {
        if self.flags() & HEAP != 0 {
            // SAFETY: `HEAP` says `heap` was written, and it is dropped
            // once, here.
            unsafe { ManuallyDrop::drop(&mut self.name.heap) }
        }
    }
}

impl PartialEq for Definition {
    fn eq(&self, other: &Definition) -> bool {
        self.kind() == other.kind()
            && self.name() == other.name()
            && self.file() == other.file()
            && self.span() == other.span()
            && self.full_span() == other.full_span()
    }
}

impl std::fmt::Debug for Definition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Definition")
            .field("kind", &self.kind())
            .field("name", &self.name())
            .field("file", &self.file())
            .field("span", &self.span())
            .field("full_span", &self.full_span())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [SymbolKind; 7] = [
        SymbolKind::Plan,
        SymbolKind::Param,
        SymbolKind::Role,
        SymbolKind::Step,
        SymbolKind::Task,
        SymbolKind::Template,
        SymbolKind::Instance,
    ];

    /// Every field reads back as given, through a clone and a move of its
    /// spans, across the edges of each packed field.
    #[test]
    fn reads_back_what_it_was_made_of() {
        let names = [
            "",
            "t",
            "t0",
            "abc",
            "abcd",
            "abcdefg",
            "abcdefgh",
            "t99999",
            "a234567890abcde",
            "a234567890abcdef",
            "é",
            "ünïcödé_ñamé_of_sorts",
            "x".repeat(300).leak(),
        ];
        let offsets = [
            0,
            1,
            OFFSET_MAX as usize - 1,
            OFFSET_MAX as usize,
            OFFSET_MAX as usize + 1,
            u32::MAX as usize,
        ];
        let files = [0, 1, FILE_MAX, FILE_MAX + 1, u32::MAX];
        for (k, kind) in KINDS.into_iter().enumerate() {
            for (n, name) in names.into_iter().enumerate() {
                for (o, &offset) in offsets.iter().enumerate() {
                    let file = FileId(files[(k + n + o) % files.len()]);
                    let span = Span::new(offset.min(7), offset);
                    let full_span =
                        Span::new(offsets[(o + n) % offsets.len()].min(3), offset.max(9));
                    let d = Definition::new(kind, name, file, span, full_span);
                    let read = (d.kind(), d.name(), d.file(), d.span(), d.full_span());
                    assert_eq!(read, (kind, name, file, span, full_span));
                    assert_eq!(d.clone(), d);
                    let moved = d.at(full_span, span);
                    let read = (
                        moved.kind(),
                        moved.name(),
                        moved.file(),
                        moved.span(),
                        moved.full_span(),
                    );
                    assert_eq!(read, (kind, name, file, full_span, span));
                    let renamed = moved.named("other");
                    assert_eq!(
                        (renamed.name(), renamed.span(), renamed.kind()),
                        ("other", full_span, kind)
                    );
                }
            }
        }
    }

    /// What a reader compares: two definitions are equal when what they
    /// say is, however it is kept (in place, in an `Arc`, wide).
    #[test]
    fn equal_when_what_they_say_is() {
        let span = Span::new(4, 6);
        let a = Definition::new(SymbolKind::Task, "t0", FileId(0), span, span);
        let wide = Definition::new(
            SymbolKind::Task,
            "t0",
            FileId(0),
            Span::new(4, 1 << 30),
            span,
        );
        assert_eq!(wide.at(span, span), a);
        assert_ne!(a, a.named("t1"));
        assert_ne!(
            a,
            Definition::new(SymbolKind::Step, "t0", FileId(0), span, span)
        );
        assert_ne!(
            a,
            Definition::new(SymbolKind::Task, "t0", FileId(1), span, span)
        );
    }
}
