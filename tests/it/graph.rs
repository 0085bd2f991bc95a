//! `planc graph`: Mermaid and DOT pictures of plans and of runner states.

use crate::support::Test;

#[test]
fn draws_examples_as_mermaid_and_dot() {
    for format in ["mermaid", "dot"] {
        let output =
            Test::new(["graph", "examples/jd_keyboard.plan", "--format", format]).expect_code(0);
        insta::assert_snapshot!(format!("jd_keyboard.{format}"), output.stdout);
    }
    let output = Test::new([
        "graph",
        "examples/research_report.plan",
        "--set",
        "topic=RAG",
    ])
    .expect_code(0);
    insta::assert_snapshot!("research_report.mermaid", output.stdout);
}

#[test]
fn a_state_is_coloured_by_status() {
    let state = r#"{"meta": {"goal": "g"}, "tasks": [
        {"id": 1, "name": "Open", "status": "completed", "dependencies": []},
        {"id": 2, "name": "Search \"fast\"", "status": "in_progress", "dependencies": [1]},
        {"id": 3, "name": "Buy", "status": "failed", "dependencies": [2], "optional": true},
        {"id": 4, "name": "Pay", "status": "skipped", "dependencies": [2]},
        {"id": 5, "name": "Ship", "status": "pending", "dependencies": [3, 4]}]}"#;
    let output = Test::new(["graph", "-"]).stdin(state).expect_code(0);
    for line in [
        "    class t1 completed\n",
        "    class t2 in_progress\n",
        "    class t3 failed\n",
        "    class t4 skipped\n",
        "    class t5 pending\n",
        "    t2[\"#2: Search #quot;fast#quot;\"]\n",
        "    t3[\"#3: Buy<br/>optional\"]\n",
    ] {
        assert!(
            output.stdout.contains(line),
            "missing {line:?} in\n{}",
            output.stdout
        );
    }
    let output = Test::new(["graph", "-", "--format", "dot"])
        .stdin(state)
        .expect_code(0);
    assert!(
        output
            .stdout
            .contains("t2 [label=\"#2: Search \\\"fast\\\"\", fillcolor=\"#fff3cd\""),
        "{}",
        output.stdout
    );
}

#[test]
fn a_plan_with_errors_draws_nothing() {
    let output = Test::new(["graph", "examples/errors/cycle.plan"]).expect_code(1);
    assert_eq!(output.stdout, "");
    assert!(output.stderr.contains("planc::cycle"));
}
