//! A recompile against a fresh compile of the same text, over random edit
//! sequences: the same diagnostics, tree, plan and symbols.

use std::sync::Arc;

use proptest::prelude::*;

use crate::check::Options;
use crate::compile::{compile_shared, Compilation};
use crate::diagnostic::Code;
use crate::generate::edits::Splice;

const NAME: &str = "/nonexistent/planc-tests/edited.plan";

/// A fresh compile of `text` (the file the recompile tests edit).
pub(super) fn compile(text: &str) -> Compilation {
    compile_shared(NAME, Arc::from(text), &Options::default())
}

/// Asserts that `incremental` is what a fresh compile of its text gives.
pub(super) fn same_as_fresh(incremental: &Compilation, text: &str) -> Result<(), TestCaseError> {
    same_as(incremental, &compile(text), text)
}

/// Asserts that `incremental` is `fresh`, a fresh compile of `text` (its
/// imports read by the same loader).
pub(super) fn same_as(
    incremental: &Compilation,
    fresh: &Compilation,
    text: &str,
) -> Result<(), TestCaseError> {
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
pub(super) const SNIPPETS: &[&str] = &[
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

/// Fields typed into a task's body.
const FIELDS: &[&str] = &[
    "after t3 ",
    "after t1, t1 ",
    "after t1, t2 ",
    "after t99 ",
    "after tt1 ",
    "after s2 ",
    "retry 2000 ",
    "retry 1 ",
    "priority hgh ",
    "priority low ",
    "assignee r1 ",
    "assignee r9 ",
    "optional ",
    "reasoning \"Why {team}\" ",
    "description \"{nope}\" ",
    "description \"Plain\" ",
    "\"",
    "x ",
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
            let splice = Splice::pick(&text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet);
            text = splice.apply(&text);
            // Every other edit told, as an editor's change tells it (the
            // range it replaced, not the least one the texts differ in).
            let told = (len % 2 == 0).then_some(crate::syntax::Edit {
                start: splice.start,
                old_end: splice.end,
                new_end: splice.start + splice.insert.len(),
            });
            compilation = compilation.recompile_edited(Arc::from(text.as_str()), told);
            same_as_fresh(&compilation, &text)?;
        }
    }

    /// Fields typed into a task's body and taken out again, one edit after
    /// another: references, repeated and unknown names, fields given twice,
    /// values out of range, roles, strings with parameters, quotes left
    /// unclosed; what the task made is checked again alone
    /// (`check::edited`), or the file whole.
    #[test]
    fn a_task_edited_recompiled_equals_a_fresh_compile(
        cycle in proptest::bool::weighted(0.1),
        keys in proptest::collection::vec((0.0..1.0f64, 0..FIELDS.len(), proptest::bool::ANY), 1..12),
    ) {
        let mut text = base(usize::from(cycle));
        let mut compilation = compile(&text);
        let mut typed: Vec<(usize, &str)> = Vec::new();
        for (pick, field, take_back) in keys {
            text = match typed.pop() {
                Some((at, field)) if take_back => {
                    for (t, _) in typed.iter_mut().filter(|(t, _)| *t > at) {
                        *t -= field.len();
                    }
                    format!("{}{}", &text[..at], &text[at + field.len()..])
                }
                last => {
                    typed.extend(last);
                    // Just inside a task's body.
                    let bodies: Vec<usize> = text
                        .match_indices("\" { ")
                        .map(|(at, _)| at + 3)
                        .filter(|&at| typed.iter().all(|&(t, f)| at < t || at > t + f.len()))
                        .collect();
                    let Some(&at) = bodies.get((pick * bodies.len() as f64) as usize) else {
                        break;
                    };
                    // Places typed before move with the text.
                    for (t, _) in typed.iter_mut().filter(|(t, _)| *t > at) {
                        *t += FIELDS[field].len();
                    }
                    typed.push((at, FIELDS[field]));
                    format!("{}{}{}", &text[..at], FIELDS[field], &text[at..])
                }
            };
            compilation = compilation.recompile(Arc::from(text.as_str()));
            same_as_fresh(&compilation, &text)?;
        }
    }

    /// Tasks' names typed into, letter by letter, as a rename is, after a
    /// few random edits (references that dangle, roles, duplicates,
    /// cycles, syntax errors): what names the task is checked again alone
    /// (`check::rename`), or the file whole.
    #[test]
    fn a_rename_recompiled_equals_a_fresh_compile(
        cycle in proptest::bool::weighted(0.2),
        edits in proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 0..3),
        keys in proptest::collection::vec((0.0..1.0f64, 0..9usize), 1..12),
    ) {
        let mut text = base(usize::from(cycle));
        for (at, len, snippet) in edits {
            text = Splice::pick(&text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet)
                .apply(&text);
        }
        let mut compilation = compile(&text);
        for (pick, key) in keys {
            // The end of a task's name.
            let ends: Vec<usize> = text
                .match_indices("task ")
                .map(|(at, _)| at + 5)
                .map(|at| at + text[at..].find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(0))
                .collect();
            let Some(&end) = ends.get((pick * ends.len() as f64) as usize) else {
                break;
            };
            let start = text[..end].rfind(' ').map_or(end, |at| at + 1);
            // Mostly a letter typed or taken back; now and then the name
            // of another task (a duplicate), or no change.
            text = match key {
                0..=3 => format!("{}{}{}", &text[..end], ["x", "_1", "y", "2"][key], &text[end..]),
                4..=6 if end > start + 1 => format!("{}{}", &text[..end - 1], &text[end..]),
                7 => format!("{}{}{}", &text[..start], "t1", &text[end..]),
                _ => text.clone(),
            };
            compilation = compilation.recompile(Arc::from(text.as_str()));
            same_as_fresh(&compilation, &text)?;
        }
    }
}

