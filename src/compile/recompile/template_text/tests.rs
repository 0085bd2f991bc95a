//! A template's text edited, recompiled, against a fresh compile of the
//! same text; and that the random edits do take the template's path
//! (counted).

use std::cell::Cell;
use std::sync::Arc;

use proptest::test_runner::{Config, TestRunner};

use crate::compile::recompile::tests::{check, same_as_fresh, SNIPPETS};
use crate::compile::{compile_shared, Compilation};
use crate::diagnostic::Code;
use crate::generate::edits::Splice;

thread_local! {
    /// How many recompiles took the template's path on this thread.
    pub(super) static TEMPLATE_EDITS: Cell<usize> = const { Cell::new(0) };
}

fn compile(text: &str) -> Compilation {
    let name = "/nonexistent/planc-tests/templates.plan";
    compile_shared(name, Arc::from(text), &Default::default())
}

fn template_edits() -> usize {
    TEMPLATE_EDITS.with(Cell::get)
}

/// Templates used several times (their strings with parameters, defaults,
/// a plan parameter flowing in), one used inside another, one not used.
const TEMPLATES: &str = "template review(change: string, approvals: int = 2) {
    role reviewer \"Reviews\"
    step review \"Review {change}\" {
        sequential
        task open_pr \"Open a pull request for {change}\" { assignee reviewer }
        task approve \"Get {approvals} approvals for {change}\" { assignee reviewer reasoning \"Two eyes on {change}\" }
        task merge \"Merge {change}\" { description \"Merge {change} when {approvals} agree\" }
    }
    task announce \"Tell everyone about {change} {missing}\"
}
template outer(what: string) {
    task prepare \"Prepare {what}\"
    use review(change = \"{what} again\") as inner
}
template unused(x: int) {
    task lone \"Lone {x}\"
}
plan p {
    goal \"Ship {n}\"
    param n: int = 3
    role dev
    task first \"First\" { assignee dev }
    use review(change = \"part {n}\") as a { after first }
    use review(change = \"part two\", approvals = 5) as b
    use outer(what = \"all\") as o
    task last \"Last\" { after a, b.merge }
}
";

/// Where a string's text stands inside the templates (before `plan p`).
fn template_string_places(text: &str) -> Vec<usize> {
    let end = text.find("plan p").unwrap_or(text.len());
    let mut places = Vec::new();
    let (mut inside, mut braced) = (false, false);
    for (at, c) in text[..end].char_indices() {
        match c {
            '"' => inside = !inside,
            '{' | '}' => braced = c == '{',
            // Letters outside `{param}`s only: the others are names.
            _ if inside && !braced && c.is_ascii_alphabetic() => places.push(at),
            _ => {}
        }
    }
    places
}

/// A letter typed in a template's task title, then taken back: every
/// instance's title changes, nothing is checked again.
#[test]
fn a_letter_in_a_template_title_retitles_every_instance() {
    let old = compile(TEMPLATES);
    let at = TEMPLATES.find("task approve \"Get").expect("the task") + "task approve \"Get".len();
    let new = format!("{}x{}", &TEMPLATES[..at], &TEMPLATES[at..]);
    let before = template_edits();
    let typed = old.recompile(Arc::from(new.as_str()));
    check(&typed, &new);
    assert_eq!(template_edits(), before + 1, "took the template's path");
    let plan = typed.checked.plan.as_ref().expect("a plan");
    let titles: Vec<&str> = plan
        .tasks
        .iter()
        .filter(|t| t.key().ends_with("approve"))
        .map(|t| t.name())
        .collect();
    assert_eq!(
        titles,
        [
            "Getx 2 approvals for part 3",
            "Getx 5 approvals for part two",
            "Getx 2 approvals for all again"
        ]
    );
    let back = typed.recompile(Arc::from(TEMPLATES));
    check(&back, TEMPLATES);
    assert_eq!(template_edits(), before + 2);

    // In a template another uses: its instances' tasks are not a run of
    // their own, so it is checked whole (and the same).
    let at = TEMPLATES.find("Prepare").expect("prepare") + 3;
    let new = format!("{}x{}", &TEMPLATES[..at], &TEMPLATES[at..]);
    let recompiled = compile(TEMPLATES).recompile(Arc::from(new.as_str()));
    check(&recompiled, &new);
    assert_eq!(template_edits(), before + 2);
}

/// Random edits (names, references, syntax errors), then letters typed
/// into and deleted from the templates' strings, each recompile against a
/// fresh compile; most take the template's path.
#[test]
fn a_template_text_edit_recompiled_equals_a_fresh_compile() {
    let mut runner = TestRunner::new(Config {
        cases: crate::generate::fuzz_cases(48),
        failure_persistence: None,
        ..Config::default()
    });
    let edits = proptest::collection::vec((0.0..1.0f64, 0..16usize, 0..SNIPPETS.len() + 1), 0..2);
    let keys = proptest::collection::vec((0.0..1.0f64, proptest::bool::ANY), 1..10);
    let (before, tried) = (template_edits(), Cell::new(0));
    let outcome = runner.run(&(edits, keys), |(edits, keys)| {
        let mut text = TEMPLATES.to_owned();
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
        for (pick, delete) in keys {
            let places = template_string_places(&text);
            let Some(&at) = places.get((pick * places.len() as f64) as usize) else {
                break;
            };
            text = match delete {
                true => format!("{}{}", &text[..at], &text[at + 1..]),
                false => format!("{}y{}", &text[..at], &text[at..]),
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
    let taken = template_edits() - before;
    assert!(
        taken * 2 >= tried.get(),
        "{taken} of {} edits without syntax errors took the template's path",
        tried.get()
    );
}

/// Reads `lib.plan` as [`crate::generate::REUSE_LIBRARY`].
struct Library;

impl crate::modules::Loader for Library {
    fn load(&self, located: &std::path::Path) -> Result<String, crate::modules::ImportError> {
        assert!(located.ends_with("lib.plan"), "{}", located.display());
        Ok(crate::generate::REUSE_LIBRARY.to_owned())
    }
}

/// The benchmark's keystroke: a letter in the title of a task of the
/// template of `plan_source_with_reuse`, typed and taken back.
#[test]
fn the_benchmarks_template_title_letter_is_not_checked_again() {
    let text = crate::generate::plan_source_with_reuse(2_000);
    let options = Default::default();
    let old = crate::compile::compile_with("gen.plan", &text, &options, &Library);
    assert_eq!(old.diagnostics, Vec::new());
    let after = "task approve \"Get";
    let at = text.find(after).expect("the task") + after.len();
    let new = format!("{}x{}", &text[..at], &text[at..]);
    let before = template_edits();
    let typed = old.recompile_with(Arc::from(new.as_str()), &Library);
    let back = typed.recompile_with(Arc::from(text.as_str()), &Library);
    assert_eq!(template_edits(), before + 2);
    // Only the chunks that hold what the edit reaches into are copied: an
    // instance's spans in the template before the edit or after it and
    // the plan's part the others cleanly (`ir::Shifted::moved`).
    let copied = |old: &Compilation, new: &Compilation| {
        let (was, now) = (&old.checked.symbols, &new.checked.symbols);
        let definitions =
            now.definitions.chunks() - now.definitions.chunks_shared_with(&was.definitions);
        let references =
            now.references.chunks() - now.references.chunks_shared_with(&was.references);
        (definitions, references, now.references.chunks())
    };
    // 3 of the definitions' 266 chunks (the template's, its step's and
    // its task's spans hold the edit) and none of the references' 701
    // (chunks of 8 in tests), typed or taken back; before, nearly all.
    for (was, now) in [(&old, &typed), (&typed, &back)] {
        let (definitions, references, all) = copied(was, now);
        assert!(
            definitions <= 4 && references <= 2,
            "{definitions}, {references} of {all}"
        );
    }
    let fresh = crate::compile::compile_with("gen.plan", &new, &options, &Library);
    assert_eq!(typed.checked.plan, fresh.checked.plan);
    assert_eq!(back.checked.plan, old.checked.plan);
}
