//! A step's own `sequential` and `after`s typed and deleted, and a task's
//! body opened and closed around them, one edit after another, each
//! recompiled from the last against a fresh compile; those checked from
//! the last check (`check::step_items`) counted.

use std::sync::Arc;

use proptest::prelude::*;

use super::super::tests::{compile, path, same_as_fresh, Path};

/// Lines put at the start of a step's body: its own items (a step before
/// it, after it, itself: a cycle, checked whole; a task, an unknown name,
/// a name given twice; `sequential`), and a new task whose body is left
/// open (it takes in the step's own items up to its next task).
const LINES: &[&str] = &[
    "sequential",
    "after s0",
    "after s3",
    "after STEP",
    "after t3",
    "after nope",
    "after s1, s1",
    "task n1 \"New\" {",
    "task n2 \"New\" { after t2",
];

/// The plan edited: steps of 20 tasks, `s1` and `s4` sequential, `s5`
/// waiting for `s4`.
fn base() -> String {
    crate::generate::plan_source(120, false)
}

/// Where a line may be put (just inside a step's body: `(at, step)`), and
/// the lines that may be deleted (a step's own items, and the lines put in).
fn places(text: &str) -> (Vec<(usize, usize)>, Vec<std::ops::Range<usize>>) {
    let (mut put, mut delete) = (Vec::new(), Vec::new());
    let mut at = 0;
    let mut step = 0;
    for line in text.split_inclusive('\n') {
        at += line.len();
        if line.starts_with("    step s") {
            put.push((at, step));
            step += 1;
        } else if line == "        sequential\n"
            || line.starts_with("        after ")
            || line.starts_with("        task n")
        {
            delete.push(at - line.len()..at);
        }
    }
    (put, delete)
}

/// Puts or deletes a line as `(pick, line, delete)` say; the text.
fn edited(text: &str, (pick, line, delete): (f64, usize, bool)) -> String {
    let (put, lines) = places(text);
    let index = |n: usize| ((pick * n as f64) as usize).min(n.saturating_sub(1));
    match delete && !lines.is_empty() {
        true => {
            let range = lines[index(lines.len())].clone();
            format!("{}{}", &text[..range.start], &text[range.end..])
        }
        false => {
            let (at, step) = put[index(put.len())];
            let line = LINES[line].replace("STEP", &format!("s{step}"));
            format!("{}        {line}\n{}", &text[..at], &text[at..])
        }
    }
}

/// Runs the edits from the base plan, each held to a fresh compile; how
/// many were checked from the last check by `check::step_items`.
fn run(edits: &[(f64, usize, bool)]) -> Result<usize, TestCaseError> {
    let mut text = base();
    let mut compilation = compile(&text);
    let mut taken = 0;
    for &edit in edits {
        let new = edited(&text, edit);
        taken += usize::from(path(&compilation, &new) == Path::Step);
        compilation = compilation.recompile(Arc::from(new.as_str()));
        same_as_fresh(&compilation, &new)?;
        text = new;
    }
    Ok(taken)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(12),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_steps_own_items_edited_recompiled_equals_a_fresh_compile(
        edits in proptest::collection::vec((0.0..1.0f64, 0..LINES.len(), proptest::bool::ANY), 1..8),
    ) {
        run(&edits)?;
    }
}

#[test]
fn a_steps_own_items_edited_are_checked_from_the_last_check() {
    // `sequential` and `after`s put in and taken out of steps (naming a
    // step, a task, nothing, a step twice), each checked from the last
    // check; then a step made to wait for itself (a cycle: checked whole,
    // and the edit after it, the last check keeping no reduction).
    let edits = [
        (0.1, 0, false),
        (0.5, 1, false),
        (0.9, 2, false),
        (0.95, 4, false),
        (0.3, 5, false),
        (0.5, 6, false),
        (0.0, 0, true),
        (0.99, 0, true),
        (0.5, 0, true),
        (0.5, 3, false),
        (0.5, 0, true),
    ];
    assert_eq!(run(&edits).map_err(|e| e.to_string()), Ok(9));
}