pub(super) fn check(compilation: &Compilation, text: &str) {
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
        .retext(Box::new(reparsed), edit, sources, None)
        .unwrap_or_else(|_| panic!("moved, not checked again"));
    check(&retexted, &new);
    let plan = recompiled.checked.plan.as_ref().expect("a plan");
    assert!(
        plan.tasks[100].name().starts_with("Now: "),
        "{}",
        plan.tasks[100].name()
    );
}

/// A title typed into letter by letter before its parameter, as its
/// string grows past what the tree holds in place (23 bytes) and back, an
/// escape typed and taken back (the parameter's place then written out).
#[test]
fn typing_in_a_title_across_the_strings_inline_limit_equals_a_fresh_compile() {
    let mut text = crate::generate::plan_source(60, false);
    let at = text.find("task t7 \"").expect("t7") + "task t7 \"".len();
    let mut compilation = compile(&text);
    let typed = ["a", "b", "c", "d", "e", "f", "\\", "n", "g"];
    for letter in typed {
        // "Do part 7 for {team}": 19 bytes in the tree, then 20 to 28.
        text.insert_str(at, letter);
        compilation = compilation.recompile(Arc::from(text.as_str()));
        check(&compilation, &text);
    }
    for letter in typed.iter().rev() {
        text.replace_range(at..at + letter.len(), "");
        compilation = compilation.recompile(Arc::from(text.as_str()));
        check(&compilation, &text);
    }
}

