//! Hostile shapes of syntax: text built to make a parser re-read the rest of
//! the file at every token or every error (unclosed strings full of braces,
//! runs of quotes, stray braces, a keyword error after another, long lines,
//! deep-but-allowed nesting). Each case is several kilobytes, so quadratic
//! work shows as seconds; each must parse within a generous budget of
//! processor time (a hang guard, not a benchmark: processor time, so a
//! loaded machine does not fail a fast case) and keep its diagnostics to
//! the limit.
//!
//! `PLANC_FUZZ_CASES=1000 cargo test --test hostile_syntax` for a long run.

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

mod support;

use std::fmt::Write;
use std::time::Duration;

use planc::generate::fuzz_cases as cases;
use planc::span::FileId;
use planc::syntax::{parse, MAX_SYNTAX_ERRORS};
use proptest::prelude::*;

/// Processor time far above what a linear parse of these sizes takes in a
/// debug build, far below what the quadratic shapes took.
const BUDGET: Duration = Duration::from_secs(20);

/// A piece of text that, repeated, makes one hostile shape.
const UNITS: &[&str] = &[
    "{",
    "}",
    "\"",
    "\"\"\"",
    "\"{",
    "{\"",
    "\\",
    "#",
    "#\r{",
    "{{",
    "}}",
    "{x",
    "\"{{{\n",
    ",",
    "(",
    ")",
    "= ",
    ": ",
    "task ",
    "task a ",
    "task a \"",
    "after ,",
    "step s { ",
    "use t(a = ",
    "template t(",
    "plan p { ",
    "word ",
    "x",
    "\n",
    "\"x\" ",
    "{}",
    "\"\"\"{",
    "goal \"{",
    "task a \"{x}\" { after ",
];

/// Where the repeated text stands.
const CONTEXTS: &[(&str, &str)] = &[
    ("", ""),
    ("plan p {\n  goal \"g\"\n  ", "\n}\n"),
    ("plan p {\n  goal \"g\"\n  step s {\n    ", "\n  }\n}\n"),
    (
        "plan p {\n  goal \"g\"\n  task a \"A\" {\n    ",
        "\n  }\n}\n",
    ),
    ("plan p {\n  goal \"", "\"\n}\n"),
    ("plan p {\n  goal \"\"\"\n", "\n\"\"\"\n}\n"),
    ("template t() {\n  ", "\n}\n"),
    // Nested as deep as the limit allows, then the shape.
    ("plan p { goal \"g\" ", "\n}\n"),
];

fn hostile(unit: &[&str], repeat: usize, context: usize, nest: usize) -> String {
    let (open, close) = CONTEXTS[context % CONTEXTS.len()];
    let mut text = String::from(open);
    text.push_str(&"{ ".repeat(nest));
    for i in 0..repeat {
        text.push_str(unit[i % unit.len()]);
    }
    text.push_str(&"} ".repeat(nest));
    text.push_str(close);
    text
}

/// Parses `text` within the budget, with its diagnostics within the limit.
/// (The checker's own hostile shapes are tested with the checker: these
/// texts hold thousands of tasks of one name.)
fn survives(text: &str) -> Result<(), TestCaseError> {
    let (parsed, used) = support::processor_time(|| parse_on_main_sized_stack(text));
    prop_assert!(
        parsed.diagnostics.len() <= MAX_SYNTAX_ERRORS + 1,
        "{} diagnostics",
        parsed.diagnostics.len()
    );
    prop_assert!(
        used < BUDGET,
        "{} bytes took {used:?} of processor time: {:?}…",
        text.len(),
        text.chars().take(200).collect::<String>()
    );
    Ok(())
}

/// Parses on a thread with a main thread's stack (8 MiB): a test thread has
/// 2 MiB, and braces nested to the limit in a debug build need more.
fn parse_on_main_sized_stack(text: &str) -> planc::syntax::Parsed {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(scope, || parse(text, FileId(0)))
            .expect("a thread starts")
            .join()
            .expect("parsing does not panic")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    /// One unit repeated (a run of `{`, of `"`, of `task `…), 2 to 64 KB.
    #[test]
    fn repeated_units_parse_in_bounded_time(
        unit in 0..UNITS.len(),
        repeat in 2048usize..65536,
        context in 0..CONTEXTS.len(),
        nest in prop::sample::select(vec![0usize, 0, 1, 8, 60]),
    ) {
        let text = hostile(&[UNITS[unit]], repeat / UNITS[unit].len(), context, nest);
        survives(&text)?;
    }

    /// A few units interleaved (`"{` then `task ` then `}`…), 2 to 64 KB.
    #[test]
    fn mixed_units_parse_in_bounded_time(
        units in prop::collection::vec(prop::sample::select(UNITS.to_vec()), 2..5),
        repeat in 2048usize..32768,
        context in 0..CONTEXTS.len(),
    ) {
        survives(&hostile(&units, repeat, context, 0))?;
    }
}

