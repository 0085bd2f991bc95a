//! A step renamed, recompiled, against a fresh compile of the same text:
//! the same diagnostics, tree, plan and symbols; and that the random
//! renames do take the step's path (counted).

use std::cell::Cell;
use std::sync::Arc;

use proptest::test_runner::{Config, TestRunner};

use crate::compile::recompile::tests::{check, same_as_fresh, SNIPPETS};
use crate::compile::{compile_shared, Compilation};
use crate::diagnostic::Code;
use crate::generate::edits::Splice;

thread_local! {
    /// How many recompiles took the step's path on this thread.
    pub(super) static STEP_RENAMES: Cell<usize> = const { Cell::new(0) };
}

fn compile(text: &str) -> Compilation {
    let name = "/nonexistent/planc-tests/steps.plan";
    compile_shared(name, Arc::from(text), &Default::default())
}

fn step_renames() -> usize {
    STEP_RENAMES.with(Cell::get)
}

/// Steps that wait for steps, a `sequential` one, a task waiting for a
/// step, a reference to a step that is not there yet ("bx").
const STEPS: &str = "plan p {
    goal \"G {n}\"
    param n: int = 3
    role dev
    step a \"A {n}\" {
        sequential
        task a1 \"One\" { assignee dev }
        task a2 \"Two\"
        task a3 \"Three\"
    }
    step b {
        after a
        task b1 \"B1\"
        task b2 \"B2\"
    }
    step c \"C\" {
        after a, b
        task c1 \"C1\"
    }
    step d \"D\" {
        after bx
        task d1 \"D1\" { after c1 }
    }
    task e \"E\" { after d }
}
";

/// Where each step's name ends in `text`.
fn step_name_ends(text: &str) -> Vec<usize> {
    text.match_indices("step ")
        .map(|(at, _)| at + 5)
        .map(|at| {
            let len = text[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(0);
            at + len
        })
        .collect()
}

/// A letter typed at the end of a step name that the next step waits
/// for, then more, then taken back: each recompile takes the step's path
/// and equals a fresh compile (the `after` dangles with a "did you mean",
/// then resolves again).
#[test]
fn renaming_a_step_the_next_waits_for_checks_only_what_names_it() {
    let text = crate::generate::plan_source(300, false);
    let at = text.find("step s4 ").expect("step s4") + "step s4".len();
    let mut old = compile(&text);
    let mut texts = Vec::new();
    let mut typed = String::new();
    for letter in ["x", "_", "2"] {
        typed.push_str(letter);
        texts.push(format!("{}{typed}{}", &text[..at], &text[at..]));
    }
    for _ in 0..3 {
        typed.pop();
        texts.push(format!("{}{typed}{}", &text[..at], &text[at..]));
    }
    let before = step_renames();
    for (n, new) in texts.iter().enumerate() {
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, new);
        assert_eq!(step_renames(), before + n + 1, "took the step's path");
        let unknown: Vec<_> = old
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::UnknownRef)
            .collect();
        match n {
            0 => assert_eq!(
                unknown[0].labels[0].message, "did you mean `s4x`?",
                "{unknown:?}"
            ),
            5 => assert!(unknown.is_empty()),
            _ => assert_eq!(unknown.len(), 1),
        }
    }
    let plan = old.checked.plan.as_ref().expect("a plan");
    assert_eq!(plan.steps[4].id, "s4");
}

/// A step renamed to a name another step's `after` already gives (`bx`):
/// that `after` now waits for it; renamed to a task's name (a duplicate)
/// or named by a task's `after` (`d`): checked whole, as it was.
#[test]
fn a_step_renamed_to_a_name_an_after_gives_makes_its_edges() {
    let old = compile(STEPS);
    assert_eq!(old.diagnostics.len(), 1, "{:?}", old.diagnostics);
    let at = STEPS.find("step b ").expect("step b") + "step b".len();
    let new = format!("{}x{}", &STEPS[..at], &STEPS[at..]);
    let before = step_renames();
    let renamed = old.recompile(Arc::from(new.as_str()));
    check(&renamed, &new);
    assert_eq!(step_renames(), before + 1);
    // `after a, b` now names nothing; `after bx` waits for step bx.
    let messages: Vec<&str> = renamed
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages, ["no task or step named `b`"]);
    let plan = renamed.checked.plan.as_ref().expect("a plan");
    let d1 = plan.tasks.iter().position(|t| t.key() == "d1").expect("d1");
    // b1 and b2 (tasks 4 and 5), and c1 (6).
    assert_eq!(plan.dependencies.of(d1), [4, 5, 6]);

    for (name, renamed_to) in [("step d ", "step e "), ("step d ", "step dd ")] {
        let at = STEPS.find(name).expect("the step");
        let new = format!("{}{renamed_to}{}", &STEPS[..at], &STEPS[at + name.len()..]);
        let before = step_renames();
        let recompiled = compile(STEPS).recompile(Arc::from(new.as_str()));
        check(&recompiled, &new);
        assert_eq!(step_renames(), before, "{renamed_to}: checked whole");
    }
}

/// Random edits (names, references, `sequential`, syntax errors), then
/// steps' names typed into, taken back or made another's, each recompile
/// against a fresh compile; over all cases, most renames take the step's
/// path.
#[test]
fn a_step_rename_recompiled_equals_a_fresh_compile() {
    let cases = crate::generate::fuzz_cases(64);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let edits = proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 0..3);
    let keys = proptest::collection::vec((0.0..1.0f64, 0..9usize), 1..10);
    let strategy = (proptest::bool::ANY, edits, keys);
    let (before, tried) = (step_renames(), Cell::new(0));
    let outcome = runner.run(&strategy, |(large, edits, keys)| {
        let mut text = match large {
            true => crate::generate::plan_source(120, false),
            false => STEPS.to_owned(),
        };
        for (at, len, snippet) in edits {
            text = Splice::pick(
                &text,
                (at * text.len() as f64) as usize,
                len,
                SNIPPETS,
                snippet,
            )
            .apply(&text);
        }
        let mut compilation = compile(&text);
        for (pick, key) in keys {
            let ends = step_name_ends(&text);
            let Some(&end) = ends.get((pick * ends.len() as f64) as usize) else {
                break;
            };
            let start = text[..end].rfind(' ').map_or(end, |at| at + 1);
            let before = text.clone();
            text = match key {
                4..=6 if end > start + 1 => format!("{}{}", &text[..end - 1], &text[end..]),
                7 => format!("{}{}{}", &text[..start], "b", &text[end..]),
                8 => text.clone(),
                _ => format!(
                    "{}{}{}",
                    &text[..end],
                    ["x", "_1", "s", "2"][key % 4],
                    &text[end..]
                ),
            };
            // Counted where the step's path could follow: a name changed
            // in a text without syntax errors.
            let syntax = compilation
                .diagnostics
                .iter()
                .any(|d| d.code == Code::Syntax);
            tried.set(tried.get() + usize::from(text != before && !syntax));
            compilation = compilation.recompile(Arc::from(text.as_str()));
            same_as_fresh(&compilation, &text)?;
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    let taken = step_renames() - before;
    assert!(
        taken * 3 >= tried.get(),
        "{taken} of {} renames without syntax errors took the step's path",
        tried.get()
    );
}