#[test]
fn typing_in_a_steps_title_renames_the_step_without_checking_again() {
    let text = crate::generate::plan_source(200, false);
    let old = compile(&text);
    let at = text.find("step s5 \"").expect("s5") + "step s5 \"".len();
    let mut typed = old;
    for new in [
        format!("{}New {}", &text[..at], &text[at..]),
        format!("{}Newer {}", &text[..at], &text[at..]),
    ] {
        let edit = crate::syntax::Edit::between(typed.sources.get(typed.file).text.as_ref(), &new);
        let reparsed = crate::syntax::reparse(
            typed.syntax(),
            &typed.parts.root_syntax,
            &new,
            edit,
            typed.file,
        )
        .expect("the step is re-read");
        assert!(reparsed.text_only);
        let mut sources = typed.sources.clone();
        sources.set_text(typed.file, Arc::from(new.as_str()));
        typed = typed
            .retext(Box::new(reparsed), edit, sources, None)
            .unwrap_or_else(|_| panic!("moved, not checked again"));
        check(&typed, &new);
    }
    let plan = typed.checked.plan.as_ref().expect("a plan");
    assert_eq!(plan.steps[5].name, "Newer Stage 5 of 200");
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

/// The old compilation's view of the edit to `new`.
fn reparsed(old: &Compilation, new: &str) -> crate::syntax::Reparsed {
    try_reparsed(old, new).expect("the task is re-read")
}

/// The item an edit falls in, read again; `None` if the file is read whole.
fn try_reparsed(old: &Compilation, new: &str) -> Option<crate::syntax::Reparsed> {
    let text = &old.sources.get(old.file).text;
    let edit = crate::syntax::Edit::between(text, new);
    crate::syntax::reparse(old.syntax(), &old.parts.root_syntax, new, edit, old.file)
}

#[test]
fn typing_the_name_of_a_task_nothing_names_is_not_checked_again() {
    // The last task: nothing waits for it.
    let text = crate::generate::plan_source(200, false);
    let mut old = compile(&text);
    let at = text.find("task t199").expect("t199") + "task t199".len();
    let mut typed = String::new();
    for letter in ["_", "n", "e", "w"] {
        typed.push_str(letter);
        let new = format!("{}{typed}{}", &text[..at], &text[at..]);
        assert_eq!(path(&old, &new), Path::Lone, "{typed}");
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
    }
    let plan = old.checked.plan.as_ref().expect("a plan");
    assert_eq!(plan.tasks[199].key(), "t199_new");
    let definitions = &old.checked.symbols.definitions;
    assert!(definitions.iter().any(|d| d.name() == "t199_new"));
    assert!(!definitions.iter().any(|d| d.name() == "t199"));
}

#[test]
fn a_rename_that_something_could_see_is_checked_again() {
    let text = crate::generate::plan_source(200, false);
    let old = compile(&text);
    let renamed = |from: &str, to: &str| {
        let at = text.find(&format!("task {from} ")).expect("the task");
        let new = format!(
            "{}task {to}{}",
            &text[..at],
            &text[at + "task ".len() + from.len()..]
        );
        let recompiled = old.recompile(Arc::from(new.as_str()));
        check(&recompiled, &new);
        path(&old, &new)
    };
    // Nothing names t199; t0 is waited for (by tasks' `after`s); t198 and
    // s0 are names already.
    assert_eq!(renamed("t199", "t199x"), Path::Lone);
    assert_eq!(renamed("t0", "t0x"), Path::Renamed);
    assert_eq!(renamed("t199", "t198"), Path::Whole);
    assert_eq!(renamed("t199", "s0"), Path::Whole);
}

#[test]
fn typing_the_name_of_a_task_others_wait_for_checks_only_what_names_it() {
    let text = crate::generate::plan_source(300, false);
    let waited = crate::generate::waited_for_task(&text).expect("a task waited for");
    let at =
        text.find(&format!("task {waited} ")).expect("the task") + "task ".len() + waited.len();
    let mut old = compile(&text);
    let mut typed = String::new();
    // Letter by letter (the references dangle, then are suggested the new
    // name), then back.
    let mut texts = Vec::new();
    for letter in ["_", "n", "e", "w"] {
        typed.push_str(letter);
        texts.push(format!("{}{typed}{}", &text[..at], &text[at..]));
    }
    for _ in 0..4 {
        typed.pop();
        texts.push(format!("{}{typed}{}", &text[..at], &text[at..]));
    }
    for new in texts {
        assert_eq!(path(&old, &new), Path::Renamed);
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
    }
    assert!(old.diagnostics.is_empty());
    let renamed = format!("{}x{}", &text[..at], &text[at..]);
    let recompiled = old.recompile(Arc::from(renamed.as_str()));
    check(&recompiled, &renamed);
    let unknown = recompiled
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostic::Code::UnknownRef);
    assert!(unknown.count() > 0);
}

#[test]
fn a_rename_taken_back_puts_its_references_in_place_without_doubling_the_list() {
    let text = crate::generate::plan_source(300, false);
    let waited = crate::generate::waited_for_task(&text).expect("a task waited for");
    let at =
        text.find(&format!("task {waited} ")).expect("the task") + "task ".len() + waited.len();
    let renamed = format!("{}x{}", &text[..at], &text[at..]);
    let first = compile(&text);
    let typed = first.recompile(Arc::from(renamed.as_str()));
    let back = typed.recompile(Arc::from(text.as_str()));
    check(&back, &text);
    let (before, after) = (
        &first.checked.symbols.references,
        &back.checked.symbols.references,
    );
    assert_eq!(after.len(), before.len());
    // The list is not copied: only the chunks the references to the name
    // (and the renamed task) stand in are.
    let chunks = after.chunks();
    let copied = chunks - after.chunks_shared_with(&typed.checked.symbols.references);
    let definitions = &first.checked.symbols.definitions;
    let task = definitions.iter().position(|d| d.name() == waited);
    let named = before
        .iter()
        .filter(|r| Some(r.definition as usize) == task)
        .count();
    assert!(
        copied <= 4 + 2 * named,
        "{copied} of {chunks} chunks copied"
    );
}