/// The shape that took seconds: an unclosed string holding thousands of
/// `{`, each of which began a bad block read to the end of the file.
#[test]
fn an_unclosed_string_of_braces_is_one_error() {
    for count in [8_000, 20_000] {
        let text = format!("plan p {{\n  goal \"{}\n}}\n", "{".repeat(count));
        let (parsed, used) = support::processor_time(|| parse(&text, FileId(0)));
        assert!(used < BUDGET, "{used:?} of processor time");
        let messages: Vec<&str> = parsed
            .diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(messages, ["this string is not closed on its line"]);
    }
}

/// A comment ends at `\r` for the grammar: the braces after it are code,
/// and count towards the nesting limit.
#[test]
fn braces_after_a_carriage_return_in_a_comment_count() {
    let text = format!("plan p {{ goal \"g\" # c\r{}\n}}\n", "{".repeat(10_000));
    let parsed = parse(&text, FileId(0));
    let messages: Vec<&str> = parsed
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages, ["braces nest deeper than 64 levels"]);
}

/// A run of junk is one node and one diagnostic, however long.
#[test]
fn a_run_of_bare_words_is_one_error() {
    let text = format!("plan p {{ goal \"g\" {} }}", "word ".repeat(200_000));
    let parsed = parse(&text, FileId(0));
    let messages: Vec<&str> = parsed
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages, ["unknown item `word` in a plan"]);
}

/// Past the limit, errors are counted in one `planc::limit` diagnostic.
#[test]
fn errors_past_the_limit_are_counted() {
    let text = format!("plan p {{ goal \"g\" {} }}", "task ".repeat(1000));
    let parsed = parse(&text, FileId(0));
    assert_eq!(parsed.diagnostics.len(), MAX_SYNTAX_ERRORS + 1);
    let last = parsed.diagnostics.last().expect("a diagnostic");
    assert_eq!(last.code, planc::diagnostic::Code::Limit);
    assert_eq!(
        last.message,
        format!(
            "{} more syntax errors not shown; planc reports at most {MAX_SYNTAX_ERRORS} per file",
            1000 - MAX_SYNTAX_ERRORS
        )
    );
}

/// A string that opens with `"""` but is not a valid one was read as `""`
/// and a stray `"`, so the lines after it were code to the grammar but a
/// string to the nesting limit: thousands of `{` nested bad blocks until
/// the stack overflowed.
#[test]
fn braces_in_a_broken_triple_string_are_one_error() {
    let text = format!(
        "plan p {{\n  goal \"\"\"\n{}\n\"\"\"\n}}\n",
        "{ ".repeat(20_000)
    );
    let parsed = parse(&text, FileId(0));
    let messages: Vec<&str> = parsed
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
}

/// A mistake with more than `MAX_EXPLAINED_BYTES` after it is one
/// `planc::limit` error at its item, and the rest of the file is not read
/// by the grammar (which costs up to a hundred bytes a byte): the checker
/// reports what parsed before it, and nothing the rest may hide.
#[test]
fn a_mistake_with_too_much_after_it_is_reported_alone() {
    let mut text = String::from(
        "plan p {\n    goal \"g\"\n    task a \"A\" { after b, missing }\n    task c \"C\" { after later }\n",
    );
    // The item with the mistake starts after its indentation.
    let resume = text.len() + 4;
    text.push_str("    task = \"not a name\"\n");
    let mut i = 0;
    while text.len() - resume <= planc::syntax::MAX_EXPLAINED_BYTES {
        writeln!(text, "    task t{i} \"T\" {{ after a }}").unwrap();
        i += 1;
    }
    text.push_str("    task later \"L\"\n}\n");
    let rest = text.len() - resume;
    let compilation = planc::compile("big.plan", &text, &Default::default());
    let messages: Vec<(planc::diagnostic::Code, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.as_str()))
        .collect();
    let limit = format!(
        "a mistake with {rest} bytes after it; planc explains mistakes only with at most {} bytes after them",
        planc::syntax::MAX_EXPLAINED_BYTES
    );
    // `b` and `missing` are not written after the mistake: unknown. `later`
    // is, so it may be declared there.
    assert_eq!(
        messages,
        [
            (
                planc::diagnostic::Code::UnknownRef,
                "no task or step named `b`"
            ),
            (
                planc::diagnostic::Code::UnknownRef,
                "no task or step named `missing`"
            ),
            (planc::diagnostic::Code::Limit, limit.as_str()),
        ]
    );
    assert_eq!(compilation.diagnostics[2].labels[0].span.start(), resume);
    // A byte less after it, and the grammar explains it.
    let explained = &text[..text.len() - (rest - planc::syntax::MAX_EXPLAINED_BYTES)];
    let parsed = parse(explained, FileId(0));
    assert!(parsed
        .diagnostics
        .iter()
        .all(|d| d.code == planc::diagnostic::Code::Syntax));
    let at = parsed.diagnostics[0].labels[0].span.start();
    assert!((resume..resume + 20).contains(&at), "{at}");
}
