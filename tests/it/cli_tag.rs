//! `--tag NAME` picks one tag of a tagged task-master `tasks.json`, for every
//! command that loads a plan: `check`, `build`, `graph` and `run init`.

use crate::support::Test;

/// Two tags; only `feature-x` has a mistake (task 3 waits for a task 7).
const TASKS: &str = r#"{
  "master": {
    "tasks": [
      { "id": 1, "title": "Write the parser", "description": "Parse it", "status": "done", "dependencies": [] },
      { "id": 2, "title": "Write the checker", "description": "Check it", "status": "pending", "dependencies": [1] }
    ],
    "metadata": { "description": "The main line" }
  },
  "feature-x": {
    "tasks": [
      { "id": 1, "title": "Design the export", "description": "Sketch it", "status": "in-progress", "dependencies": [] },
      { "id": 2, "title": "Export to Codex", "description": "Write it", "status": "pending", "dependencies": [1] },
      { "id": 3, "title": "Test the export", "description": "Prove it", "status": "pending", "dependencies": [2, 7] }
    ],
    "metadata": { "description": "Exports" }
  }
}
"#;

/// A directory holding `tasks.json` (with `feature-x` fixed when `fixed`).
fn tasks_file(fixed: bool) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("tasks.json");
    let text = if fixed {
        TASKS.replace("[2, 7]", "[2]")
    } else {
        TASKS.to_owned()
    };
    std::fs::write(&path, text).expect("write tasks.json");
    let path = path.to_str().expect("a UTF-8 path").to_owned();
    (dir, path)
}

#[test]
fn check_reads_master_unless_told_another_tag() {
    let (_dir, path) = tasks_file(false);
    let master = Test::new(["check", &path, "--color", "never"]).expect_code(0);
    assert_eq!(master.stdout, format!("{path}: ok, 2 tasks\n"));

    let feature =
        Test::new(["check", &path, "--tag", "feature-x", "--color", "never"]).expect_code(1);
    assert!(
        feature.stdout.contains("planc::unknown_ref")
            && feature.stdout.contains("no task has the id 7"),
        "{}",
        feature.stdout
    );
    assert!(
        feature.stdout.ends_with(&format!("{path}: 1 error\n")),
        "{}",
        feature.stdout
    );
}

#[test]
fn an_unknown_tag_names_the_tags_the_file_has() {
    let (_dir, path) = tasks_file(true);
    let output = Test::new(["check", &path, "--tag", "nope", "--color", "never"]).expect_code(1);
    assert!(
        output
            .stdout
            .contains("× the task-master file has no tag `nope`"),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains("its tags are `master`, `feature-x`"),
        "{}",
        output.stdout
    );
    // The same for every command that loads a plan.
    Test::new(["graph", &path, "--tag", "nope", "--color", "never"]).expect_code(1);
    Test::new(["build", &path, "--tag", "nope", "--color", "never"]).expect_code(1);
}

#[test]
fn build_graph_and_run_init_take_the_tag() {
    let (dir, path) = tasks_file(true);

    let built = Test::new(["build", &path, "--tag", "feature-x"]).expect_code(0);
    let document: serde_json::Value = serde_json::from_str(&built.stdout).expect("JSON");
    assert_eq!(document["meta"]["id"], "feature-x");
    assert_eq!(document["meta"]["goal"], "Exports");
    let names: Vec<&str> = document["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        ["Design the export", "Export to Codex", "Test the export"]
    );

    let graph = Test::new(["graph", &path, "--tag", "feature-x"]).expect_code(0);
    assert!(
        graph.stdout.starts_with(
            "flowchart TD\n    t1[\"#1: Design the export\"]\n    t2[\"#2: Export to Codex\"]\n    t3[\"#3: Test the export\"]\n    t1 --> t2\n    t2 --> t3\n"
        ),
        "{}",
        graph.stdout
    );

    let state = dir.path().join("state.json");
    let state = state.to_str().expect("a UTF-8 path");
    let init = Test::new(["run", "init", &path, "--tag", "feature-x", "-o", state]).expect_code(0);
    assert!(
        init.stdout.contains("plan `feature-x`, 3 task(s)"),
        "{}",
        init.stdout
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state).expect("the state")).expect("JSON");
    assert_eq!(written["tasks"][0]["status"], "in_progress");

    // Without --tag, the same file gives the master tag's plan.
    let master = Test::new(["build", &path]).expect_code(0);
    let master: serde_json::Value = serde_json::from_str(&master.stdout).expect("JSON");
    assert_eq!(master["meta"]["id"], "master");
    assert_eq!(master["tasks"].as_array().map(Vec::len), Some(2));
}

#[test]
fn build_writes_a_taskmaster_export_under_the_tag() {
    let (_dir, path) = tasks_file(true);
    let built = Test::new([
        "build",
        &path,
        "--tag",
        "feature-x",
        "--target",
        "taskmaster",
    ])
    .expect_code(0);
    let export: serde_json::Value = serde_json::from_str(&built.stdout).expect("JSON");
    let tags: Vec<&String> = export.as_object().expect("an object").keys().collect();
    assert_eq!(tags, ["feature-x"]);
    assert_eq!(
        export["feature-x"]["tasks"].as_array().map(Vec::len),
        Some(3)
    );
}