#[test]
fn a_letter_typed_copies_only_the_chunks_of_symbols_it_reaches() {
    let text = crate::generate::plan_source(300, false);
    let at = text.find("task t150 \"Do").expect("the task") + "task t150 \"Do".len();
    let typed = format!("{}x{}", &text[..at], &text[at..]);
    let first = compile(&text);
    let recompiled = first.recompile(Arc::from(typed.as_str()));
    check(&recompiled, &typed);
    let (old, new) = (&first.checked.symbols, &recompiled.checked.symbols);
    // Chunks of 8 in the library's tests: hundreds of them, a few reaching
    // into the edited task: the task's, and those of what covers it (the
    // plan's and the step's definitions) or stands in another part of
    // the list in source order (the references of the steps', the tasks'
    // fields and the tasks' strings).
    assert!(new.definitions.chunks() > 30 && new.references.chunks() > 30);
    let definitions =
        new.definitions.chunks() - new.definitions.chunks_shared_with(&old.definitions);
    let references = new.references.chunks() - new.references.chunks_shared_with(&old.references);
    assert!(
        definitions <= 3 && references <= 6,
        "{definitions}, {references} copied"
    );
}

#[test]
fn a_large_plan_is_recompiled_as_it_is_compiled() {
    // Past the size from which a whole check runs on two threads, as the
    // check a rename or an edited task falls back to does.
    let text = crate::generate::plan_source(5000, false);
    let waited = crate::generate::waited_for_task(&text).expect("a task waited for");
    let at = text.find(&format!("task {waited} ")).expect("the task") + "task ".len();
    let renamed = format!("{}{waited}x{}", &text[..at], &text[at + waited.len()..]);
    let title = renamed.find("\"Do part 2500").expect("a title") + 1;
    let retitled = format!("{}x{}", &renamed[..title], &renamed[title..]);
    let quote = text.find("\"Do part 2500").expect("a title") + 3;
    let quoted = format!("{}\"{}", &text[..quote], &text[quote..]);
    let mut old = compile(&text);
    for new in [&renamed, &retitled, &text, &quoted, &text] {
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, new);
    }
}

#[test]
fn a_syntax_error_with_megabytes_after_it_is_read_again_alone() {
    // More than `MAX_EXPLAINED_BYTES` after the item typed into (a long
    // comment at the end): a whole compile explains that item alone
    // (`syntax::explain`), not a `planc::limit` error, and a keystroke
    // reads only it again.
    let mut text = crate::generate::plan_source(200, false);
    text.push_str("# ");
    text.push_str(&"x".repeat(crate::syntax::MAX_EXPLAINED_BYTES));
    text.push('\n');
    let step = "step s5 \"Stage 5 of {count}\" {";
    let at = text.find(step).expect("step s5") + step.len();
    let letter = format!("{}t{}", &text[..at], &text[at..]);
    let title = text.find("task t100 \"Do").expect("t100") + "task t100 \"Do".len();
    let quote = format!("{}\"{}", &text[..title], &text[title..]);
    for mistaken in [&letter, &quote] {
        let fresh = compile(mistaken);
        assert!(!fresh.diagnostics.is_empty());
        assert!(
            fresh.diagnostics.iter().all(|d| d.code != Code::Limit),
            "{:?}",
            fresh.diagnostics
        );
    }
    let mut old = compile(&text);
    for new in [&letter, &text, &quote, &text] {
        assert_ne!(path(&old, new), Path::Whole);
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, new);
    }
}

