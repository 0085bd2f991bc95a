//! The fast reader against the grammar: the same tree whenever the grammar
//! reports nothing, and giving up whenever it reports something.

// A scenario test may run long: it reads as one story.
#![allow(clippy::too_many_lines)]

use proptest::prelude::*;

use super::read;
use crate::span::FileId;
use crate::syntax::entry::parse;
use crate::syntax::parser::parse_with_grammar;

/// Asserts the reader agrees with the grammar on `text`: it reads the file
/// alone exactly when the grammar reports nothing, and with the grammar
/// taking over where it gives up, the tree and every diagnostic are what
/// the grammar alone gives.
fn agrees(text: &str) -> Result<(), TestCaseError> {
    let grammar = parse_with_grammar(text, FileId(0));
    prop_assert_eq!(
        read(text).is_ok(),
        grammar.diagnostics.is_empty(),
        "the reader and the grammar disagree on whether this is clean ({:?})\n--- text ---\n{}",
        grammar.diagnostics.first().map(|d| &d.message),
        text
    );
    let parsed = parse(text, FileId(0));
    prop_assert_eq!(parsed.file, grammar.file, "different trees for\n{}", text);
    prop_assert_eq!(
        parsed.diagnostics,
        grammar.diagnostics,
        "different diagnostics for\n{}",
        text
    );
    Ok(())
}

fn check(text: &str) {
    if let Err(error) = agrees(text) {
        panic!("{error}");
    }
}

fn example_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("examples are readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            example_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "plan") {
            out.push(path);
        }
    }
}

fn examples() -> Vec<String> {
    let mut paths = Vec::new();
    example_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        &mut paths,
    );
    paths.sort();
    assert!(paths.len() > 20, "the examples are found");
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("an example is UTF-8"))
        .collect()
}

#[test]
fn every_example_reads_as_the_grammar_reads_it() {
    let examples = examples();
    let mut accepted = 0;
    for text in &examples {
        check(text);
        accepted += usize::from(read(text).is_ok());
    }
    // The error examples are the ones it gives up on (minus those whose
    // mistake is found by the checker, not the parser).
    assert!(accepted > 20, "only {accepted} examples were read directly");
}

#[test]
fn generated_plans_are_read_directly() {
    for cycle in [false, true] {
        let text = crate::generate::plan_source(4_000, cycle);
        assert!(read(&text).is_ok());
        check(&text);
    }
}

#[test]
fn the_second_thread_starts_at_an_item_of_the_body() {
    let text = crate::generate::plan_source(4_000, false);
    assert!(text.len() >= super::PARALLEL_THRESHOLD);
    let guess = super::guess_item_start(&text).expect("a guess");
    assert!(guess > text.len() / 2);
    assert!(
        text[guess..].starts_with("step s"),
        "{}",
        &text[guess..guess + 40]
    );
    assert_eq!(&text[guess - 5..guess], "\n    ");
    let tail = super::read_tail(&text, guess).expect("the rest of the body reads");
    assert_eq!(&text[tail.end..], "}\n");
    check(&text);
    // A guess inside a step only costs the second thread's work.
    let inside = text[guess..].find("task").expect("a task") + guess;
    let tail = super::read_tail(&text, inside).expect("the rest of the step reads");
    assert_eq!(&text[tail.end..tail.end + 1], "}");
    assert!(tail.end < text.len() - 2);
}

#[test]
fn the_grammar_takes_over_at_the_item_with_the_mistake() {
    let text = crate::generate::plan_source(4_000, false);
    // t2900 is in step s145: the grammar reads on from that step.
    let at = text.find("step s145 ").expect("the step is there");
    let broken = text.replacen("task t2900 \"", "task t2900 \"{", 1);
    let prefix = read(&broken).expect_err("the reader gives up");
    assert_eq!(prefix.resume, at);
    let plan = prefix.plan.expect("inside the plan's body");
    assert_eq!(plan.name.name, "generated");
    check(&broken);
    let parsed = parse(&broken, FileId(0));
    assert_eq!(parsed.diagnostics.len(), 1);
}

