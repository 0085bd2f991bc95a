//! task-master without data loss (docs/interop.md, "task-master"): a tag
//! written into an existing `tasks.json` keeps the others, task-master's
//! statuses keep their meaning in the runner, and what planc writes is what
//! the real task-master CLI (`PLANC_TASKMASTER`) reads.

use std::path::Path;

use crate::support::{temp_dir, Test};
use serde_json::{json, Value};

/// A task-master project: `master` and `feature-x`, with their metadata.
const TWO_TAGS: &str = r#"{
  "master": {
    "tasks": [
      { "id": 1, "title": "Write the parser", "description": "Parse it", "status": "done", "dependencies": [], "priority": "high", "details": "", "testStrategy": "" }
    ],
    "metadata": { "created": "2025-01-02T03:04:05.000Z", "updated": "2025-01-03T03:04:05.000Z", "description": "Tasks for master context" }
  },
  "feature-x": {
    "tasks": [
      { "id": 1, "title": "Design the export", "description": "Sketch it", "status": "in-progress", "dependencies": [], "priority": "medium", "details": "", "testStrategy": "" }
    ],
    "metadata": { "created": "2025-02-01T00:00:00.000Z", "updated": "2025-02-02T00:00:00.000Z", "description": "Exports" }
  }
}
"#;

