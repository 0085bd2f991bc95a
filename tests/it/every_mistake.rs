//! A syntax error hides only what could echo it: the references, cycles,
//! types and roles of what did parse are reported beside it, and a name the
//! unparsed text mentions is not called unknown or unused.

use crate::support::Test;

/// `planc check -` of `text`, as people read it.
fn check(text: &str) -> String {
    Test::new(["check", "-"]).stdin(text).expect_code(1).stdout
}

#[test]
fn a_syntax_error_hides_no_unknown_reference_cycle_or_type_error() {
    // `task 42` does not parse; `outline`, named only in it, may be declared
    // there, so `tidy`'s `after outline` is not called unknown, and `editor`,
    // assigned only there, is not called unused. Everything else is shown.
    let stderr = check(
        r#"plan mixed {
    goal "Every mistake at once"
    role writer "Writes"
    role editor "Edits"
    param rounds: int = "three"

    task draft "Draft {rounds}" { assignee writer }
    task review "Review" {
        after draft, proofread
        assignee writr
    }
    task publish "Publish" { after polish }
    task polish "Polish" { after publish }
    task 42 "a task with a number for a name" { after outline assignee editor }
    task tidy "Tidy" { after outline }
}
"#,
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_missing_goal_or_empty_body_is_reported_only_where_no_text_was_lost() {
    // The plan body has a bad line: its goal may be there. The step `empty`
    // has nothing unparsed in it and is reported; `lost` has a bad line.
    let stderr = check(
        r#"plan p {
    step empty { }
    step lost { task = "?" }
    task a "A" { after b }
    gaol "misspelt"
}
"#,
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn errors_inside_templates_are_reported_beside_a_syntax_error() {
    let stderr = check(
        r#"template review(change: string, approvals: int = 2) {
    task open "Open {change} {aprovals}"
    task merge "Merge" { after open, approve }
}

plan p {
    goal "Ship"
    use review(change = "x", approvals = "two") as r
    use reveiw(change = "y") as s
    task done "Done" { after r }
    task ??? "broken"
}
"#,
    );
    insta::assert_snapshot!(stderr);
}

#[test]
fn nested_templates_are_refused_before_they_are_expanded() {
    // Ten levels, each using the one below five times: about two million
    // tasks from under a kilobyte. The `use` that would cross the limit is
    // named, and nothing is expanded.
    let mut text = String::from("template t0() { task a \"A\" }\n");
    for level in 1..10 {
        let below = level - 1;
        let uses: Vec<String> = (0..5).map(|k| format!("use t{below}() as u{k}")).collect();
        text.push_str(&format!("template t{level}() {{ {} }}\n", uses.join(" ")));
    }
    text.push_str("plan p {\n    goal \"g\"\n    task first \"First\"\n    use t9() as top { after first }\n    use t2() as small\n}\n");
    let stderr = check(&text);
    insta::assert_snapshot!(stderr);
}
