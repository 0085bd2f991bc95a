//! `planc fmt`: canonical, idempotent, comment-preserving, and never changes
//! the compiled plan; checked on every example and on generated plans.

use crate::support::{self, files, temp_dir, Test};
use proptest::prelude::*;

fn build(name: &str, text: &str) -> Option<String> {
    let compiled = planc::compile(name, text, &Default::default());
    compiled.document().map(|d| d.to_json())
}

#[test]
fn examples_are_formatted() {
    let mut args = vec!["fmt".to_owned(), "--check".to_owned()];
    args.extend(files("examples", &["plan"]));
    args.extend(files("examples/lib", &["plan"]));
    let output = Test::new(&args).expect_code(0);
    assert_eq!(output.stdout, "");
}

#[test]
fn formatting_examples_is_idempotent_and_keeps_the_plan() {
    for path in files("examples", &["plan"])
        .into_iter()
        .chain(files("examples/lib", &["plan"]))
    {
        let text = std::fs::read_to_string(support::root().join(&path)).expect("read");
        let once = planc::fmt::format(&text).expect("examples parse");
        let twice = planc::fmt::format(&once).expect("formatted text parses");
        assert_eq!(once, twice, "{path}: idempotent");
        assert_eq!(
            build(&path, &text),
            build(&path, &once),
            "{path}: same plan"
        );
        // Every comment survives.
        let comments = |t: &str| {
            t.lines()
                .filter_map(|l| l.find('#').map(|i| l[i..].trim_end().to_owned()))
                .collect::<Vec<_>>()
        };
        assert_eq!(comments(&text), comments(&once), "{path}: comments kept");
    }
}

#[test]
fn check_prints_a_diff_and_fails() {
    let dir = temp_dir("fmt");
    let path = dir.path().join("messy.plan");
    std::fs::write(
        &path,
        "plan p {goal \"g\"\ntask a \"A\" {after b}\ntask b \"B\"}\n",
    )
    .expect("write");
    let path = path.to_str().expect("utf-8 path");
    let output = Test::new(["fmt", "--check", path]).expect_code(1);
    assert!(
        output.stdout.contains("-plan p {goal \"g\"\n"),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains("+    task a \"A\" { after b }\n"),
        "{}",
        output.stdout
    );
    // Without --check the file is rewritten, and then it is formatted.
    Test::new(["fmt", path]).expect_code(0);
    Test::new(["fmt", "--check", path]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(path).expect("read"),
        "plan p {\n    goal \"g\"\n    task a \"A\" { after b }\n    task b \"B\"\n}\n"
    );
}

#[test]
fn check_of_fifty_thousand_changed_lines_shows_the_first_thousand_and_counts_the_rest() {
    // Every task line re-indented: the diff once took seconds (quadratic).
    let mut text = String::from("plan p {\ngoal \"g\"\n");
    for i in 0..50_000 {
        text.push_str(&format!("task t{i} \"x\"\n"));
    }
    text.push_str("}\n");
    let t = Test::temp().file("big.plan", &text);
    let output = t.planc(&["fmt", "--check", "big.plan"]);
    assert_eq!(output.code, 1, "{}", output.stderr);
    let lines: Vec<&str> = output.stdout.lines().collect();
    // Header, hunk header, `plan p {`, then 1,000 lines out and 1,000 in.
    assert_eq!(
        lines.len(),
        2 + 1 + 1 + 2_000 + 1,
        "{}",
        &output.stdout[..300]
    );
    assert_eq!(
        lines[..4],
        [
            "--- big.plan",
            "+++ big.plan (formatted)",
            "@@ -1,1001 +1,1001 @@",
            " plan p {"
        ]
    );
    assert!(lines.contains(&"-task t998 \"x\""));
    assert!(lines.contains(&"+    task t998 \"x\""));
    assert!(!lines.contains(&"-task t999 \"x\""));
    assert_eq!(
        lines.last(),
        Some(&"… 49001 more lines differ after line 1001 (the diff stops after 1000 changed lines; `planc fmt` formats them all)")
    );
}

#[test]
fn files_with_syntax_errors_are_left_alone() {
    let output = Test::new(["fmt", "-"])
        .stdin("plan p { task }")
        .expect_code(1);
    assert!(
        output
            .stderr
            .contains("not formatted: fix the syntax errors first"),
        "{}",
        output.stderr
    );
    assert_eq!(output.stdout, "");
}

/// Whitespace a person might type between two tokens.
fn gap() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(" ".to_owned()),
        Just("  ".to_owned()),
        Just("\n".to_owned()),
        Just("\n\n   ".to_owned()),
        Just("\t".to_owned()),
        Just(" # note\n".to_owned()),
    ]
}

/// A random plan: tasks in and out of steps, every field, random layout.
fn plan_source() -> impl Strategy<Value = String> {
    let task = (
        0..4usize,
        prop::collection::vec((0..6usize, gap()), 0..4),
        gap(),
    );
    (
        prop::collection::vec(
            (
                any::<bool>(),
                prop::collection::vec(task, 1..4),
                any::<bool>(),
            ),
            1..4,
        ),
        gap(),
    )
        .prop_map(|(groups, g)| {
            let mut out =
                format!("plan p {{{g}goal \"Do {{x}}\"{g}param x: int = 3{g}role r \"R\"{g}");
            let mut n = 0;
            for (si, (in_step, tasks, sequential)) in groups.into_iter().enumerate() {
                if in_step {
                    out.push_str(&format!("step s{si} \"S\" {{{g}"));
                    if sequential {
                        out.push_str(&format!("sequential{g}"));
                    }
                }
                for (prev, fields, tg) in tasks {
                    out.push_str(&format!("task t{n} \"T {{x}}\""));
                    if !fields.is_empty() {
                        out.push_str(&format!("{tg}{{"));
                        let mut seen = std::collections::HashSet::new();
                        for (field, fg) in fields {
                            if !seen.insert(field) {
                                continue;
                            }
                            let text = match field {
                                0 if n > 0 => format!("after t{}", n - 1 - prev.min(n - 1)),
                                0 => "optional".to_owned(),
                                1 => "assignee r".to_owned(),
                                2 => "reasoning \"because {x}\"".to_owned(),
                                3 => "description \"\"\"\n      line\n        more\n   \"\"\""
                                    .to_owned(),
                                4 => "retry 2".to_owned(),
                                _ => "optional".to_owned(),
                            };
                            out.push_str(&format!("{fg}{text}"));
                        }
                        out.push_str(&format!("{tg}}}"));
                    }
                    out.push_str(&tg);
                    n += 1;
                }
                if in_step {
                    out.push_str(&format!("}}{g}"));
                }
            }
            out.push_str("}\n");
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn formatting_generated_plans_is_idempotent_and_keeps_the_plan(source in plan_source()) {
        let once = planc::fmt::format(&source).map_err(|d| TestCaseError::fail(format!("{d:#?}\n{source}")))?;
        let twice = planc::fmt::format(&once).map_err(|d| TestCaseError::fail(format!("{d:#?}\n{once}")))?;
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(build("p.plan", &source), build("p.plan", &once));
        prop_assert_eq!(source.matches("# note").count(), once.matches("# note").count());
    }
}