/// Corners of the language, each read both ways.
#[test]
fn corners_agree() {
    let cases = [
        "",
        "\u{FEFF}plan p { goal \"g\" }",
        "plan p{goal\"g\"task a\"A\"{after b assignee r}task b\"B\"}",
        "plan p {\r\n  goal \"g\" # c\r\n  task a \"A\"\r\n}\r\n",
        "# only a comment",
        "#",
        "plan p { # a\n # b\n goal # c\n \"g\" # d\n}",
        "plan p { task a \"A\" # after\n task b \"B\" { after a # x\n , c } }",
        "plan p { task a \"A\" { after a.b.c, d } }",
        "plan p { task a \"A\" { after a. } }",
        "plan p { task a \"A\" { after task.b } }",
        "plan p { task a \"A\" { after tasks, as_ } }",
        "plan p { task a \"A\" { after as.b } }",
        "plan p { task a \"A\" { after a, } }",
        "plan p { task a \"A\" { assignee task } }",
        "plan p { task task \"A\" }",
        "plan p { task a \"A\" { optional retry 3 retry -1 reasoning \"r\" description \"d\" } }",
        "plan p { task a \"A\" { retry 1.5 } }",
        "plan p { task a \"A\" { retry 99999999999999999999 } }",
        "plan p { task a \"A\" { retry 2x } }",
        "plan p { task a \"A\" { retry 2. } }",
        "plan p { max_iterations 10 language \"zh\" title \"t\" }",
        "plan p { retry 2 task a \"A\" { retry 0 } retry 3 }",
        "plan p { retry -1 task a \"A\" }",
        "plan p { retry task a \"A\" }",
        "plan p { param a: int = -3 param b: float = 1.5e3 param d: bool = true param e: string = \"x\" }",
        "plan p { param c: float = 2.5E-2 }",
        "plan p { param c: float = -2.5e+2 }",
        "plan p { param f: float = 1.5e }",
        "plan p { param f: float = 1.5e+ }",
        "plan p { param a: float = 1.5.3 }",
        "plan p { param a: float = 1e400 }",
        "plan p { param a: float = 1.0e400 }",
        "plan p { param a: int = 1 param b: bool = truex }",
        "plan p { param a: 9x = 1 }",
        "plan p { param a : int=1 }",
        "plan p { param a: int = }",
        "plan p { role r role s \"S\" role t\n\"T\" }",
        "plan p { step s { sequential after t task a \"A\" } step t \"T\" { } }",
        "plan p { step s { goal \"g\" } }",
        "plan p { step s { task a \"A\" }",
        "plan p { task a \"A\" { after b }",
        "plan p { task a \"A\" {",
        "plan p {",
        "plan {}",
        "plan p {} plan q {}",
        "import \"lib.plan\" role r param x: int plan p { goal \"g\" }",
        "import lib",
        "template t(a: string, b: int = 2,) { role r step s { task x \"{a}\" } task y \"Y\" use u() as v }\nplan p { use t(a = \"x\", b = 3) as one { after z } use t() as two use lib.t(a = 1,) as three {} }",
        "template t() { goal \"g\" }",
        "template t(,) { }",
        "template t(a) { }",
        "plan p { use t( as x }",
        "plan p { use t() x }",
        "plan p { use t() as as }",
        "plan p { use t() as x { task a \"A\" } }",
        "plan p { use task() as x }",
        "plan p { goal \"a \\\" \\\\ \\n \\t \\r \\0 \\{ \\} \\u{1F600} \\u{41}\" }",
        "plan p { goal \"\\u{110000}\" }",
        "plan p { goal \"\\u{D800}\" }",
        "plan p { goal \"\\u{1234567}\" }",
        "plan p { goal \"\\u{}\" }",
        "plan p { goal \"\\q\" }",
        "plan p { goal \"{{literal}} {x} { y } {  z  } {\tx}\" }",
        "plan p { goal \"{ x}}\" }",
        "plan p { goal \"}\" }",
        "plan p { goal \"{1x}\" }",
        "plan p { goal \"{}\" }",
        "plan p { goal \"a\nb\" }",
        "plan p { goal \"a\rb\" }",
        "plan p { goal \"open",
        "plan p { goal \"\"\"\n    one\n      two {x} \\n \"quoted\" \"\"\n    three\n    \"\"\" }",
        "plan p { goal \"\"\"same line\n    next\n  \"\"\" }",
        "plan p { goal \"\"\"\"\"\" }",
        "plan p { goal \"\"\"a\"\"\"\" }",
        "plan p { goal \"\"\"\r\n\tx\r\n\t\"\"\" }",
        "plan p { goal \"\"\"{{ }} {y}\"\"\" }",
        "plan p { goal \"\"\"\n  never closed }",
        "plan p { goal \"ünïcödé 机械键盘\" task 任务 \"做\" { assignee 浏览器 } role 浏览器 }",
        "plan p { task _a \"A\" task a1 \"B\" task ab_ \"C\" }",
        "plan p { task 1a \"A\" }",
        "plan p { task a-b \"A\" }",
        "plan p { task a \"A\" } }",
        "plan p { task a \"A\" } x",
        "plan p { task a \"A\" } \"",
        "plan p { task a \"A\" } #x\n",
        "role r \"R\" param p: string = \"x\"",
        "plan p { title \"\" goal \"\" task a \"\" }",
        "plan p { task a \"A\" { after b, c, d, e } }",
        "plan p { task a \"A\" {}{} }",
        "plan\u{FEFF}p { }",
        "plan p { task a \"A\" { after b\u{FEFF}, c } }",
        "plan p { task a \"A\"\u{FEFF}{ } }",
        "plan p { task a \"A\" { after b.\u{FEFF}c } }",
    ];
    for text in cases {
        check(text);
    }
}