/// `.taskmaster/tasks/tasks.json` in a new project directory, holding `text`.
fn project(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = temp_dir(name);
    let tasks = dir.path().join(".taskmaster/tasks");
    std::fs::create_dir_all(&tasks).expect("mkdir");
    let tasks = tasks.join("tasks.json");
    std::fs::write(&tasks, text).expect("write tasks.json");
    let tasks = tasks.to_str().expect("utf-8").to_owned();
    (dir, tasks)
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

/// The real task-master CLI run in `dir`, when `PLANC_TASKMASTER` names it
/// (`.ci/run` installs the npm package `task-master-ai`): its output.
fn taskmaster(dir: &Path, args: &[&str]) -> Option<String> {
    let command = std::env::var_os("PLANC_TASKMASTER")?;
    let output = std::process::Command::new(command)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("task-master runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "task-master {args:?}: {text}");
    Some(text)
}

fn skipped() {
    eprintln!(
        "the task-master CLI part is skipped: set PLANC_TASKMASTER to the task-master command (npm package task-master-ai; .ci/run does)"
    );
}

#[test]
fn a_tag_written_into_a_tasks_file_keeps_the_other_tags_and_their_metadata() {
    let (dir, tasks) = project("taskmaster-tags", TWO_TAGS);
    let plan = dir.path().join("y.plan");
    std::fs::write(
        &plan,
        "plan fy {\n    goal \"Ship feature y\"\n    task a \"Do A\" { priority high }\n    task b \"Do B\" { after a }\n}\n",
    )
    .expect("write");
    let plan = plan.to_str().expect("utf-8");
    let build = |tag: &str| {
        Test::new([
            "build",
            plan,
            "--target",
            "taskmaster",
            "--tag",
            tag,
            "-o",
            &tasks,
        ])
        .expect_code(0)
    };
    build("feature-y");
    let before: Value = serde_json::from_str(TWO_TAGS).expect("JSON");
    let file = read(&tasks);
    let tags: Vec<&String> = file.as_object().expect("tags").keys().collect();
    assert_eq!(tags, ["master", "feature-x", "feature-y"]);
    assert_eq!(file["master"], before["master"]);
    assert_eq!(file["feature-x"], before["feature-x"]);
    assert_eq!(
        file["feature-y"]["metadata"],
        json!({"description": "Ship feature y"})
    );

    // Writing a tag the file has replaces its tasks in its place, and keeps
    // the members of its metadata planc does not write.
    build("feature-x");
    let file = read(&tasks);
    let tags: Vec<&String> = file.as_object().expect("tags").keys().collect();
    assert_eq!(tags, ["master", "feature-x", "feature-y"]);
    assert_eq!(file["master"], before["master"]);
    assert_eq!(
        file["feature-x"]["metadata"],
        json!({"created": "2025-02-01T00:00:00.000Z", "updated": "2025-02-02T00:00:00.000Z", "description": "Ship feature y"})
    );
    assert_eq!(file["feature-x"]["tasks"][1]["title"], "Do B");
    // No temporary file is left beside it.
    let left: Vec<_> = std::fs::read_dir(dir.path().join(".taskmaster/tasks"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["tasks.json"]);

    let Some(listed) = taskmaster(dir.path(), &["tags"]) else {
        return skipped();
    };
    for tag in ["master", "feature-x", "feature-y"] {
        assert!(listed.contains(tag), "{listed}");
    }
    let listed = taskmaster(dir.path(), &["list", "--tag", "feature-y"]).expect("task-master");
    assert!(listed.contains("Do B"), "{listed}");
}

#[test]
fn a_file_that_is_not_a_tasks_file_is_not_overwritten() {
    let dir = temp_dir("taskmaster-not-tasks");
    let out = dir.path().join("plan.json");
    let out = out.to_str().expect("utf-8");
    Test::new(["build", "examples/jd_keyboard.plan", "-o", out]).expect_code(0);
    let before = std::fs::read_to_string(out).expect("read");
    let refused = Test::new([
        "build",
        "examples/jd_keyboard.plan",
        "--target",
        "taskmaster",
        "-o",
        out,
    ])
    .expect_code(1);
    assert!(
        refused.stderr.contains("not written: ")
            && refused.stderr.contains(
                "exists, but it is not a task-master tasks.json: its member `format` is not a tag (an object with `tasks`); planc adds a tag only to one (remove the file, or write elsewhere)"
            ),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read_to_string(out).expect("read"), before);
}

/// task-master's statuses and priorities: `deferred`, `blocked` and
/// `review` set aside, `cancelled` done with, `critical` first; a subtask
/// without `priority`, `details` or `testStrategy`.
const STATUSES: &str = r#"{
  "master": {
    "tasks": [
      { "id": 1, "title": "Postponed", "description": "Later", "status": "deferred", "dependencies": [], "priority": "critical" },
      { "id": 2, "title": "Waiting on legal", "description": "Outside", "status": "blocked", "dependencies": [], "priority": "critical" },
      { "id": 3, "title": "Awaiting review", "description": "Done, not accepted", "status": "review", "dependencies": [], "priority": "critical" },
      { "id": 4, "title": "Dropped", "description": "No longer wanted", "status": "cancelled", "dependencies": [], "priority": "high" },
      { "id": 5, "title": "Tidy up", "description": "Small things", "status": "pending", "dependencies": [], "priority": "low",
        "subtasks": [ { "id": 1, "title": "Sweep", "description": "The floor", "status": "pending", "dependencies": [] } ] },
      { "id": 6, "title": "Urgent fix", "description": "Now", "status": "pending", "dependencies": [], "priority": "critical" },
      { "id": 7, "title": "After the review", "description": "Then", "status": "pending", "dependencies": [3], "priority": "critical" }
    ],
    "metadata": { "description": "Statuses" }
  }
}
"#;

fn started(state: &str) -> Value {
    let next = Test::new(["run", "next", state, "--json"]).expect_code(0);
    serde_json::from_str::<Value>(&next.stdout).expect("JSON")["data"].clone()
}

#[test]
fn the_runner_follows_taskmaster_statuses_and_priorities_and_keeps_them_on_export() {
    let (dir, tasks) = project("taskmaster-statuses", STATUSES);
    Test::new(["check", &tasks, "--deny", "warnings"]).expect_code(0);
    // task-master's own `next` picks the critical task that is pending.
    if let Some(next) = taskmaster(dir.path(), &["next", "--format", "json"]) {
        let json = &next[next.find('{').expect("JSON")..];
        let next: Value = serde_json::Deserializer::from_str(json)
            .into_iter::<Value>()
            .next()
            .expect("a JSON value")
            .expect("task-master next --format json");
        assert_eq!(next["task"]["id"], "6", "{next}");
    } else {
        skipped();
    }
    let state = dir.path().join("state.json");
    let state = state.to_str().expect("utf-8");
    Test::new(["run", "init", &tasks, "-o", state]).expect_code(0);
    let first = started(state);
    assert_eq!(first["task"]["name"], "Urgent fix");
    // The subtask has its parent's priority (low): it comes last, and the
    // set-aside tasks and what waits for them never start.
    assert_eq!(started(state)["task"]["name"], "Sweep");
    let idle = started(state);
    assert_eq!(idle["task"], Value::Null);
    assert_eq!(
        idle["message"],
        "No task is executable yet: waiting for task(s) 8, 6 in progress."
    );
    Test::new(["run", "complete", state, "6", "--result", "ok"]).expect_code(0);
    Test::new(["run", "complete", state, "8", "--result", "ok"]).expect_code(0);
    assert_eq!(started(state)["task"]["name"], "Tidy up");
    Test::new(["run", "complete", state, "5", "--result", "ok"]).expect_code(0);
    let idle = started(state);
    assert_eq!(
        idle["message"],
        "No task is executable: task(s) 1, 2, 3 are set aside (deferred, blocked or in review); start one by its id to take it up."
    );
    let status = Test::new(["run", "status", state, "--json"]).expect_code(0);
    let status: Value = serde_json::from_str(&status.stdout).expect("JSON");
    assert_eq!(status["data"]["executable_tasks"], 0, "{status}");

    // The words stay on export; a task taken up by its id loses its word.
    Test::new(["run", "start", state, "2"]).expect_code(0);
    Test::new(["build", state, "--target", "taskmaster", "-o", &tasks]).expect_code(0);
    let file = read(&tasks);
    let statuses: Vec<&Value> = file["master"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| &t["status"])
        .collect();
    assert_eq!(
        statuses,
        [
            "deferred",
            "in-progress",
            "review",
            "cancelled",
            "done",
            "done",
            "pending"
        ]
    );
    assert_eq!(file["master"]["tasks"][0]["priority"], "critical");
    // The subtask gains no `priority`, `details` or `testStrategy`.
    assert_eq!(
        file["master"]["tasks"][4]["subtasks"][0],
        json!({"id": 1, "title": "Sweep", "description": "The floor", "status": "done",
               "dependencies": [], "planc": {"id": 8, "result": "ok"}})
    );
    let Some(listed) = taskmaster(dir.path(), &["list", "--with-subtasks"]) else {
        return skipped();
    };
    assert!(
        listed.contains("Postponed") && listed.contains("Sweep"),
        "{listed}"
    );
    let validated = taskmaster(dir.path(), &["validate-dependencies"]).expect("task-master");
    assert!(validated.contains("valid"), "{validated}");
}

#[test]
fn a_json_document_gets_json_wording_and_a_peers_redundant_dependency_passes_deny_warnings() {
    let dir = temp_dir("taskmaster-wording");
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"overallGoal": "g", "tasks": [
 {"id": 1, "name": "Parse", "status": "pending", "dependencies": []},
 {"id": 2, "name": "Check", "status": "pending", "dependencies": [1]},
 {"id": 3, "name": "Emit", "status": "pending", "dependencies": [1, 2]}]}"#,
    )
    .expect("write");
    let plan = plan.to_str().expect("utf-8");
    let checked = Test::new(["check", plan, "--color", "never"]).expect_code(0);
    assert!(
        checked.stdout.contains(
            "⚠ task 3 need not depend on task 1: it depends on task 2, which already waits for it"
        ) && checked
            .stdout
            .contains("help: remove this entry from the `dependencies` of task 3")
            && !checked.stdout.contains("`after`"),
        "{}",
        checked.stdout
    );

    // In task-master's file subtask 1.2 names 1.1 and task 1 twice over.
    let (_dir, tasks) = project(
        "taskmaster-redundant",
        r#"{"master": {"tasks": [
  {"id": 1, "title": "A", "description": "a", "status": "pending", "dependencies": [],
   "subtasks": [
     {"id": 1, "title": "A1", "description": "a1", "status": "pending", "dependencies": []},
     {"id": 2, "title": "A2", "description": "a2", "status": "pending", "dependencies": [1]}]},
  {"id": 2, "title": "B", "description": "b", "status": "pending", "dependencies": [1, "1.2"]}
], "metadata": {}}}"#,
    );
    let checked =
        Test::new(["check", &tasks, "--deny", "warnings", "--color", "never"]).expect_code(0);
    assert!(
        checked.stdout.ends_with("tasks.json: ok, 4 tasks\n") && !checked.stdout.contains('⚠'),
        "{}",
        checked.stdout
    );
}
