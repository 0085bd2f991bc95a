//! A template's parameter renamed, recompiled, against a fresh compile of
//! the same text; and that the random edits do take the header's path
//! (counted).

use std::cell::Cell;
use std::sync::Arc;

use proptest::test_runner::{Config, TestRunner};

use crate::compile::recompile::tests::{check, same_as_fresh, SNIPPETS};
use crate::compile::{compile_shared, Compilation};
use crate::diagnostic::Code;
use crate::generate::edits::Splice;
use crate::generate::ReuseLibrary as Library;

thread_local! {
    /// How many recompiles took the header's path on this thread.
    pub(super) static HEADER_EDITS: Cell<usize> = const { Cell::new(0) };
}

fn header_edits() -> usize {
    HEADER_EDITS.with(Cell::get)
}

fn compile(text: &str) -> Compilation {
    let name = "/nonexistent/planc-tests/edited.plan";
    compile_shared(name, Arc::from(text), &Default::default())
}

/// Templates used several times (their parameters with defaults, an
/// argument misspelt, one missing), one not used.
const TEMPLATES: &str = "template review(change: string, approvals: int = 2) {
    step review \"Review {change}\" {
        sequential
        task open_pr \"Open a pull request for {change}\" { assignee dev }
        task approve \"Get {approvals} approvals for {change}\" { assignee dev reasoning \"Two eyes on {change}\" }
        task merge \"Merge {change}\" { description \"Merge {change} when {approvals} agree\" }
    }
    task announce \"Tell everyone about {change} {missing}\"
}
template unused(x: int, y: string = \"y\") {
    task lone \"Lone {x}\"
}
plan p {
    goal \"Ship {n}\"
    param n: int = 3
    role dev
    task first \"First\" { assignee dev }
    use review(change = \"part one\") as a { after first }
    use review(change = \"part two\", approvals = 5) as b
    use review(chang = \"typo\", approvals = \"two\") as c
    task last \"Last\" { after a, b.merge }
}
";

/// Where a letter of a template's parameter name stands (or just after
/// one).
fn param_name_places(text: &str) -> Vec<usize> {
    let mut places = Vec::new();
    for (start, _) in text.match_indices("template ") {
        let Some(open) = text[start..].find('(').map(|o| start + o) else {
            continue;
        };
        let Some(close) = text[open..].find(')').map(|c| open + c) else {
            continue;
        };
        let mut naming = true;
        for (at, c) in text[open + 1..close].char_indices() {
            let at = open + 1 + at;
            match c {
                ':' => {
                    places.push(at);
                    naming = false;
                }
                ',' => naming = true,
                _ if naming && c.is_ascii_alphanumeric() => places.push(at),
                _ => {}
            }
        }
    }
    places
}

/// A letter typed at the end of a parameter's name, then taken back:
/// its uses and strings then name none, and do again.
#[test]
fn a_letter_in_a_parameter_name_checks_only_what_names_it() {
    let old = compile(TEMPLATES);
    let at = TEMPLATES.find("review(change").expect("the header") + "review(change".len();
    let new = format!("{}x{}", &TEMPLATES[..at], &TEMPLATES[at..]);
    let before = header_edits();
    let typed = old.recompile(Arc::from(new.as_str()));
    check(&typed, &new);
    assert_eq!(header_edits(), before + 1, "took the header's path");
    let plan = typed.checked.plan.as_ref().expect("a plan");
    let merge: Vec<&str> = plan
        .tasks
        .iter()
        .filter(|t| t.key().ends_with("merge"))
        .map(|t| t.name())
        .collect();
    assert_eq!(merge, ["Merge {change}"; 3]);
    let codes: Vec<Code> = typed.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&Code::TemplateArg), "{codes:?}");
    let back = typed.recompile(Arc::from(TEMPLATES));
    check(&back, TEMPLATES);
    assert_eq!(header_edits(), before + 2);
    assert_eq!(back.diagnostics, old.diagnostics);
    assert_eq!(back.checked.symbols, old.checked.symbols);
}

/// Random edits (names, references, syntax errors), then letters typed
/// into and deleted from the templates' parameter names, each recompile
/// against a fresh compile; many take the header's path.
#[test]
fn a_parameter_renamed_recompiled_equals_a_fresh_compile() {
    let mut runner = TestRunner::new(Config {
        cases: crate::generate::fuzz_cases(40),
        failure_persistence: None,
        ..Config::default()
    });
    let edits = proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 0..2);
    let keys = proptest::collection::vec((0.0..1.0f64, 0..3u8), 1..10);
    let (before, tried) = (header_edits(), Cell::new(0));
    let outcome = runner.run(&(edits, keys), |(edits, keys)| {
        let mut text = TEMPLATES.to_owned();
        for (at, len, snippet) in edits {
            let at = (at * text.len() as f64) as usize;
            text = Splice::pick(&text, at, len, SNIPPETS, snippet).apply(&text);
        }
        let mut compilation = compile(&text);
        for (pick, key) in keys {
            let places = param_name_places(&text);
            let Some(&at) = places.get((pick * places.len() as f64) as usize) else {
                break;
            };
            text = match key {
                0 if text.as_bytes()[at].is_ascii_alphanumeric() => {
                    format!("{}{}", &text[..at], &text[at + 1..])
                }
                1 => format!("{}e{}", &text[..at], &text[at..]),
                _ => format!("{}x{}", &text[..at], &text[at..]),
            };
            let syntax = compilation
                .diagnostics
                .iter()
                .any(|d| d.code == Code::Syntax);
            tried.set(tried.get() + usize::from(!syntax));
            compilation = compilation.recompile(Arc::from(text.as_str()));
            same_as_fresh(&compilation, &text)?;
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    let taken = header_edits() - before;
    assert!(
        taken * 2 >= tried.get(),
        "{taken} of {} edits without syntax errors took the header's path",
        tried.get()
    );
}

/// The benchmark's keystroke: a letter at the end of the template's
/// parameter name in `plan_source_with_reuse`, typed and taken back.
#[test]
fn the_benchmarks_parameter_letter_is_checked_from_the_last_check() {
    let text = crate::generate::plan_source_with_reuse(2_000);
    let options = Default::default();
    let old = crate::compile::compile_with("gen.plan", &text, &options, &Library);
    assert_eq!(old.diagnostics, Vec::new());
    let after = "template review(change";
    let at = text.find(after).expect("the header") + after.len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let before = header_edits();
    let typed = old.recompile_with(Arc::from(new.as_str()), &Library);
    let fresh = crate::compile::compile_with("gen.plan", &new, &options, &Library);
    assert_eq!(typed.diagnostics, fresh.diagnostics);
    assert_eq!(typed.checked.plan, fresh.checked.plan);
    assert_eq!(typed.checked.symbols, fresh.checked.symbols);
    let back = typed.recompile_with(Arc::from(text.as_str()), &Library);
    assert_eq!(header_edits(), before + 2);
    assert_eq!(back.diagnostics, old.diagnostics);
    assert_eq!(back.checked.plan, old.checked.plan);
    assert_eq!(back.checked.symbols, old.checked.symbols);
    // Each keystroke copies only the chunks of the references the two
    // uses' runs (their steps' titles, their tasks' strings) stand in.
    for (was, is) in [(&old, &typed), (&typed, &back)] {
        let (was, is) = (
            &was.checked.symbols.references,
            &is.checked.symbols.references,
        );
        let copied = is.chunks() - is.chunks_shared_with(was);
        assert!(copied <= 8, "{copied} of {} chunks copied", is.chunks());
    }
}

/// A template used a hundred times: its parameter renamed makes a
/// hundred `planc::template_arg` (the most of a code a check reports
/// without a note), and renamed back, none; both from the last check.
#[test]
fn a_hundred_uses_renamed_and_back_are_checked_from_the_last_check() {
    let uses: String = (0..100)
        .map(|i| format!("    use review(change = \"part {i}\") as u{i}\n"))
        .collect();
    let text = format!(
        "template review(change: string) {{\n    task t \"Do {{change}}\"\n}}\nplan p {{\n    goal \"G\"\n{uses}}}\n"
    );
    let old = compile(&text);
    let at = text.find("review(change").expect("the header") + "review(change".len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let before = header_edits();
    let typed = old.recompile(Arc::from(new.as_str()));
    check(&typed, &new);
    let args = typed
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::TemplateArg);
    assert_eq!(args.count(), 100);
    let back = typed.recompile(Arc::from(text.as_str()));
    check(&back, &text);
    assert_eq!(header_edits(), before + 2);
}
