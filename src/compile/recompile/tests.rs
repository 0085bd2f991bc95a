//! A recompile against a fresh compile of the same text, over random edit
//! sequences: the same diagnostics, tree, plan and symbols.

use std::sync::Arc;

use proptest::prelude::*;

use crate::check::Options;
use crate::compile::{compile_shared, Compilation};
use crate::generate::edits::Splice;

const NAME: &str = "/nonexistent/planc-tests/edited.plan";

fn compile(text: &str) -> Compilation {
    compile_shared(NAME, Arc::from(text), &Options::default())
}

/// Asserts that `incremental` is what a fresh compile of its text gives.
fn same_as_fresh(incremental: &Compilation, text: &str) -> Result<(), TestCaseError> {
    let fresh = compile(text);
    prop_assert_eq!(&*incremental.sources.get(incremental.file).text, text);
    prop_assert_eq!(
        &incremental.diagnostics,
        &fresh.diagnostics,
        "diagnostics of\n{}",
        text
    );
    prop_assert_eq!(incremental.syntax(), fresh.syntax(), "tree of\n{}", text);
    prop_assert_eq!(
        &incremental.checked.plan,
        &fresh.checked.plan,
        "plan of\n{}",
        text
    );
    prop_assert_eq!(
        &incremental.checked.symbols,
        &fresh.checked.symbols,
        "symbols of\n{}",
        text
    );
    prop_assert_eq!(
        &incremental.checked.diagnostics,
        &fresh.checked.diagnostics,
        "check diagnostics of\n{}",
        text
    );
    prop_assert_eq!(
        &incremental.parts.root_syntax.len(),
        &fresh.parts.root_syntax.len()
    );
    Ok(())
}

/// Pieces of plans: names, references, strings, braces, comments.
const SNIPPETS: &[&str] = &[
    "x",
    "\"",
    "{",
    "}",
    "t1",
    "t7",
    " after t5",
    " after t59",
    ", t3",
    "s1",
    " after s2",
    "{count}",
    "{team}",
    "{nope}",
    "assignee r3",
    "assignee r9",
    "role r9\n",
    "# note\n",
    "\n",
    "task extra \"Extra\" { after t2 }\n",
    "task t4 \"Again\"\n",
    "sequential\n",
    "retry 3",
    "optional",
    "priority low",
    "\\n",
    "é",
    "}}",
    "{{",
    " ",
    "step",
    "task",
    "r1",
    "0",
    // A name one letter from others ("did you mean"), a duplicate, a
    // reference to a near miss, a role misspelt.
    "t",
    "task t2 \"Twice\"\n",
    " after t11x",
    "assignee r",
    // Mistakes that stay inside one item, typed into and mended.
    "\" part",
    " bogus",
    "task \"",
];

fn base(index: usize) -> String {
    match index {
        0 => crate::generate::plan_source(60, false),
        1 => crate::generate::plan_source(40, true),
        _ => "template review(who: string) {\n    role reviewer\n    task read \"Read {who}\" { assignee reviewer }\n    task sign \"Sign\" { after read }\n}\nplan p {\n    goal \"G {n}\"\n    param n: int = 3\n    role dev\n    use review(who = \"me\") as r\n    step a \"A\" {\n        task one \"One {n}\" { assignee dev }\n        task two \"Two\"\n    }\n    task three \"Three\" { after a, r.sign reasoning \"Why {n}\" }\n}\n"
            .to_owned(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: crate::generate::fuzz_cases(128),
        ..ProptestConfig::default()
    })]

    /// Random insertions, deletions and replacements one after another,
    /// each recompiled from the previous recompile: names renamed,
    /// dependencies added and removed, cycles closed, syntax broken and
    /// mended.
    #[test]
    fn a_recompile_equals_a_fresh_compile(
        base_index in 0..3usize,
        edits in proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 1..10),
    ) {
        let mut text = base(base_index);
        let mut compilation = compile(&text);
        for (at, len, snippet) in edits {
            text = Splice::pick(&text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet)
                .apply(&text);
            compilation = compilation.recompile(Arc::from(text.as_str()));
            same_as_fresh(&compilation, &text)?;
        }
    }
}

fn check(compilation: &Compilation, text: &str) {
    if let Err(error) = same_as_fresh(compilation, text) {
        panic!("{error}");
    }
}

#[test]
fn typing_in_a_title_moves_the_diagnostics_and_retitles_the_task() {
    // A mistake after the edit, so that something moves.
    let text = crate::generate::plan_source(200, false).replace("assignee r7", "assignee r77");
    let old = compile(&text);
    assert!(!old.diagnostics.is_empty());
    let at = text.find("task t100 \"").expect("t100") + "task t100 \"".len();
    let new = format!("{}Now: {}", &text[..at], &text[at..]);
    let recompiled = old.recompile(Arc::from(new.as_str()));
    check(&recompiled, &new);
    // Without checking again.
    let edit = crate::syntax::Edit::between(&text, &new);
    let reparsed =
        crate::syntax::reparse(old.syntax(), &old.parts.root_syntax, &new, edit, old.file)
            .expect("the task is re-read");
    assert!(reparsed.text_only);
    let mut sources = old.sources.clone();
    sources.set_text(old.file, Arc::from(new.as_str()));
    let retexted = old
        .retext(Box::new(reparsed), edit, sources)
        .unwrap_or_else(|_| panic!("moved, not checked again"));
    check(&retexted, &new);
    let plan = recompiled.checked.plan.as_ref().expect("a plan");
    assert!(
        plan.tasks[100].name.starts_with("Now: "),
        "{}",
        plan.tasks[100].name
    );
}

#[test]
fn renaming_a_task_reports_the_references_to_the_old_name() {
    let text = crate::generate::plan_source(200, false);
    let old = compile(&text);
    assert!(old.diagnostics.is_empty());
    // t0 is the first task: the rest of its step waits for it.
    let at = text.find("task t0 ").expect("t0") + "task t0".len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let recompiled = old.recompile(Arc::from(new.as_str()));
    check(&recompiled, &new);
    assert!(recompiled
        .diagnostics
        .iter()
        .any(|d| d.message.contains("`t0`")));
    // And back.
    let again = recompiled.recompile(Arc::from(text.as_str()));
    check(&again, &text);
    assert!(again.diagnostics.is_empty());
}
