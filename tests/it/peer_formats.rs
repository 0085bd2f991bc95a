//! OpenManus and Codex keep their own meaning (docs/interop.md): the
//! OpenManus `[AGENT]` step tag is the assignee both ways, Codex's "at most
//! one step in progress" is checked, and a status list names each once.

use crate::support::{temp_dir, Test};
use serde_json::Value;

const PLAN: &str = "plan shop {\n    goal \"Buy a keyboard\"\n    role browser\n    role data_analysis\n    role Writer\n    task open \"Open the site\" { assignee browser }\n    task compare \"Compare prices\" { assignee data_analysis }\n    task report \"Write it up\" { assignee Writer }\n    task done \"Say done\"\n}\n";

#[test]
fn the_openmanus_agent_tag_carries_the_assignee_both_ways() {
    let dir = temp_dir("peer-openmanus");
    let plan = dir.path().join("shop.plan");
    std::fs::write(&plan, PLAN).expect("write");
    let built = Test::new([
        "build",
        plan.to_str().expect("utf-8"),
        "--target",
        "openmanus",
    ])
    .expect_code(0);
    let mut export: Value = serde_json::from_str(&built.stdout).expect("JSON");
    assert_eq!(
        export["steps"],
        serde_json::json!([
            "[BROWSER] Open the site",
            "[DATA_ANALYSIS] Compare prices",
            "Write it up",
            "Say done"
        ])
    );
    // An assignee OpenManus cannot spell as a tag stays in the planc object.
    assert_eq!(export["planc"]["tasks"][2]["assignee"], "Writer");
    assert_eq!(export["planc"]["tasks"][0].get("assignee"), None);

    // As OpenManus itself writes it: no planc objects.
    export.as_object_mut().expect("object").remove("planc");
    let bare = dir.path().join("bare.json");
    std::fs::write(&bare, export.to_string()).expect("write");
    let state = dir.path().join("state.json");
    let state = state.to_str().expect("utf-8");
    Test::new(["run", "init", bare.to_str().expect("utf-8"), "-o", state]).expect_code(0);
    let loaded: Value =
        serde_json::from_str(&std::fs::read_to_string(state).expect("read")).expect("JSON");
    let tasks: Vec<(&Value, &Value)> = loaded["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (&t["name"], &t["assignee"]))
        .collect();
    assert_eq!(
        tasks,
        [
            (&"Open the site".into(), &"browser".into()),
            (&"Compare prices".into(), &"data_analysis".into()),
            (&"Write it up".into(), &Value::Null),
            (&"Say done".into(), &Value::Null),
        ]
    );
    let next = Test::new(["run", "next", state, "--assignee", "browser", "--json"]).expect_code(0);
    let next: Value = serde_json::from_str(&next.stdout).expect("JSON");
    assert_eq!(next["data"]["task"]["name"], "Open the site");
}

#[test]
fn two_codex_steps_in_progress_are_a_warning_and_status_lists_name_each_once() {
    let dir = temp_dir("peer-codex");
    let file = dir.path().join("update_plan.json");
    std::fs::write(
        &file,
        r#"{"explanation": "e", "plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}"#,
    )
    .expect("write");
    let file = file.to_str().expect("utf-8");
    let checked = Test::new(["check", file, "--color", "never"]).expect_code(0);
    assert!(
        checked
            .stdout
            .contains("⚠ a second step is `in_progress`: Codex keeps at most one")
            && checked.stdout.contains("1 warning"),
        "{}",
        checked.stdout
    );
    Test::new(["check", file, "--deny", "warnings"]).expect_code(1);

    for (text, statuses) in [
        (
            r#"{"plan": [{"step": "a", "status": "doing"}]}"#,
            "here a status is one of `pending`, `in_progress`, `completed`",
        ),
        (
            r#"{"tasks": [{"id": 1, "title": "a", "description": "a", "status": "doing", "dependencies": []}]}"#,
            "here a status is one of `pending`, `in-progress`, `done`, `cancelled`, `blocked`, `review`, `deferred`",
        ),
        (
            r#"{"goal": "g", "steps": [{"id": "step_1", "description": "a", "status": "doing"}]}"#,
            "here a status is one of `pending`, `running`, `completed`, `failed`",
        ),
    ] {
        std::fs::write(file, text).expect("write");
        let checked = Test::new(["check", file, "--format", "json"]).expect_code(1);
        let diagnostics: Value = serde_json::from_str(&checked.stdout).expect("JSON");
        assert_eq!(diagnostics[0]["help"], statuses, "{diagnostics}");
    }
}
