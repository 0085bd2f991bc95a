//! A string literal of the tree, cooked, in one compact block.
//!
//! A string is its cooked text with each `{param}` written inline where it
//! stands: a byte that cannot occur in UTF-8 marks it, then its name. The
//! parts are read back borrowed, in order, by [`Str::parts`]: no list of
//! parts, no allocation. An encoding of up to 23 bytes (every generated
//! task's title, `Do part 12345 for {team}`) is held in place; a longer one
//! in one block of exactly its bytes.
//!
//! Where a parameter's name stands (its span) is kept as little as it can
//! be. Where the text before it was the source's own bytes, as in every
//! string of text and `{name}`s on one line without escapes, the name
//! starts right after that text's `{`: the marker alone says it (and the
//! name's length, up to 10 bytes). Elsewhere (after an escape, `{{`, a
//! `"""` block's dedent, a name written `{ name }` or longer than 10 bytes)
//! its offset from the string's start is written after the marker. Both
//! the writer and the reader predict the name's place the same way, and the
//! writer keeps the prediction only when it is exact: spans read back are
//! always those that were written.
//!
//! The encoding, byte by byte:
//! - `0xC0` first: the string is a `"""` block.
//! - `0xF5..=0xFE`: a parameter of a name of 1 to 10 bytes (`0xF5` + the
//!   length − 1) where predicted; the name follows.
//! - `0xFF`: a parameter anywhere: its name's length and its offset in the
//!   string's span (LEB128 each), then the name.
//! - any other byte: text (UTF-8, so none of the above).

use std::fmt;

use crate::span::Span;

/// A string literal, cooked: escapes resolved, `"""` blocks dedented, and
/// `{param}` interpolations kept apart from the text, read by
/// [`Str::parts`].
#[derive(Clone, PartialEq, Eq)]
pub struct Str {
    pub span: Span,
    block: Block,
}

const _: () = assert!(std::mem::size_of::<Str>() == 32);

/// A piece of a string, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrPart<'a> {
    Text(&'a str),
    Param(Interp<'a>),
}

/// A `{name}` in a string: the name and where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interp<'a> {
    pub name: &'a str,
    pub span: Span,
}

impl Interp<'_> {
    /// The name as an [`Ident`](super::Ident).
    pub fn ident(&self) -> super::Ident {
        super::Ident {
            name: super::SmolStr::new(self.name),
            span: self.span,
        }
    }
}

/// The first byte of a `"""` block's encoding.
const TRIPLE: u8 = 0xC0;
/// The first marker of a parameter where predicted: `SHORT + length − 1`.
const SHORT: u8 = 0xF5;
/// The longest name a short marker holds.
const SHORT_MAX: usize = (LONG - SHORT) as usize;
/// A parameter with its length and offset written out.
const LONG: u8 = 0xFF;
/// The most bytes held in place.
const INLINE: usize = 23;

/// How many of the inline bytes are the string's: a byte whose values
/// beyond 23 are free, so that [`Block`] is 24 bytes, its variant told by
/// this byte (as `smol_str` does).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum InlineLen {
    L0,
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    L7,
    L8,
    L9,
    L10,
    L11,
    L12,
    L13,
    L14,
    L15,
    L16,
    L17,
    L18,
    L19,
    L20,
    L21,
    L22,
    L23,
}

const INLINE_LENS: [InlineLen; INLINE + 1] = {
    use InlineLen::*;
    [
        L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18, L19,
        L20, L21, L22, L23,
    ]
};

/// The encoded bytes: in place (the rest zero, so that equal strings are
/// equal blocks), or boxed.
#[derive(Clone, PartialEq, Eq)]
enum Block {
    Inline { len: InlineLen, bytes: [u8; INLINE] },
    Boxed(Box<[u8]>),
}

const _: () = assert!(std::mem::size_of::<Block>() == 24);

