//! Literals for the fast reader: strings (with their escapes,
//! interpolations and `"""` blocks) and numbers, as the grammar's `string`,
//! `float`, `int` and `bool` rules read them.

use super::{ident_char, GiveUp, Read, Reader};
use crate::span::Span;
use crate::syntax::ast::{Int, Literal, Str, StrWriter};
use crate::syntax::limits::MAX_STRING_BYTES;
use crate::syntax::strings::{cook_pieces, Piece};

/// The bytes that end a run of text in a plain string: the quote, `\`,
/// braces and line breaks.
const PLAIN_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let stops = b"\"\\{}\n\r";
    while i < stops.len() {
        table[stops[i] as usize] = true;
        i += 1;
    }
    table
};

impl Reader<'_> {
    /// The grammar's `literal`: `string | float | int | bool`, at the position.
    pub(super) fn literal(&mut self) -> Read<Literal> {
        match self.peek() {
            Some(b'"') => return Ok(Literal::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => return self.number(),
            _ => {}
        }
        let word = self.word().ok_or(GiveUp)?;
        let value = match self.text_of(word) {
            "true" => true,
            "false" => false,
            _ => return Err(GiveUp),
        };
        Ok(Literal::Bool { span: word, value })
    }

    /// `float` or `int`: `-`? digits, then `.` digits and an exponent for a
    /// float; no name character (or, for an int, `.`) may follow.
    fn number(&mut self) -> Read<Literal> {
        let start = self.pos;
        let digits = |at: usize| {
            self.bytes[at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        };
        let mut at = start + usize::from(self.peek() == Some(b'-'));
        let whole = digits(at);
        if whole == 0 {
            return Err(GiveUp);
        }
        at += whole;
        let float = self.bytes.get(at) == Some(&b'.')
            && self.bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
        if float {
            at += 1 + digits(at + 1);
            if matches!(self.bytes.get(at), Some(b'e' | b'E')) {
                let mut exp = at + 1;
                if matches!(self.bytes.get(exp), Some(b'+' | b'-')) {
                    exp += 1;
                }
                let exp_digits = digits(exp);
                if exp_digits > 0 {
                    at = exp + exp_digits;
                }
            }
        }
        match self.char_at(at) {
            Some(c) if ident_char(c) || (!float && c == '.') => return Err(GiveUp),
            _ => {}
        }
        self.pos = at;
        let span = Span::new(start, at);
        let text = self.text_of(span);
        if float {
            match text.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(Literal::Float { span, value }),
                _ => Err(GiveUp),
            }
        } else {
            let value = Some(text.parse::<i64>().map_err(|_| GiveUp)?);
            Ok(Literal::Int(Int { span, value }))
        }
    }

    /// A string literal, after trivia: `"…"` or `"""…"""`.
    pub(super) fn string(&mut self) -> Read<Str> {
        self.trivia();
        let start = self.pos;
        let triple = self.bytes[start..].starts_with(b"\"\"\"");
        if !triple && self.peek() == Some(b'"') {
            if let Some(plain) = self.plain_string(start) {
                return Ok(plain);
            }
            self.pos = start;
        }
        self.eat(b'"')?;
        if triple {
            self.pos += 2;
        }
        self.pieces.clear();
        loop {
            let Some(byte) = self.peek() else {
                return Err(GiveUp);
            };
            let from = self.pos;
            match byte {
                b'"' if !triple => {
                    self.pos += 1;
                    break;
                }
                b'"' if self.bytes[from..].starts_with(b"\"\"\"") => {
                    self.pos += 3;
                    break;
                }
                b'\\' => {
                    self.escape()?;
                    self.pieces.push((Piece::Escape, Span::new(from, self.pos)));
                }
                b'{' if self.bytes.get(from + 1) == Some(&b'{') => {
                    self.pos += 2;
                    self.pieces
                        .push((Piece::LitOpen, Span::new(from, self.pos)));
                }
                b'{' => {
                    let ident = self.interp()?;
                    self.pieces
                        .push((Piece::Interp(ident), Span::new(from, self.pos)));
                }
                b'}' if self.bytes.get(from + 1) == Some(&b'}') => {
                    self.pos += 2;
                    self.pieces
                        .push((Piece::LitClose, Span::new(from, self.pos)));
                }
                b'}' => return Err(GiveUp),
                b'\n' | b'\r' if !triple => return Err(GiveUp),
                _ => {
                    self.pos = self.text_end(from, triple);
                    self.pieces.push((Piece::Text, Span::new(from, self.pos)));
                }
            }
        }
        let span = Span::new(start, self.pos);
        if span.len() > MAX_STRING_BYTES {
            return Err(GiveUp);
        }
        let pieces = self.pieces.drain(..);
        let cooked = cook_pieces(self.text, 0, span, triple, pieces, &mut self.errors);
        if self.errors.is_empty() {
            Ok(cooked)
        } else {
            Err(GiveUp)
        }
    }

    /// The most common string: `"…"` on one line, of text and `{name}`
    /// interpolations only, cooked as it is read (text runs are its parts
    /// as they are). `None` at anything else (an escape, `{{`, a line
    /// break…), which the general path reads or gives up at.
    fn plain_string(&mut self, start: usize) -> Option<Str> {
        let mut bytes = std::mem::take(&mut self.str_bytes);
        let mut writer = StrWriter::new(&mut bytes, start, false);
        let mut at = start + 1;
        let end = loop {
            let rest = &self.bytes[at..];
            let run = rest
                .iter()
                .position(|&b| PLAIN_STOP[b as usize])
                .unwrap_or(rest.len());
            writer.text(&self.text[at..at + run]);
            at += run;
            match self.bytes.get(at) {
                Some(b'"') => break Some(at + 1),
                Some(b'{') if self.bytes.get(at + 1) != Some(&b'{') => {
                    self.pos = at;
                    let Ok(name) = self.interp() else { break None };
                    writer.param(self.text_of(name), name);
                    at = self.pos;
                }
                _ => break None,
            }
        };
        let string = end
            .filter(|end| end - start <= MAX_STRING_BYTES)
            .map(|end| {
                self.pos = end;
                writer.finish(Span::new(start, end))
            });
        self.str_bytes = bytes;
        string
    }

    /// Where a run of plain text in a string ends: at `\`, a brace, the
    /// closing quote(s), or (outside `"""`) a line break.
    fn text_end(&self, from: usize, triple: bool) -> usize {
        let rest = &self.bytes[from..];
        let mut at = 0;
        while at < rest.len() {
            match rest[at] {
                b'\\' | b'{' | b'}' => break,
                b'"' if !triple => break,
                b'\n' | b'\r' if !triple => break,
                b'"' if rest[at..].starts_with(b"\"\"\"") => break,
                _ => at += 1,
            }
        }
        from + at
    }

    /// The grammar's `escape`, at a `\`.
    fn escape(&mut self) -> Read<()> {
        let rest = &self.bytes[self.pos + 1..];
        let len = match rest.first() {
            Some(b'"' | b'\\' | b'n' | b't' | b'r' | b'0' | b'{' | b'}') => 1,
            Some(b'u') if rest.get(1) == Some(&b'{') => {
                let hex = rest[2..]
                    .iter()
                    .take(6)
                    .take_while(|b| b.is_ascii_hexdigit())
                    .count();
                if hex == 0 || rest.get(2 + hex) != Some(&b'}') {
                    return Err(GiveUp);
                }
                3 + hex
            }
            _ => return Err(GiveUp),
        };
        self.pos += 1 + len;
        Ok(())
    }

    /// The grammar's `interp`: `{`, spaces, a name, spaces, `}`; the span of
    /// the name.
    fn interp(&mut self) -> Read<Span> {
        self.pos += 1;
        let spaces = |reader: &Self| {
            reader.bytes[reader.pos..]
                .iter()
                .take_while(|b| **b == b' ')
                .count()
        };
        self.pos += spaces(self);
        let ident = self.word().ok_or(GiveUp)?;
        self.pos += spaces(self);
        self.eat(b'}')?;
        Ok(ident)
    }
}
