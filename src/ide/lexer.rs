//! A forgiving token scan for completion, where the text is half typed and
//! the syntax tree has holes: which token stands before the cursor, and
//! whether the cursor is inside a string or a comment.

use crate::span::Span;

/// What a token is, as far as completion cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A name, keyword or number.
    Word,
    /// A string; `closed` is false when it runs to the end of its line (or
    /// of the file, for `"""`).
    Str {
        closed: bool,
    },
    Comment,
    /// Any other single character: `{`, `}`, `,`, `:`, `=` …
    Punct,
}

/// One token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Token {
    pub kind: Kind,
    pub span: Span,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// The tokens of `text` that start in `start..end` (whitespace left out).
///
/// `start` must be where a token of the whole text's scan begins (0, or the
/// start of a keyword the parser read outside any string or comment): the
/// scan does not know what came before it.
pub(super) fn tokens(text: &str, start: usize, end: usize) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = start;
    while i < text.len() && i < end {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let start = i;
        let kind = if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        } else if c == '#' {
            i = text[i..].find('\n').map_or(text.len(), |n| i + n);
            Kind::Comment
        } else if text[i..].starts_with("\"\"\"") {
            match text[i + 3..].find("\"\"\"") {
                Some(n) => {
                    i += 3 + n + 3;
                    Kind::Str { closed: true }
                }
                None => {
                    i = text.len();
                    Kind::Str { closed: false }
                }
            }
        } else if c == '"' {
            i += 1;
            let mut closed = false;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    b'\n' => break,
                    _ => i += 1,
                }
            }
            i = i.min(text.len());
            while !text.is_char_boundary(i) {
                i += 1;
            }
            Kind::Str { closed }
        } else if is_word_char(c) {
            i += text[i..]
                .char_indices()
                .find(|&(_, c)| !is_word_char(c))
                .map_or(text.len() - i, |(n, _)| n);
            Kind::Word
        } else {
            i += c.len_utf8();
            Kind::Punct
        };
        out.push(Token {
            kind,
            span: Span::new(start, i),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_strings_comments_and_punctuation() {
        let text = "task a \"x {p}\" { # note\n after b, 打开 \"open";
        let kinds: Vec<Kind> = tokens(text, 0, text.len()).iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Word,
                Kind::Word,
                Kind::Str { closed: true },
                Kind::Punct,
                Kind::Comment,
                Kind::Word,
                Kind::Word,
                Kind::Punct,
                Kind::Word,
                Kind::Str { closed: false },
            ]
        );
    }
}