/// A random plan that the grammar accepts: items of every kind, comments,
/// strings of every form, laid out at random.
fn valid_plan() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec!["a", "b", "step_1", "t", "x.y", "机械", "_z", "as_"]);
    let space = prop::sample::select(vec![" ", "\n", "  ", "\t", " # note\n", "\r\n", "\u{FEFF}"]);
    let string = prop::sample::select(vec![
        "\"plain\"",
        "\"with {p} and {{braces}}\"",
        "\"esc \\n \\\" \\u{E9}\"",
        "\"\"\"\n    block {p}\n      indented\n    \"\"\"",
        "\"\"",
        "\"\"\"inline\"\"\"",
    ]);
    let field = prop::sample::select(vec![
        "after a",
        "after a, b",
        "after x.y",
        "assignee r",
        "reasoning \"why\"",
        "description \"\"\"\n  d\n  \"\"\"",
        "retry 2",
        "retry -1",
        "optional",
    ]);
    let item = (
        0u8..8,
        name,
        string,
        prop::collection::vec((field, space.clone()), 0..4),
    )
        .prop_map(|(kind, name, string, fields)| {
            let fields: String = fields.iter().map(|(f, s)| format!("{s}{f}")).collect();
            match kind {
                0 | 1 => format!("task {} {string} {{{fields} }}", name.replace('.', "_")),
                2 => format!("task {} {string}", name.replace('.', "_")),
                3 => format!(
                    "step {} {string} {{ sequential task s_{} \"S\" {{{fields}}} }}",
                    name.replace('.', "_"),
                    name.replace('.', "_")
                ),
                4 => format!("param {}: int = 3", name.replace('.', "_")),
                5 => format!("role {} {string}", name.replace('.', "_")),
                6 => format!(
                    "use lib.t(a = {string}, b = 1.5, c = true) as {} {{ after a }}",
                    name.replace('.', "_")
                ),
                _ => format!("title {string}"),
            }
        });
    (
        prop::collection::vec((item, space.clone()), 0..12),
        space,
    )
        .prop_map(|(items, end)| {
            let body: String = items.iter().map(|(i, s)| format!("{s}{i}")).collect();
            format!("template lib(a: string = \"x\") {{ task q \"Q\" }}\nplan p {{ goal \"g\"{body}{end}}}\n")
        })
}

/// 512 cases a property in a normal run; `PLANC_FUZZ_CASES` for a long one.
fn cases() -> u32 {
    crate::generate::fuzz_cases(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn random_plans_read_as_the_grammar_reads_them(text in valid_plan()) {
        prop_assert!(read(&text).is_ok(), "gave up on a valid plan:\n{}", text);
        agrees(&text)?;
    }

    #[test]
    fn edited_plans_read_as_the_grammar_reads_them(
        text in valid_plan(),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), 0u8..2, prop::sample::select(vec![
                "{", "}", "\"", "\"\"\"", "#", ",", ".", ":", "=", "\\", "\n", " ", "task",
                "after", "as", "1", "-", "e", "é", "{p}", "\u{FEFF}", "\r", "x",
            ])),
            1..4,
        ),
    ) {
        let mut text = text;
        for (at, delete, insert) in edits {
            let mut offset = at.index(text.len() + 1);
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            if delete == 1 {
                if let Some(c) = text[offset..].chars().next() {
                    text.replace_range(offset..offset + c.len_utf8(), "");
                }
            } else {
                text.insert_str(offset, insert);
            }
        }
        agrees(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases() / 32))]

    /// Large files (read on two threads) with mistakes anywhere: the
    /// grammar takes over at the item with the first one, and the result is
    /// the grammar's own.
    #[test]
    fn edited_large_plans_read_as_the_grammar_reads_them(
        edits in prop::collection::vec(
            (0.0f64..1.0, prop::sample::select(vec![
                "{", "}", "\"", "\n  task x \"X\"\n", "# }\n", "\"\"\"", "step", "", "}\nrole r\n", "plan q {",
            ])),
            1..4,
        ),
    ) {
        let mut text = crate::generate::plan_source(4_000, false);
        prop_assert!(text.len() >= super::PARALLEL_THRESHOLD);
        for (at, insert) in edits {
            let mut offset = (at * text.len() as f64) as usize;
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            text.insert_str(offset, insert);
        }
        agrees(&text)?;
    }
}
