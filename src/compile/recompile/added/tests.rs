//! Whole task lines pasted into steps and deleted, one after another, each
//! recompiled from the last against a fresh compile; most are checked from
//! the last check (`check::added`), counted.

use std::sync::Arc;

use proptest::prelude::*;

use super::super::tests::{compile, path, same_as_fresh, Path};

/// Task lines pasted in (`NAME` a new name each time): with fields that
/// name tasks, steps (`s4`, which another step waits for), an unknown
/// name, the task itself, another new task (`n1`, which an unresolved name
/// may then name); fields given twice or out of range. The last two are
/// checked whole (and the file after them while they stay): a name the
/// plan holds, a role not declared. (A task pasted before one it names
/// leaves the graph out of source order: the graph's reduction is not kept
/// then, and later edits are checked whole too.)
const LINES: &[&str] = &[
    "task NAME \"New\"",
    "task NAME \"New {team}\" { after t3 }",
    "task NAME \"N\" { after s0 assignee r1 }",
    "task NAME \"N\" { after t1, t1 retry 2000 }",
    "task NAME \"N\" { after nope }",
    "task NAME \"N\" { after n1 reasoning \"Why {count}\" }",
    "task NAME \"N\" { after t5 priority hgh }",
    "task NAME \"N\" { after s4 }",
    "task NAME \"N\" { after NAME }",
    "task n1 \"N\" { after t0, t2 optional }",
    "task t5 \"Twice\"",
    "task NAME \"N\" { assignee r9 }",
];

/// The lines that keep the file one `check::added` follows, pasted after
/// the tasks and steps they name (`s4` only after it, so not among them;
/// a task that names itself).
const FOLLOWED: usize = LINES.len() - 5;

/// The plan edited: steps of 20 tasks, `s1` and `s4` sequential, `s5`
/// waiting for `s4`.
fn base() -> String {
    crate::generate::plan_source(120, false)
}

/// Where a task line may be pasted (the start of a task line in a step, or
/// of a step's closing line) and the task lines that may be deleted.
fn places(text: &str) -> (Vec<usize>, Vec<std::ops::Range<usize>>) {
    let (mut paste, mut delete) = (Vec::new(), Vec::new());
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("        task ") {
            paste.push(at);
            delete.push(at..at + line.len());
        } else if line == "    }\n" {
            paste.push(at);
        }
        at += line.len();
    }
    (paste, delete)
}

/// Pastes or deletes a task line as `(pick, line, delete)` say (the
/// `serial`th edit; a pasted line only, if `pasted`); the text.
fn edited(
    text: &str,
    (pick, line, delete): (f64, usize, bool),
    serial: usize,
    pasted: bool,
) -> String {
    let (paste, mut lines) = places(text);
    if pasted {
        lines.retain(|line| text[line.clone()].starts_with("        task n"));
    }
    let index = |n: usize| ((pick * n as f64) as usize).min(n.saturating_sub(1));
    match delete && !lines.is_empty() {
        true => {
            let range = lines[index(lines.len())].clone();
            format!("{}{}", &text[..range.start], &text[range.end..])
        }
        false => {
            let at = paste[index(paste.len())];
            let line = LINES[line].replace("NAME", &format!("n{}", 100 + serial));
            format!("{}        {line}\n{}", &text[..at], &text[at..])
        }
    }
}

/// Runs the edits from the base plan, each held to a fresh compile (lines
/// deleted: pasted ones only, if `pasted`); how many were checked from the
/// last check, and how many in all.
fn run(edits: &[(f64, usize, bool)], pasted: bool) -> Result<(usize, usize), TestCaseError> {
    let mut text = base();
    let mut compilation = compile(&text);
    let mut added = 0;
    for (serial, &edit) in edits.iter().enumerate() {
        let new = edited(&text, edit, serial, pasted);
        let taken = path(&compilation, &new);
        added += usize::from(taken == Path::Added);
        compilation = compilation.recompile(Arc::from(new.as_str()));
        same_as_fresh(&compilation, &new)?;
        text = new;
    }
    Ok((added, edits.len()))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(16),
        ..ProptestConfig::default()
    })]

    /// Task lines pasted and deleted at random places.
    #[test]
    fn a_task_added_or_removed_recompiled_equals_a_fresh_compile(
        edits in proptest::collection::vec((0.0..1.0f64, 0..LINES.len(), proptest::bool::ANY), 1..8),
    ) {
        run(&edits, false)?;
    }
}

/// A fixed run of pastes and deletions: equal to fresh compiles, and most
/// of them (those with a new name that nothing else names, in a step left
/// with tasks) checked from the last check, not whole.
#[test]
fn most_tasks_added_or_removed_are_checked_from_the_last_check() {
    let mut next = crate::generate::xorshift(0x5EED_7A5C);
    let edits: Vec<(f64, usize, bool)> = (0..24)
        // After step s0 (the tasks the lines name).
        .map(|_| (0.2 + next(800) as f64 / 1000.0, next(FOLLOWED), next(5) < 2))
        .collect();
    let (added, all) = run(&edits, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        4 * added >= 3 * all,
        "{added} of {all} checked from the last check"
    );
}

/// A task others wait for deleted (their `after`s name nothing now, with a
/// "did you mean"): checked from the last check. Put back (the names
/// resolve again), it is checked whole.
#[test]
fn a_task_others_wait_for_deleted_and_put_back_is_checked_from_the_last_check() {
    let text = base();
    let waited = crate::generate::waited_for_task(&text).expect("a task waited for");
    let (_, lines) = places(&text);
    let line = lines
        .into_iter()
        .find(|l| text[l.clone()].starts_with(&format!("        task {waited} ")))
        .expect("its line");
    let deleted = format!("{}{}", &text[..line.start], &text[line.end..]);
    let mut old = compile(&text);
    for (new, taken) in [(&deleted, Path::Added), (&text, Path::Whole)] {
        assert_eq!(path(&old, new), taken);
        old = old.recompile(Arc::from(new.as_str()));
        super::super::tests::check(&old, new);
    }
    let unknown = compile(&deleted).diagnostics;
    assert!(unknown
        .iter()
        .any(|d| d.message.contains(&format!("`{waited}`"))));
}

/// The keystroke that makes a new task's title whole in a sequential step
/// that waits for another step (the task appears: it joins the step's
/// `after` and `sequential`), and the one that takes it back (the task
/// goes), at the start, in the middle and at the end of the step.
#[test]
fn a_task_appearing_or_going_in_a_sequential_step_is_checked_from_the_last_check() {
    let text = base();
    let (paste, _) = places(&text);
    // Step s4 (sequential; s5 waits for it): its first task, a middle
    // one, and its closing line.
    let first = text.find("        task t80 ").expect("t80");
    let middle = text.find("        task t90 ").expect("t90");
    let end = text[middle..].find("    }\n").expect("s4 ends") + middle;
    for at in [first, middle, end] {
        assert!(paste.contains(&at));
        let open = format!("{}        task n1 \"New\n{}", &text[..at], &text[at..]);
        let whole = format!("{}        task n1 \"New\"\n{}", &text[..at], &text[at..]);
        let mut old = compile(&open);
        for new in [&whole, &open, &whole, &text] {
            assert_eq!(path(&old, new), Path::Added, "{}", &new[at..at + 30]);
            old = old.recompile(Arc::from(new.as_str()));
            super::super::tests::check(&old, new);
        }
    }
}