impl Block {
    fn new(bytes: &[u8]) -> Block {
        match INLINE_LENS.get(bytes.len()) {
            Some(&len) => {
                let mut inline = [0; INLINE];
                inline[..bytes.len()].copy_from_slice(bytes);
                Block::Inline { len, bytes: inline }
            }
            None => Block::Boxed(bytes.into()),
        }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Inline { len, bytes } => &bytes[..*len as usize],
            Block::Boxed(bytes) => bytes,
        }
    }
}

impl Str {
    /// The parts, in order: runs of text (never empty, never two in a row)
    /// and parameters.
    #[inline]
    pub fn parts(&self) -> Parts<'_> {
        let bytes = self.block.bytes();
        let triple = bytes.first() == Some(&TRIPLE);
        Parts {
            bytes,
            at: usize::from(triple),
            start: self.span.start(),
            next: if triple { 3 } else { 1 },
        }
    }

    /// Whether the string is a `"""` block.
    pub fn triple(&self) -> bool {
        self.block.bytes().first() == Some(&TRIPLE)
    }

    /// Room enough, mostly, for the string with its parameters' values: its
    /// text and names, and 16 bytes more.
    pub fn len_hint(&self) -> usize {
        self.block.bytes().len() + 16
    }

    /// The text with every interpolation written back as `{name}`.
    pub fn template_text(&self) -> String {
        let mut out = String::with_capacity(self.len_hint());
        for part in self.parts() {
            match part {
                StrPart::Text(t) => out.push_str(t),
                StrPart::Param(p) => {
                    out.push('{');
                    out.push_str(p.name);
                    out.push('}');
                }
            }
        }
        out
    }

    /// The interpolated parameters.
    pub fn params(&self) -> impl Iterator<Item = Interp<'_>> {
        self.parts().filter_map(|p| match p {
            StrPart::Param(param) => Some(param),
            StrPart::Text(_) => None,
        })
    }

    /// The string with its span and its parameters' places left out (and,
    /// unless `keep_text`, its text: each run one byte), for comparing two
    /// strings by what they say, as a recompile compares two items.
    pub(crate) fn erased(&self, keep_text: bool) -> Str {
        let mut bytes = Vec::new();
        let mut writer = StrWriter::new(&mut bytes, 0, self.triple());
        for part in self.parts() {
            match part {
                StrPart::Text(text) => writer.text(if keep_text { text } else { "-" }),
                // Every name at offset 0: written out, so the same for all.
                StrPart::Param(param) => writer.long(param.name, 0),
            }
        }
        writer.finish(Span::default())
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Str")
            .field("span", &self.span)
            .field("triple", &self.triple())
            .field("parts", &self.parts().collect::<Vec<_>>())
            .finish()
    }
}

/// The parts of a [`Str`], read from its block.
pub struct Parts<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where the string starts in the file.
    start: usize,
    /// Where a parameter's `{` would stand, from the string's start, if the
    /// text since the last one was the source's own.
    next: usize,
}

impl<'a> Iterator for Parts<'a> {
    type Item = StrPart<'a>;

    // Always inlined: one call a part, where most strings are one text
    // and a parameter.
    #[inline(always)]
    fn next(&mut self) -> Option<StrPart<'a>> {
        let rest = self.bytes.get(self.at..).filter(|rest| !rest.is_empty())?;
        let first = rest[0];
        if first < SHORT {
            let len = text_len(rest);
            self.at += len;
            self.next += len;
            // SAFETY: the block holds text only as whole `str`s, between
            // markers that are no UTF-8 byte: a run up to a marker (or the
            // end) is one or more of them, whole.
            let text = unsafe { std::str::from_utf8_unchecked(&rest[..len]) };
            return Some(StrPart::Text(text));
        }
        let (len, offset, name_at) = if first == LONG {
            let mut at = 1;
            let len = leb128(rest, &mut at);
            let offset = leb128(rest, &mut at);
            (len, offset, at)
        } else {
            ((first - SHORT) as usize + 1, self.next + 1, 1)
        };
        let name = &rest[name_at..name_at + len];
        self.at += name_at + len;
        self.next = offset + len + 1;
        // SAFETY: a name is written whole from a `str`.
        let name = unsafe { std::str::from_utf8_unchecked(name) };
        let start = self.start + offset;
        Some(StrPart::Param(Interp {
            name,
            span: Span::new(start, start + len),
        }))
    }
}