#[test]
fn a_task_body_left_open_with_megabytes_after_it_is_read_again_alone() {
    // A new task's `{` typed in a step, more than `MAX_EXPLAINED_BYTES`
    // before the end: the task's body ends before the next `task`, the
    // step at its `}` (the braces do not balance there). A whole compile
    // explains the step alone (`syntax::explain`), and each keystroke
    // re-reads the step and checks the task alone, not the file (the `{`
    // typed after the space that follows the task, outside its span).
    let mut text = crate::generate::plan_source(200, false);
    text.push_str("# ");
    text.push_str(&"x".repeat(crate::syntax::MAX_EXPLAINED_BYTES));
    text.push('\n');
    let next = text.find("task t101 ").expect("t101");
    let typed = |body: &str| {
        format!(
            "{}task n1 \"New\"{body}\n        {}",
            &text[..next],
            &text[next..]
        )
    };
    let (closed, opened, field) = (typed(" "), typed(" {"), typed(" { retry 2"));
    let fresh = compile(&field);
    assert!(
        fresh.diagnostics.iter().all(|d| d.code != Code::Limit),
        "{:?}",
        fresh.diagnostics
    );
    assert!(fresh
        .diagnostics
        .iter()
        .any(|d| d.message.contains("never closed")));
    let mut old = compile(&closed);
    for new in [&opened, &field, &opened, &closed] {
        assert_eq!(path(&old, new), Path::Edited);
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, new);
    }
}

#[test]
fn typing_inside_a_task_checks_only_that_task() {
    let text = crate::generate::plan_source(300, false);
    let at = text.find("task t150 \"Do").expect("the task") + "task t150 \"Do".len();
    let after = text[at..].find(" after ").expect("an after") + at + " after ".len();
    let edits = [
        // A quote that leaves a string unclosed, and mended.
        format!("{}\"{}", &text[..at], &text[at..]),
        text.clone(),
        // A reference typed into the `after`, letter by letter, and back.
        format!("{}t{}", &text[..after], &text[after..]),
        format!("{}t1{}", &text[..after], &text[after..]),
        format!("{}t1, {}", &text[..after], &text[after..]),
        text.clone(),
    ];
    let mut old = compile(&text);
    for new in edits {
        assert_eq!(
            path(&old, &new),
            Path::Edited,
            "{}",
            &new[at - 20..after + 20]
        );
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
    }
    assert!(old.diagnostics.is_empty());
}

