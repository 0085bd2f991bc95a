//! Cooking string literals: escapes, `"""` dedent, interpolation parts.

use pest::iterators::Pair;

use super::ast::{Str, StrWriter};
use super::grammar::Rule;
use crate::span::Span;

/// A problem inside a string literal, reported as a syntax error.
pub(crate) struct StringError {
    pub span: Span,
    pub message: String,
}

/// One lexical piece of a string literal, named as the grammar's string
/// rules name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// `text` or `triple_text`: characters taken as they are.
    Text,
    /// `escape`: `\n`, `\u{…}` and the like.
    Escape,
    /// `lit_open`: `{{`.
    LitOpen,
    /// `lit_close`: `}}`.
    LitClose,
    /// `interp`: `{name}`, with the span of the name.
    Interp(Span),
}

/// Turns a `string` pair into a cooked [`Str`]; `base` is where the text pest
/// read starts in the file (spans are shifted by it).
pub(crate) fn cook(pair: Pair<'_, Rule>, base: usize, errors: &mut Vec<StringError>) -> Str {
    let source = pair.get_input();
    let span = Span::from(pair.as_span());
    let inner = pair
        .into_inner()
        .next()
        .expect("string has one alternative");
    let triple = inner.as_rule() == Rule::triple_string;
    let pieces = inner.into_inner().filter_map(|piece| {
        let kind = match piece.as_rule() {
            Rule::text | Rule::triple_text => Piece::Text,
            Rule::lit_open => Piece::LitOpen,
            Rule::lit_close => Piece::LitClose,
            Rule::escape => Piece::Escape,
            Rule::interp => {
                let ident = piece.clone().into_inner().next()?;
                Piece::Interp(ident.as_span().into())
            }
            _ => return None,
        };
        Some((kind, Span::from(piece.as_span())))
    });
    cook_pieces(source, base, span, triple, pieces, errors)
}

/// Cooks a string literal from its pieces: `span` covers the literal with its
/// quotes and, like the pieces' spans, is an offset into `source`; `base` is
/// where `source` starts in the file.
pub(crate) fn cook_pieces(
    source: &str,
    base: usize,
    span: Span,
    triple: bool,
    pieces: impl IntoIterator<Item = (Piece, Span)>,
    errors: &mut Vec<StringError>,
) -> Str {
    let shift = |s: Span| Span::new(s.start() + base, s.end() + base);
    let quote = if triple { 3 } else { 1 };
    let content = Span::new(span.start() + quote, span.end() - quote);
    let dedent = triple.then(|| Dedent::measure(source, content));

    let mut bytes = Vec::new();
    let mut writer = StrWriter::new(&mut bytes, base + span.start(), triple);
    for (piece, piece_span) in pieces {
        let piece_text = &source[piece_span.range()];
        match piece {
            Piece::Text => match &dedent {
                Some(d) => writer.text(&d.apply(source, piece_span)),
                None => writer.text(piece_text),
            },
            Piece::LitOpen => writer.text("{"),
            Piece::LitClose => writer.text("}"),
            Piece::Escape => match unescape(piece_text) {
                Some(c) => writer.text(c.encode_utf8(&mut [0; 4])),
                None => errors.push(StringError {
                    span: shift(piece_span),
                    message: format!("`{piece_text}` is not a Unicode scalar value"),
                }),
            },
            Piece::Interp(ident) => writer.param(&source[ident.range()], shift(ident)),
        }
    }
    writer.finish(shift(span))
}

fn unescape(escape: &str) -> Option<char> {
    Some(match &escape[1..] {
        "n" => '\n',
        "t" => '\t',
        "r" => '\r',
        "0" => '\0',
        "\"" => '"',
        "\\" => '\\',
        "{" => '{',
        "}" => '}',
        unicode => {
            let hex = unicode.strip_prefix("u{")?.strip_suffix('}')?;
            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
        }
    })
}

/// What a `"""` block drops: its first line if blank, its last line if
/// blank, and the indentation common to its non-blank lines.
struct Dedent {
    /// Content bytes kept: everything outside is the dropped first/last line.
    keep: Span,
    indent: usize,
}

impl Dedent {
    fn measure(source: &str, content: Span) -> Dedent {
        let text = &source[content.range()];
        let mut keep = content;
        if let Some(newline) = text.find('\n') {
            if text[..newline].trim().is_empty() {
                keep = Span::new(content.start() + newline + 1, keep.end());
            }
        }
        let kept = &source[keep.range()];
        if let Some(newline) = kept.rfind('\n') {
            if kept[newline + 1..].trim().is_empty() {
                keep = Span::new(keep.start(), keep.start() + newline);
            }
        } else if kept.trim().is_empty() {
            keep = Span::at(keep.start());
        }
        // A first line that shares the opening quotes' line has no indentation
        // of its own, so it does not count.
        let skip_first = usize::from(keep.start() == content.start());
        let indent = source[keep.range()]
            .split('\n')
            .skip(skip_first)
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.len() - line.trim_start_matches([' ', '\t']).len())
            .min()
            .unwrap_or(0);
        Dedent { keep, indent }
    }

    /// The text of a piece of the block, with the dropped parts removed.
    fn apply(&self, source: &str, piece: Span) -> String {
        let start = piece.start().max(self.keep.start());
        let end = piece.end().min(self.keep.end());
        let mut out = String::new();
        let mut offset = start;
        while offset < end {
            let line_start = source[..offset].rfind('\n').map_or(0, |i| i + 1);
            let line_end = source[offset..end]
                .find('\n')
                .map_or(end, |i| offset + i + 1);
            // Skip the indentation of lines starting at or after keep.start.
            let skip_to = if line_start >= self.keep.start() {
                let indented = &source[line_start..line_end];
                let ws = indented.len() - indented.trim_start_matches([' ', '\t']).len();
                line_start + ws.min(self.indent)
            } else {
                line_start
            };
            let from = offset.max(skip_to).min(line_end);
            out.push_str(&source[from..line_end]);
            offset = line_end;
        }
        out
    }
}
