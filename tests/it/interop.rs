//! Every shape planc writes it reads back, and the seeds' and peers' own
//! documents load: `build --target T` then `run init` gives back the same
//! tasks, dependencies, statuses and results (docs/interop.md).

use crate::support::{files, temp_dir, Test};
use serde_json::{json, Value};

/// The `--set` values an example needs to build.
fn values(path: &str) -> Vec<&'static str> {
    match path {
        "examples/research_report.plan" => vec!["--set", "topic=vector databases"],
        "examples/release_checklist.plan" => {
            vec!["--set", "version=2.4.0", "--set", "channel=stable"]
        }
        _ => Vec::new(),
    }
}

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

/// `planc build SOURCE --target TARGET` into `dir`, then `planc run init` of
/// that file: the state it creates. `planc check` of the export is clean.
fn export_and_load(dir: &tempfile::TempDir, source: &str, extra: &[&str], target: &str) -> Value {
    let out = dir.path().join(format!("export.{target}.json"));
    let out = out.to_str().expect("utf-8 path");
    let mut args = vec!["build", source, "--target", target, "-o", out];
    args.extend(extra);
    Test::new(&args).expect_code(0);
    let checked = Test::new(["check", out]).expect_code(0);
    assert!(
        !checked.stderr.contains("warning"),
        "{source} --target {target}: {}",
        checked.stderr
    );
    let state = dir.path().join(format!("state.{target}.json"));
    let state = state.to_str().expect("utf-8 path");
    Test::new(["run", "init", out, "-o", state, "--force"]).expect_code(0);
    read(std::path::Path::new(state))
}

/// What a round trip must keep, by task id: name, status, dependencies,
/// result; and for targets that carry planc's fields, those too.
fn tasks(document: &Value, everything: bool) -> Vec<Value> {
    let mut list: Vec<Value> = document["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            let mut kept = json!({
                "id": t["id"], "name": t["name"], "status": t["status"],
                "dependencies": t["dependencies"], "result": t["result"],
            });
            if everything {
                for field in [
                    "key",
                    "reasoning",
                    "description",
                    "assignee",
                    "step",
                    "optional",
                    "retry",
                    "priority",
                ] {
                    kept[field] = t.get(field).cloned().unwrap_or(Value::Null);
                }
            }
            kept
        })
        .collect();
    list.sort_by_key(|t| t["id"].as_u64());
    list
}

/// Whether `target` keeps planc's own fields (in `planc` objects or natively).
fn keeps_everything(target: &str) -> bool {
    !matches!(target, "tasks" | "codex")
}

/// Codex holds only each step's text and status, in a line.
fn codex_view(document: &Value) -> Vec<(String, String)> {
    let mut running = false;
    document["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            let status = match t["status"].as_str().expect("status") {
                "completed" | "skipped" => "completed",
                "in_progress" if !running => {
                    running = true;
                    "in_progress"
                }
                _ => "pending",
            };
            (
                t["name"].as_str().expect("name").to_owned(),
                status.to_owned(),
            )
        })
        .collect()
}

fn assert_round_trip(reference: &Value, loaded: &Value, what: &str, target: &str) {
    if target == "codex" {
        let names: Vec<(String, String)> = codex_view(loaded);
        let mut expected = codex_view(reference);
        // Codex's line is a topological order; compare as sets of steps.
        let mut got = names;
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{what} --target codex");
        return;
    }
    let everything = keeps_everything(target);
    assert_eq!(
        tasks(loaded, everything),
        tasks(reference, everything),
        "{what} --target {target}"
    );
    if everything {
        assert_eq!(
            loaded["roles"], reference["roles"],
            "{what} --target {target}: roles"
        );
        assert_eq!(
            loaded["steps"], reference["steps"],
            "{what} --target {target}: steps"
        );
        for field in ["id", "title", "goal", "language", "params"] {
            assert_eq!(
                loaded["meta"][field], reference["meta"][field],
                "{what} --target {target}: meta.{field}"
            );
        }
    }
}

#[test]
fn every_example_round_trips_through_every_target() {
    let dir = temp_dir("interop-examples");
    for path in files("examples", &["plan"]) {
        let extra = values(&path);
        let reference = export_and_load(&dir, &path, &extra, "planc");
        for (target, _) in planc::emit::Target::ALL {
            let loaded = export_and_load(&dir, &path, &extra, target);
            assert_round_trip(&reference, &loaded, &path, target);
        }
    }
}

/// A state part-way through a run: completed, failed, skipped and running
/// tasks, with results.
fn live_state(dir: &tempfile::TempDir) -> String {
    let state = dir.path().join("live.json");
    let state = state.to_str().expect("utf-8 path").to_owned();
    let run = |args: &[&str]| {
        let mut all = vec!["run"];
        all.extend(args);
        Test::new(&all).expect_code(0);
    };
    run(&["init", "examples/feature_release.plan", "-o", &state]);
    run(&["next", &state]);
    run(&["complete", &state, "--result", "branch cut"]);
    run(&["next", &state]);
    run(&["fail", &state, "--error", "CI is red", "--no-retry"]);
    run(&["skip", &state, "5", "--reason", "not this release"]);
    run(&["next", &state]);
    state
}

