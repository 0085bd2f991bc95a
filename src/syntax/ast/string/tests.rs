//! The string's block read back: every part and span as written, by both
//! readers of the file.

use super::{Block, Str, StrPart};
use crate::span::{FileId, Span};
use crate::syntax::ast::{PlanItem, TopItem};
use crate::syntax::entry::parse;
use crate::syntax::parser::parse_with_grammar;

/// A part expected: text, or a parameter's name and where it starts in the
/// literal.
#[derive(Debug, PartialEq)]
enum Part {
    T(&'static str),
    P(&'static str, usize),
}
use Part::{P, T};

/// The plan's title `literal`, read by the fast reader (with the grammar
/// behind it) and by the grammar alone: the two the same, and clean.
fn title(literal: &str) -> Str {
    let text = format!("plan p {{\n    title {literal}\n}}\n");
    let fast = parse(&text, FileId(0));
    let grammar = parse_with_grammar(&text, FileId(0));
    assert!(
        fast.diagnostics.is_empty(),
        "{literal}: {:?}",
        fast.diagnostics
    );
    assert_eq!(fast.file, grammar.file, "the readers differ on {literal}");
    let TopItem::Plan(plan) = &fast.file.items[0] else {
        panic!("a plan");
    };
    let Some(PlanItem::Title(field)) = plan.items.get(0) else {
        panic!("a title");
    };
    let at = text.find(literal).expect("the literal is in the text");
    assert_eq!(field.value.span, Span::new(at, at + literal.len()));
    field.value.clone()
}

/// Asserts the parts of the title `literal`, and whether it is held in place.
fn reads(literal: &str, expected: &[Part], inline: bool) {
    let string = title(literal);
    let start = string.span.start();
    let parts: Vec<Part> = string
        .parts()
        .map(|part| match part {
            StrPart::Text(text) => T(text.to_owned().leak()),
            StrPart::Param(param) => {
                assert_eq!(param.span.len(), param.name.len(), "{literal}");
                P(param.name.to_owned().leak(), param.span.start() - start)
            }
        })
        .collect();
    assert_eq!(parts, expected, "{literal}");
    // Each name's span is the name as written.
    for param in string.params() {
        let at = param.span.start() - start;
        assert_eq!(&literal[at..at + param.name.len()], param.name, "{literal}");
    }
    let held = matches!(string.block, Block::Inline { .. });
    assert_eq!(held, inline, "{literal}: held in place");
}

#[test]
fn plain_strings_read_back_with_their_spans() {
    // The generated title: 18 bytes of text, a marker, 4 of name: 23.
    reads(
        "\"Do part 12345 for {team}\"",
        &[T("Do part 12345 for "), P("team", 20)],
        true,
    );
    reads(
        "\"Do part 1234 for {team}\"",
        &[T("Do part 1234 for "), P("team", 19)],
        true,
    );
    // One byte over what is held in place.
    reads(
        "\"Do part 123456 for {team}\"",
        &[T("Do part 123456 for "), P("team", 21)],
        false,
    );
    reads("\"\"", &[], true);
    reads("\"{a}\"", &[P("a", 2)], true);
    reads("\"{a}{bb}\"", &[P("a", 2), P("bb", 5)], true);
    reads(
        "\"{a} and {b}.\"",
        &[P("a", 2), T(" and "), P("b", 10), T(".")],
        true,
    );
    // A name longer than a marker holds: its length and offset written.
    reads(
        "\"x {abcdefghijk} y\"",
        &[T("x "), P("abcdefghijk", 4), T(" y")],
        true,
    );
    reads(
        "\"x {abcdefghij} y\"",
        &[T("x "), P("abcdefghij", 4), T(" y")],
        true,
    );
    // Spaces inside the braces.
    reads(
        "\"a{ b }c{d}\"",
        &[T("a"), P("b", 4), T("c"), P("d", 9)],
        true,
    );
    // Not ASCII: `é` and `ñ` two bytes each.
    reads("\"é {ñame} ü\"", &[T("é "), P("ñame", 5), T(" ü")], true);
    reads(
        "\"A longer text than a block holds in place, {who}: {what}!\"",
        &[
            T("A longer text than a block holds in place, "),
            P("who", 45),
            T(": "),
            P("what", 52),
            T("!"),
        ],
        false,
    );
}

#[test]
fn escaped_strings_read_back_with_their_spans() {
    reads("\"a\\n{x}b\"", &[T("a\n"), P("x", 5), T("b")], true);
    reads("\"{{x}} {y}\"", &[T("{x} "), P("y", 8)], true);
    reads("\"{y}}}\"", &[P("y", 2), T("}")], true);
    reads("\"\\u{1F600}{x}\"", &[T("😀"), P("x", 11)], true);
    reads("\"\\\"{x}\\\"\"", &[T("\""), P("x", 4), T("\"")], true);
    // An offset of two bytes (LEB128).
    let long = format!("\"{}{{x}}\"", "\\t".repeat(100));
    let string = title(&long);
    let parts: Vec<StrPart<'_>> = string.parts().collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0], StrPart::Text(&"\t".repeat(100)));
    let StrPart::Param(x) = parts[1] else {
        panic!("a parameter");
    };
    assert_eq!((x.name, x.span.start() - string.span.start()), ("x", 202));
}

#[test]
fn triple_quoted_blocks_read_back_with_their_spans() {
    let block = "\"\"\"\n        line {x}\n        more {yy}\n        \"\"\"";
    reads(
        block,
        &[T("line "), P("x", 18), T("\nmore "), P("yy", 35)],
        true,
    );
    assert!(title(block).triple());
    reads("\"\"\"{x} y\"\"\"", &[P("x", 4), T(" y")], true);
    assert!(title("\"\"\"x\"\"\"").triple());
    assert!(!title("\"x\"").triple());
}

#[test]
fn template_text_writes_the_parameters_back() {
    assert_eq!(title("\"a\\n{ x }{{{y}\"").template_text(), "a\n{x}{{y}");
}

#[test]
fn erased_strings_compare_by_what_they_say() {
    let erased = |literal: &str, keep_text: bool| title(literal).erased(keep_text);
    // The same text, the parameter written in another place.
    assert_eq!(erased("\"a{x}\"", true), erased("\"\\u{61}{ x}\"", true));
    assert_ne!(erased("\"a{x}\"", true), erased("\"b{x}\"", true));
    // Text left out, but not whether there is text.
    assert_eq!(erased("\"ab{x}\"", false), erased("\"c{x}\"", false));
    assert_ne!(erased("\"ab{x}\"", false), erased("\"{x}\"", false));
    assert_ne!(erased("\"a{x}\"", false), erased("\"a{y}\"", false));
}

#[test]
fn a_run_of_text_ends_at_the_first_marker() {
    // Every byte value, at every place of a run long enough for two words
    // and a tail, after text of every kind of byte below the markers.
    let text: Vec<u8> = (0..19)
        .map(|i| [b'a', 0x7F, 0x80, 0xC3, 0xF4][i % 5])
        .collect();
    for at in 0..text.len() {
        for byte in 0..=255u8 {
            let mut bytes = text.clone();
            bytes[at] = byte;
            let expected = bytes.iter().position(|&b| b >= super::SHORT);
            let expected = expected.unwrap_or(bytes.len());
            assert_eq!(super::text_len(&bytes), expected, "{byte:#x} at {at}");
        }
    }
}
