//! How text from plans, state files and file names is shown to people and
//! agents: the one place that decides what a control character looks like.
//!
//! A plan document or state file can hold any string, so a task name is
//! hostile input: a raw ESC would drive the terminal, a raw newline would
//! print a fake line (`#99 [completed] fake` in `planc run list`, a `[Done]`
//! line in an agent's prompt), a bidi override would show text in another
//! order than it is stored. Every human-facing output escapes the characters
//! of [`must_escape`]; machine outputs (JSON) stay exact. Three styles, as
//! `docs/architecture.md` describes:
//!
//! - [`line`] for a field printed on one line (names, results, messages):
//!   Rust's `escape_debug` notation, `\n`, `\r`, `\t`, `\0`, `\u{1b}`;
//! - [`path`] for a file name: git's C-quoting, `"a\033b.plan"`;
//! - [`snippet_char`] for source text under a diagnostic's markers: one
//!   visible character per hidden one (`␛`, `␍`, `�`), as rustc does, so the
//!   markers still line up.
//!
//! Everything else, Chinese or emoji included, is printed as it is.
//! (`char::escape_debug` alone would also escape quotes, backslashes and the
//! zero-width joiner inside emoji, and no crate does just this.)

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal or a prompt as it is: a C0 or C1
/// control character, DEL, a bidirectional formatting character (U+061C,
/// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) or a line or paragraph
/// separator (U+2028, U+2029).
pub fn must_escape(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `text` for one line: each character of [`must_escape`] as Rust writes it
/// in a string literal (`\n`, `\r`, `\t`, `\0`, else `\u{…}` in lower-case
/// hex); everything else, quotes and backslashes included, unchanged.
pub fn line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(must_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if must_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The lines of a multi-line `text` (split at `\n` or `\r\n`), each escaped
/// by [`line`]: for a block whose lines the caller indents or quotes, so no
/// line of `text` starts a line of the output on its own.
pub fn lines(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.lines().map(line)
}

/// A file name as git prints one (`core.quotePath=false`): unchanged unless
/// it holds a character of [`must_escape`] or a double quote; then in double
/// quotes with C escapes (`\a \b \t \n \v \f \r \" \\`) and every other
/// escaped character as the octal values of its UTF-8 bytes (`\033`,
/// `\342\200\256`).
pub fn path(name: &str) -> Cow<'_, str> {
    if !name.chars().any(|c| must_escape(c) || c == '"') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for c in name.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if must_escape(c) => {
                let mut bytes = [0; 4];
                for b in c.encode_utf8(&mut bytes).bytes() {
                    let _ = write!(out, "\\{b:03o}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// What a source snippet shows for `c`, when not `c` itself: a C0 control
/// as its Unicode Control Picture (`␀`…`␟`), DEL as `␡`, any other
/// character of [`must_escape`] as `�`. Tabs and line breaks are the
/// caller's (the snippet renderer lays them out); one character stands for
/// one, so columns still count the same.
pub fn snippet_char(c: char) -> Option<char> {
    match c {
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32),
        '\x7f' => Some('\u{2421}'),
        c if must_escape(c) => Some('\u{fffd}'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn line_escapes_controls_and_bidi_only() {
        assert_eq!(
            line("a\u{1b}[31mred\x07\r\n#99 [completed] fake\t\0"),
            "a\\u{1b}[31mred\\u{7}\\r\\n#99 [completed] fake\\t\\0"
        );
        assert_eq!(
            line("abc\u{202e}cba\u{2066}\u{200f}\u{85}\u{7f}\u{2028}"),
            "abc\\u{202e}cba\\u{2066}\\u{200f}\\u{85}\\u{7f}\\u{2028}"
        );
        // Text without anything to escape is not copied.
        for text in ["机械键盘", "👨‍👩‍👧 emoji", "C:\\dir \"q\" 'x'", ""] {
            assert!(matches!(line(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn lines_split_and_escape_each_line() {
        let got: Vec<_> = lines("one\r\ntwo\u{1b}\n\nthree\rfour").collect();
        assert_eq!(got, ["one", "two\\u{1b}", "", "three\\rfour"]);
    }

    #[test]
    fn path_quotes_as_git_does() {
        assert_eq!(path("plans/a.plan"), "plans/a.plan");
        assert_eq!(path("C:\\plans\\计划.plan"), "C:\\plans\\计划.plan");
        assert_eq!(path("a\u{1b}b.plan"), "\"a\\033b.plan\"");
        assert_eq!(
            path("x\n\t\"y\\\u{202e}.plan"),
            "\"x\\n\\t\\\"y\\\\\\342\\200\\256.plan\""
        );
        assert_eq!(path("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(path("\x07\x08\x0b\x0c\r"), "\"\\a\\b\\v\\f\\r\"");
    }

    #[test]
    fn snippet_chars_are_visible() {
        assert_eq!(snippet_char('\u{1b}'), Some('␛'));
        assert_eq!(snippet_char('\0'), Some('␀'));
        assert_eq!(snippet_char('\r'), Some('␍'));
        assert_eq!(snippet_char('\x7f'), Some('␡'));
        assert_eq!(snippet_char('\u{202e}'), Some('�'));
        assert_eq!(snippet_char('\u{9b}'), Some('�'));
        assert_eq!(snippet_char('a'), None);
        assert_eq!(snippet_char('键'), None);
    }

    /// Whether `text` holds a byte no terminal should get from user data:
    /// C0 (newlines allowed when `newlines`), DEL, C1, bidi or separators.
    fn has_hidden(text: &str, newlines: bool) -> bool {
        text.chars()
            .any(|c| must_escape(c) && !(newlines && c == '\n'))
    }

    /// Strings rich in the characters that matter, among any others.
    fn hostile() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            any::<char>(),
            prop::char::range('\0', '\u{a0}'),
            prop::sample::select(vec![
                '\u{61c}', '\u{200d}', '\u{200e}', '\u{202e}', '\u{2068}', '\u{2029}', '"', '\\'
            ]),
        ];
        prop::collection::vec(c, 0..40).prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #[test]
        fn escaped_text_holds_nothing_hidden(text in hostile()) {
            prop_assert!(!has_hidden(&line(&text), false));
            prop_assert!(!has_hidden(&path(&text), false));
            for l in lines(&text) {
                prop_assert!(!has_hidden(&l, false));
            }
            let pictured: String = text
                .chars()
                .map(|c| if c == '\n' { c } else { snippet_char(c).unwrap_or(c) })
                .collect();
            prop_assert!(!has_hidden(&pictured, true));
            prop_assert_eq!(pictured.chars().count(), text.chars().count());
        }

        #[test]
        fn text_without_hidden_characters_is_unchanged(
            text in "[^\\x00-\\x1f\\x7f-\\u{9f}\\u{61c}\\u{200e}\\u{200f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{2028}\\u{2029}]*"
        ) {
            prop_assert_eq!(line(&text), text.as_str());
        }
    }
}