#[test]
fn a_live_state_round_trips_through_every_target() {
    let dir = temp_dir("interop-live");
    let state = live_state(&dir);
    let reference = read(std::path::Path::new(&state));
    let statuses: Vec<&str> = reference["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["status"].as_str().expect("status"))
        .collect();
    for status in ["completed", "failed", "skipped", "in_progress", "pending"] {
        assert!(statuses.contains(&status), "the state has a {status} task");
    }
    for (target, _) in planc::emit::Target::ALL {
        let loaded = export_and_load(&dir, &state, &[], target);
        assert_round_trip(&reference, &loaded, "a live state", target);
    }
}

/// The seeds' and peers' own documents, each normalised to `planc/1`:
/// diagnostics (if any) and the document, pinned.
#[test]
fn seed_and_peer_documents_load() {
    for path in files("tests/shapes", &["json"]) {
        let output = Test::new(["build", &path]).run();
        let name = path.replace('/', "__");
        insta::assert_snapshot!(
            name,
            format!(
                "exit {}\n--- stderr\n{}--- stdout\n{}",
                output.code, output.stderr, output.stdout
            )
        );
    }
}

#[test]
fn a_tagged_taskmaster_file_is_read_at_the_tag_asked_for() {
    let dir = temp_dir("interop-tag");
    let out = dir.path().join("tasks.json");
    let out = out.to_str().expect("utf-8 path");
    Test::new([
        "build",
        "examples/jd_keyboard.plan",
        "--target",
        "taskmaster",
        "--tag",
        "feature-x",
        "-o",
        out,
    ])
    .expect_code(0);
    let written = read(std::path::Path::new(out));
    assert!(written["feature-x"]["tasks"].is_array(), "{written}");
    // Without `master`, the only tag is read.
    let state = dir.path().join("state.json");
    Test::new(["run", "init", out, "-o", state.to_str().expect("utf-8")]).expect_code(0);
    assert_eq!(read(&state)["tasks"].as_array().map(Vec::len), Some(5));
}

/// Codex's `update_plan` parameters, as its source declares them
/// (openai/codex, `codex-rs/core/src/tools/handlers/plan.rs`, `PLAN_TOOL`;
/// the statuses from `codex_protocol::plan_tool::StepStatus`).
fn codex_update_plan_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "explanation": { "type": "string" },
            "plan": {
                "type": "array",
                "description": "The list of steps",
                "items": {
                    "type": "object",
                    "properties": {
                        "step": { "type": "string" },
                        "status": {
                            "type": "string",
                            "description": "One of: pending, in_progress, completed",
                            "enum": ["pending", "in_progress", "completed"]
                        }
                    },
                    "required": ["step", "status"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["plan"],
        "additionalProperties": false
    })
}

#[test]
fn codex_exports_satisfy_update_plan_with_at_most_one_step_in_progress() {
    let schema = codex_update_plan_schema();
    let validator = jsonschema::validator_for(&schema).expect("schema is valid");
    let dir = temp_dir("interop-codex");
    let state = live_state(&dir);
    // Two tasks in progress at once: Codex gets one.
    Test::new(["run", "next", &state]).expect_code(0);
    let mut sources: Vec<String> = files("examples", &["plan"]);
    sources.push(state);
    for source in sources {
        let mut args = vec!["build", source.as_str(), "--target", "codex"];
        let extra = values(&source);
        args.extend(extra);
        let output = Test::new(&args).expect_code(0);
        let value: Value = serde_json::from_str(&output.stdout).expect("JSON");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{source}: {errors:#?}");
        let running = value["plan"]
            .as_array()
            .expect("plan")
            .iter()
            .filter(|s| s["status"] == "in_progress")
            .count();
        assert!(running <= 1, "{source}: {running} steps in progress");
    }
}

#[test]
fn next_takes_high_priority_work_first_then_plan_order() {
    let dir = temp_dir("interop-priority");
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"overallGoal": "g", "tasks": [
            {"id": 1, "name": "low", "status": "pending", "priority": "low"},
            {"id": 2, "name": "plain", "status": "pending"},
            {"id": 3, "name": "urgent", "status": "pending", "priority": "high"},
            {"id": 4, "name": "also urgent", "status": "pending", "priority": "high"}
        ]}"#,
    )
    .expect("write");
    let state = dir.path().join("state.json");
    let state = state.to_str().expect("utf-8");
    Test::new(["run", "init", plan.to_str().expect("utf-8"), "-o", state]).expect_code(0);
    let ready = Test::new(["run", "ready", state, "--json"]).expect_code(0);
    let ready: Value = serde_json::from_str(&ready.stdout).expect("JSON");
    let order: Vec<u64> = ready["data"]["executable_tasks"]
        .as_array()
        .expect("list")
        .iter()
        .map(|t| t["id"].as_u64().expect("id"))
        .collect();
    assert_eq!(order, [3, 4, 2, 1]);
    let mut started = Vec::new();
    for _ in 0..4 {
        let next = Test::new(["run", "next", state, "--json"]).expect_code(0);
        let next: Value = serde_json::from_str(&next.stdout).expect("JSON");
        started.push(next["data"]["task"]["id"].as_u64().expect("id"));
    }
    assert_eq!(started, [3, 4, 2, 1]);
}

