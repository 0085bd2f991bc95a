//! A large plan is checked with the graph on a second thread: the result must
//! be the one a single thread gives, diagnostics, plan and symbols alike.

use super::{ONE_THREAD, PARALLEL_TASKS};
use crate::check::Options;
use crate::diagnostic::Code;
use crate::{compile, Compilation};

/// A generated plan past the threshold, with a mistake of every kind the
/// lowering reports and a template instance.
fn plan_with_mistakes(cycle: bool) -> String {
    let mut text = crate::generate::plan_source(PARALLEL_TASKS + 500, cycle);
    // An unknown parameter and an unknown role, in the middle of the plan.
    text = text.replacen(
        "\"Do part 3000 for {team}\"",
        "\"Do part 3000 for {teem}\"",
        1,
    );
    text = text.replacen(
        "task t3001 \"Do part 3001 for {team}\" { ",
        "task t3001 \"Do part 3001 for {team}\" { assignee r99 ",
        1,
    );
    let end = text.rfind('}').expect("the plan closes");
    text.insert_str(
        end,
        r#"    step extra "Extra" {
        task x1 "First"
        task x2 "Second" { after x1 }
        task x3 "Third" { after x2, x1, nowhere retry 2000 retry 1 }
        task x4 "Fourth" { after x4 reasoning "Waits for {count}" }
    }
    use review(subject = "the plan") as rv { after extra }
}

template review(subject: string) {
    task read "Read {subject}"
    task sign "Sign {subject} off" { after read description "For {subject}" }
"#,
    );
    text
}

fn compile_on(text: &str, one_thread: bool) -> Compilation {
    ONE_THREAD.set(one_thread);
    let compilation = compile("big.plan", text, &Options::default());
    ONE_THREAD.set(false);
    compilation
}

/// What `planc build` asks for: no references recorded.
fn without_references(text: &str) -> Compilation {
    let options = Options {
        skip_references: true,
        ..Options::default()
    };
    compile("big.plan", text, &options)
}

/// What `planc check` asks for: no references, and no plan kept.
fn diagnostics_only(text: &str) -> Compilation {
    let options = Options {
        skip_references: true,
        skip_plan: true,
        ..Options::default()
    };
    compile("big.plan", text, &options)
}

#[test]
fn a_large_plan_checks_the_same_on_two_threads_as_on_one() {
    for cycle in [false, true] {
        let text = plan_with_mistakes(cycle);
        let two = compile_on(&text, false);
        let one = compile_on(&text, true);
        let codes: Vec<Code> = two.diagnostics.iter().map(|d| d.code).collect();
        for code in [
            Code::UnknownParam,
            Code::UnknownRole,
            Code::UnknownRef,
            Code::SelfDependency,
            Code::InvalidValue,
            Code::DuplicateField,
        ] {
            assert!(codes.contains(&code), "no {code:?} in {codes:?}");
        }
        // Redundant dependencies are looked for only in a graph without cycles.
        assert_eq!(codes.contains(&Code::Cycle), cycle);
        assert_eq!(codes.contains(&Code::RedundantDependency), !cycle);
        assert_eq!(two.diagnostics, one.diagnostics);
        assert_eq!(two.checked.plan, one.checked.plan);
        assert_eq!(
            two.checked.symbols.definitions,
            one.checked.symbols.definitions
        );
        let sorted = |c: &Compilation| {
            let mut refs: Vec<_> = c
                .checked
                .symbols
                .references
                .iter()
                .map(|r| (r.file, r.span.start(), r.span.end(), r.definition))
                .collect();
            refs.sort_unstable();
            refs
        };
        assert_eq!(sorted(&two), sorted(&one));
        // Without references (and on two threads), the same findings.
        let bare = without_references(&text);
        assert_eq!(bare.diagnostics, one.diagnostics);
        assert_eq!(bare.checked.plan, one.checked.plan);
        assert!(bare.checked.symbols.references.is_empty());
        let plan = two.checked.plan.as_ref().expect("a plan");
        assert_eq!(plan.tasks.len(), PARALLEL_TASKS + 500 + 4 + 2);
        assert_eq!(two.checked.task_count, Some(plan.tasks.len()));
        // Without the plan kept, the same findings and the same count.
        let checked = diagnostics_only(&text);
        assert_eq!(checked.diagnostics, one.diagnostics);
        assert_eq!(checked.checked.plan, None);
        assert_eq!(checked.checked.task_count, Some(plan.tasks.len()));
    }
}

#[test]
fn skipping_references_or_the_plan_changes_no_finding_in_any_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("errors")] {
        for entry in std::fs::read_dir(dir).expect("examples are there") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "plan") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 20, "{files:?}");
    let mut unused = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let name = path.to_string_lossy();
        let full = crate::compile(&name, text.as_str(), &Options::default());
        let options = Options {
            skip_references: true,
            ..Options::default()
        };
        let bare = crate::compile(&name, text.as_str(), &options);
        assert_eq!(bare.diagnostics, full.diagnostics, "{name}");
        assert_eq!(bare.checked.plan, full.checked.plan, "{name}");
        let options = Options {
            skip_plan: true,
            ..options
        };
        let checked = crate::compile(&name, text.as_str(), &options);
        assert_eq!(checked.diagnostics, full.diagnostics, "{name}");
        assert_eq!(checked.checked.plan, None, "{name}");
        let count = full.checked.plan.as_ref().map(|p| p.tasks.len());
        assert_eq!(checked.checked.task_count, count, "{name}");
        unused += full
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::Unused)
            .count();
    }
    // The examples exercise what references decide: unused roles and parameters.
    assert!(unused > 0);
}