#[test]
fn naming_a_step_in_a_tasks_after_checks_only_that_task() {
    // The task waits for each task of the step it names; typed letter by
    // letter after a task it already names, and taken back.
    let text = crate::generate::plan_source(300, false);
    let from = text.find("task t150 \"Do").expect("a task");
    let after = text[from..].find("{ after ").expect("an after") + from + "{ after ".len();
    let at = text[..after].rfind("task ").expect("its task");
    let index: usize = text[at + "task t".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("its number");
    let named = text[after..]
        .find(|c: char| !c.is_alphanumeric())
        .expect("a name")
        + after;
    let typed = |s: &str| format!("{}{s}{}", &text[..named], &text[named..]);
    let edits = [
        typed(", s"),
        typed(", s2"),
        typed(", s2, s3"),
        typed(", s2"),
        typed(", s"),
        text.clone(),
    ];
    let mut old = compile(&text);
    for new in edits {
        assert_eq!(path(&old, &new), Path::Edited, "{}", &new[at..after + 20]);
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
    }
    assert!(old.diagnostics.is_empty());
    // The step's tasks are among what the task waits for (the graph's
    // reduction may drop those it waits for already).
    let step = compile(&typed(", s2"));
    let plan = step.checked.plan.as_ref().expect("a plan");
    let s2 = &plan.steps.iter().find(|s| s.id == "s2").expect("s2").tasks;
    assert!(plan.dependencies.of(index).iter().any(|d| s2.contains(d)));
}

/// A new task typed letter by letter at the start of a step of `text`: each
/// text, and the path each keystroke takes.
fn type_a_new_task(text: &str, typed: &str) -> Vec<(String, Path)> {
    type_and_delete(text, 5, (typed, 0), false)
}

/// A new task typed letter by letter at the start of step `s{step}` of
/// `text`, from its first `from` bytes on (and, if `delete`, deleted
/// letter by letter back to them): each text, and the path each keystroke
/// takes, each recompile held to a fresh compile.
fn type_and_delete(
    text: &str,
    step: usize,
    (typed, from): (&str, usize),
    delete: bool,
) -> Vec<(String, Path)> {
    let anchor = format!("step s{step} \"Stage {step} of {{count}}\" {{");
    let at = text.find(&anchor).expect("the step") + anchor.len();
    let ends: Vec<usize> = (from + 1..=typed.len())
        .filter(|&end| typed.is_char_boundary(end))
        .collect();
    let back = ends.iter().rev().skip(1).copied().chain([from]);
    let ends = match delete {
        true => ends.iter().copied().chain(back).collect(),
        false => ends,
    };
    let mut old = compile(&format!("{}{}{}", &text[..at], &typed[..from], &text[at..]));
    let mut paths = Vec::new();
    for end in ends {
        let new = format!("{}{}{}", &text[..at], &typed[..end], &text[at..]);
        let taken = path(&old, &new);
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
        paths.push((typed[..end].to_owned(), taken));
    }
    paths
}

/// The paths taken, a letter each.
fn letters(paths: &[(String, Path)]) -> String {
    let letter = |path: &Path| match path {
        Path::Lone => 'L',
        Path::Unparsed => 'U',
        Path::Edited => 'E',
        Path::Renamed => 'R',
        Path::Added => 'A',
        Path::Step => 'S',
        Path::Whole => 'W',
    };
    paths.iter().map(|(_, path)| letter(path)).collect()
}

#[test]
fn a_word_typed_where_a_task_is_about_to_be_is_not_checked_again() {
    let text = crate::generate::plan_source(200, false);
    let typed = "\n        task n1 \"New\" { after t3 }";
    let paths = type_a_new_task(&text, typed);
    // One letter per keystroke: L moved with the text (white space), U only
    // what went unparsed changed (from the first letter to the title's
    // last, the task is a run of text the parser could not place; so are
    // the words of an unclosed body), E the task edited (its reference
    // begun, while the open body holds the step's `after s4`: a step
    // named), A the task added, checked from the last check
    // (`check::added`: its title's closing quote), S the step's own items
    // changed with the task, checked from the last check
    // (`check::step_items`: its body opens and closes, taking the step's
    // `after` in and giving it back).
    assert_eq!(
        letters(&paths),
        "LLLLLLLLLUUUUUUUUUUUUALSUUUUUUUEEUS",
        "{paths:?}"
    );
}

#[test]
fn a_task_body_opened_and_closed_in_a_sequential_step_is_not_checked_whole() {
    // The keystroke bench's gesture: `s10` is `sequential` and waits for
    // `s9`; the open body takes in both (a bad run and a field of the
    // task), so the step's own edges and group go and come back. Typed,
    // then deleted, letter by letter, from the task's title on (the
    // letters before it: `a_word_typed_where_a_task_is_about_to_be_...`).
    let text = crate::generate::plan_source(220, false);
    let typed = "\n        task n1 \"New\" { after t3 }";
    let from = typed.find('"').expect("a title");
    let paths = type_and_delete(&text, 10, (typed, from), true);
    assert_eq!(
        letters(&paths),
        "UUUUALSUUUUUUUEEUSSUEEUUUUUUUSLAUUUU",
        "{paths:?}"
    );
}

#[test]
fn a_word_typed_where_unparsed_text_changes_a_diagnostic_is_checked_again() {
    // A reference that names no task (its diagnostic is left out while
    // unparsed text names it), and a role nothing uses (its warning too).
    let text = crate::generate::plan_source(200, false);
    let cases = [
        (text.replacen("after t3", "after t3x", 1), "t3x"),
        (text.replace(" assignee r7", " assignee r6"), "r7"),
    ];
    for (text, word) in cases {
        let paths = type_a_new_task(&text, &format!("\n        {word}"));
        assert!(
            paths.iter().all(|(_, path)| *path != Path::Unparsed),
            "{paths:?}"
        );
    }
}

#[test]
fn a_role_or_parameter_an_edit_leaves_unused_is_reported() {
    let text = "plan p {\n    goal \"G\"\n    param who: string = \"me\"\n    role solo \"Solo\"\n    role other \"Other\"\n    task a \"A {who}\" { assignee solo }\n    task b \"B\" { after a assignee other }\n}\n";
    let edits = [
        text.replace("assignee solo", "assignee other"),
        text.to_owned(),
        text.replace("\"A {who}\"", "\"A\""),
        text.to_owned(),
        text.replace("assignee solo }", "assignee solo retry 3 }"),
    ];
    let mut old = compile(text);
    for new in edits {
        let expected = if new.contains("retry") {
            Path::Edited
        } else {
            Path::Whole
        };
        assert_eq!(path(&old, &new), expected, "{new}");
        old = old.recompile(Arc::from(new.as_str()));
        check(&old, &new);
    }
    let unused = |text: &str| {
        compile(text)
            .diagnostics
            .iter()
            .any(|d| d.code == crate::diagnostic::Code::Unused)
    };
    assert!(unused(&text.replace("assignee solo", "assignee other")));
    assert!(unused(&text.replace("\"A {who}\"", "\"A\"")));
}

/// How a recompile of the old compilation to `new` goes.
#[derive(Debug, PartialEq)]
pub(super) enum Path {
    /// Moved with the text, nothing checked again.
    Lone,
    /// What names the task's old or new name checked again.
    Renamed,
    /// The one task edited checked again.
    Edited,
    /// Only what went unparsed changed: moved with the text, the syntax
    /// errors the re-read item's.
    Unparsed,
    /// A task added to a step or taken out of it, checked from the last
    /// check (`check::added`).
    Added,
    /// A step's own `after`s or `sequential` changed, with at most one of
    /// its tasks, checked from the last check (`check::step_items`).
    Step,
    /// Checked again whole.
    Whole,
}

/// How a recompile to `new` goes when no one task of the re-read item was
/// edited: a task added or taken out, or checked whole.
fn added_path(
    old: &Compilation,
    new: &str,
    reparsed: &crate::syntax::Reparsed,
    (a, b): (&crate::syntax::ast::PlanItem, &crate::syntax::ast::PlanItem),
) -> Path {
    let edit = crate::syntax::Edit::between(&old.sources.get(old.file).text, new);
    let mut sources = old.sources.clone();
    sources.set_text(old.file, Arc::from(new));
    let modules = old.modules_with(reparsed.parsed.file.clone());
    let (modules, sources) = (&modules, &sources);
    let Some(change) = crate::syntax::step_task(a, b) else {
        let Some(change) = crate::syntax::step_items(a, b) else {
            return Path::Whole;
        };
        return match old.step_items_checked(&change, edit, reparsed.old_span, (modules, sources)) {
            Some(_) => Path::Step,
            None => Path::Whole,
        };
    };
    match old.step_task_checked(&change, edit, reparsed.old_span, (modules, sources)) {
        Some(_) => Path::Added,
        None => Path::Whole,
    }
}

pub(super) fn path(old: &Compilation, new: &str) -> Path {
    let text = &old.sources.get(old.file).text;
    let edit = crate::syntax::Edit::between(text, new);
    let Some(reread) = try_reparsed(old, new) else {
        return Path::Whole;
    };
    let Some(rename) = old.renaming(&reread) else {
        let reparsed = reparsed(old, new);
        if reparsed.text_only {
            return Path::Lone;
        }
        if reparsed.same_shape {
            let mut sources = old.sources.clone();
            sources.set_text(old.file, Arc::from(new));
            let again = Box::new(reparsed.clone());
            if old.resyntaxed(again, edit, sources).is_ok() {
                return Path::Unparsed;
            }
        }
        let items = (
            crate::syntax::item_at(old.syntax(), reparsed.place),
            crate::syntax::item_at(&reparsed.parsed.file, reparsed.place),
        );
        let (Some(a), Some(b)) = items else {
            return Path::Whole;
        };
        let Some((was, is)) = crate::syntax::edited_task(&a, &b, edit) else {
            return added_path(old, new, &reparsed, (&a, &b));
        };
        let mut sources = old.sources.clone();
        sources.set_text(old.file, Arc::from(new));
        let task = crate::check::edited::EditedTask {
            old: &was,
            new: &is,
        };
        let modules = old.modules_with(reparsed.parsed.file.clone());
        return match old.edited(&task, edit, (&modules, &sources)) {
            Some(_) => Path::Edited,
            None => Path::Whole,
        };
    };
    if !rename.seen {
        return Path::Lone;
    }
    let mut sources = old.sources.clone();
    sources.set_text(old.file, Arc::from(new));
    match old.rename_checked(Box::new(reparsed(old, new)), edit, sources, &rename) {
        Ok(_) => Path::Renamed,
        Err(_) => Path::Whole,
    }
}