/// The real task-master CLI (`PLANC_TASKMASTER`: its `task-master` command;
/// `.ci/run` installs it) lists and validates an exported file, and a file
/// it changed loads back.
#[test]
fn the_taskmaster_cli_reads_an_export_and_its_changes_load_back() {
    let Some(taskmaster) = std::env::var_os("PLANC_TASKMASTER") else {
        eprintln!(
            "skipped: set PLANC_TASKMASTER to the task-master command (npm package task-master-ai; .ci/run does)"
        );
        return;
    };
    let dir = temp_dir("interop-taskmaster");
    let tasks_dir = dir.path().join(".taskmaster/tasks");
    std::fs::create_dir_all(&tasks_dir).expect("mkdir");
    let tasks = tasks_dir.join("tasks.json");
    let tasks = tasks.to_str().expect("utf-8");
    let state = live_state(&dir);
    Test::new(["build", &state, "--target", "taskmaster", "-o", tasks]).expect_code(0);
    let peer = |args: &[&str]| {
        let output = std::process::Command::new(&taskmaster)
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("task-master runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "task-master {args:?}: {text}");
        text
    };
    let listed = peer(&["list"]);
    assert!(listed.contains("Cut the 3.1.0"), "{listed}");
    assert!(
        listed.contains("Blocked: 1"),
        "the failed task is blocked: {listed}"
    );
    let validated = peer(&["validate-dependencies"]);
    assert!(validated.contains("valid"), "{validated}");
    peer(&["set-status", "--id=7", "--status=done"]);
    peer(&[
        "add-subtask",
        "--parent=8",
        "--title=Write release notes",
        "--description=Notes for 3.1.0",
    ]);
    let loaded = dir.path().join("loaded.json");
    let loaded_path = loaded.to_str().expect("utf-8");
    Test::new(["run", "init", tasks, "-o", loaded_path]).expect_code(0);
    let loaded = read(&loaded);
    let by_name = |name: &str| {
        loaded["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no task {name}: {loaded}"))
    };
    assert_eq!(by_name("Merge CSV export")["status"], "completed");
    let notes = by_name("Write release notes");
    assert_eq!(notes["key"], "8.1");
    let tag = by_name("Tag 3.1.0 once search.merge and export.merge are in");
    assert!(
        tag["dependencies"]
            .as_array()
            .expect("deps")
            .contains(&notes["id"]),
        "{tag}"
    );
    // What task-master cannot hold came back from the `planc` objects.
    assert_eq!(
        by_name("Cut the 3.1.0 release branch")["result"],
        "branch cut"
    );
}

#[test]
fn priority_in_a_plan_orders_ready_work_and_a_wrong_level_is_reported() {
    let dir = temp_dir("interop-priority-plan");
    let plan = dir.path().join("p.plan");
    std::fs::write(
        &plan,
        "plan p {\n    goal \"g\"\n    task a \"A\" { priority low }\n    task b \"B\"\n    task c \"C\" { priority high after b }\n    task d \"D\" { priority high }\n}\n",
    )
    .expect("write");
    let plan = plan.to_str().expect("utf-8");
    let state = dir.path().join("s.json");
    let state = state.to_str().expect("utf-8");
    Test::new(["run", "init", plan, "-o", state]).expect_code(0);
    let mut started = Vec::new();
    for _ in 0..2 {
        let next = Test::new(["run", "next", state, "--json"]).expect_code(0);
        let next: Value = serde_json::from_str(&next.stdout).expect("JSON");
        started.push(
            next["data"]["task"]["key"]
                .as_str()
                .expect("key")
                .to_owned(),
        );
    }
    // `c` is high but waits for `b`; `d` is high and ready; then `b` before `a`.
    assert_eq!(started, ["d", "b"]);
    Test::new(["run", "complete", state, "b", "--result", "ok"]).expect_code(0);
    let ready = Test::new(["run", "ready", state]).expect_code(0);
    assert_eq!(
        ready.stdout,
        "#3 [pending] C (c) after 2\n#1 [pending] A (a)\n"
    );

    let wrong = dir.path().join("wrong.plan");
    std::fs::write(
        &wrong,
        "plan p {\n    goal \"g\"\n    task a \"A\" { priority hgh }\n}\n",
    )
    .expect("write");
    let output =
        Test::new(["check", "--color=never", wrong.to_str().expect("utf-8")]).expect_code(1);
    assert!(
        output
            .stdout
            .contains("`priority` is `critical`, `high`, `medium` or `low`, not `hgh`"),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains("did you mean `high`?"),
        "{}",
        output.stdout
    );
}
