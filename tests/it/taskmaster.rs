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