/// How long the run of text that starts `bytes` is: up to the first
/// marker (a byte of `SHORT` or more), or all of them. Eight bytes at a
/// time: a byte is a marker when its high bit is set and its low seven
/// bits plus `0x0B` reach `0x80` (which carries into no other byte).
#[inline(always)]
fn text_len(bytes: &[u8]) -> usize {
    const LOW: u64 = u64::from_le_bytes([0x7F; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const TO_MARKER: u64 = u64::from_le_bytes([(0x100 - SHORT as u16) as u8; 8]);
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        let markers = ((word & LOW) + TO_MARKER) & word & HIGH;
        if markers != 0 {
            return at + (markers.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let tail = &bytes[at..];
    at + tail.iter().position(|&b| b >= SHORT).unwrap_or(tail.len())
}

/// Reads a LEB128 number at `at`, moving past it.
fn leb128(bytes: &[u8], at: &mut usize) -> usize {
    let mut value = 0;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= ((byte & 0x7F) as usize) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// Writes a [`Str`]'s block, part by part, into a buffer the caller may
/// keep for the next string.
pub(crate) struct StrWriter<'b> {
    bytes: &'b mut Vec<u8>,
    /// Where the string starts in the file.
    start: usize,
    /// As [`Parts::next`].
    next: usize,
}

impl<'b> StrWriter<'b> {
    /// A writer of a string starting at `start` in the file.
    pub(crate) fn new(bytes: &'b mut Vec<u8>, start: usize, triple: bool) -> StrWriter<'b> {
        bytes.clear();
        if triple {
            bytes.push(TRIPLE);
        }
        StrWriter {
            bytes,
            start,
            next: if triple { 3 } else { 1 },
        }
    }

    /// Cooked text (merged with the text before it, if any).
    #[inline]
    pub(crate) fn text(&mut self, text: &str) {
        self.bytes.extend_from_slice(text.as_bytes());
        self.next += text.len();
    }

    /// A parameter: its name and the name's span.
    #[inline]
    pub(crate) fn param(&mut self, name: &str, span: Span) {
        debug_assert_eq!(span.len(), name.len());
        let offset = span.start() - self.start;
        if offset == self.next + 1 && (1..=SHORT_MAX).contains(&name.len()) {
            self.bytes.push(SHORT + (name.len() - 1) as u8);
            self.bytes.extend_from_slice(name.as_bytes());
            self.next = offset + name.len() + 1;
        } else {
            self.long(name, offset);
        }
    }

    /// A parameter with its offset written out.
    fn long(&mut self, name: &str, offset: usize) {
        self.bytes.push(LONG);
        write_leb128(self.bytes, name.len());
        write_leb128(self.bytes, offset);
        self.bytes.extend_from_slice(name.as_bytes());
        self.next = offset + name.len() + 1;
    }

    /// The string spanning `span` (which starts where [`StrWriter::new`]
    /// was told).
    pub(crate) fn finish(self, span: Span) -> Str {
        debug_assert_eq!(span.start(), self.start);
        Str {
            span,
            block: Block::new(self.bytes),
        }
    }
}

fn write_leb128(bytes: &mut Vec<u8>, mut value: usize) {
    while value >= 0x80 {
        bytes.push((value as u8) | 0x80);
        value >>= 7;
    }
    bytes.push(value as u8);
}

#[cfg(test)]
mod tests;
