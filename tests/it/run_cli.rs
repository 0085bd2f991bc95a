//! `planc run`: the runner through the real binary (docs/runner.md).

use crate::support::{self, repo, tasks, Test};
use serde_json::json;

fn s(items: &[(u64, &str)]) -> Vec<(u64, String)> {
    items.iter().map(|(i, st)| (*i, st.to_string())).collect()
}

/// The planManager's whole JD scenario, popup insertion included, checking the state
/// file after every step.
#[test]
fn seed_000_jd_scenario() {
    let t = Test::temp();
    let plan = repo("examples/jd_keyboard.plan");
    let data = t.ok(&["init", &plan, "-o", "jd.json"]);
    assert_eq!(data["total_tasks"], 5);
    let state = t.state("jd.json");
    assert_eq!(
        state["state"],
        json!({"status": "idle", "current_task_id": null, "revision": 1, "iteration_count": 0})
    );
    assert!(state["meta"]["created_at"].as_str().unwrap().ends_with('Z'));

    // 1. Start: task 1 becomes current.
    let data = t.ok(&["next", "jd.json"]);
    assert_eq!(data["task"]["id"], 1);
    assert_eq!(
        data["message"],
        "Started task 1: Navigate to jd.com homepage"
    );
    let state = t.state("jd.json");
    assert_eq!(state["state"]["current_task_id"], 1);
    assert_eq!(state["state"]["status"], "running");
    assert_eq!(
        tasks(&state),
        s(&[
            (1, "in_progress"),
            (2, "pending"),
            (3, "pending"),
            (4, "pending"),
            (5, "pending")
        ])
    );

    // 2. Complete the current task: currentTaskID becomes null.
    let data = t.ok(&[
        "complete",
        "jd.json",
        "--result",
        "Successfully navigated to JD.com",
    ]);
    assert_eq!(data["task_id"], 1);
    let state = t.state("jd.json");
    assert_eq!(state["state"]["current_task_id"], json!(null));
    assert_eq!(
        state["tasks"][0]["result"],
        "Successfully navigated to JD.com"
    );

    // 3. Next: task 2 (its dependency 1 is completed).
    assert_eq!(t.ok(&["next", "jd.json"])["task"]["id"], 2);
    t.ok(&[
        "complete",
        "jd.json",
        "type_query",
        "--result",
        "typed 机械键盘",
    ]);

    // 4. A popup: insert a task after 2; task 3 now waits for it.
    let data = t.ok(&[
        "add",
        "jd.json",
        "--name",
        "Close the new user coupon popup",
        "--deps",
        "2",
        "--reasoning",
        "An unexpected popup is blocking the search button.",
        "--after",
        "2",
    ]);
    assert_eq!(data["new_task"]["id"], 6);
    let state = t.state("jd.json");
    let order: Vec<u64> = tasks(&state).iter().map(|t| t.0).collect();
    assert_eq!(order, [1, 2, 6, 3, 4, 5]);
    assert_eq!(state["tasks"][2]["dependencies"], json!([2]));
    assert_eq!(state["tasks"][3]["dependencies"], json!([6]));
    assert_eq!(state["tasks"][3]["key"], "search");
    assert_eq!(state["steps"][0]["tasks"], json!([1, 2, 6, 3]));

    // 5. Continue with the new plan: task 6 first.
    let data = t.ok(&["next", "jd.json"]);
    assert_eq!(data["task"]["id"], 6);
    assert_eq!(t.state("jd.json")["state"]["current_task_id"], 6);
    t.ok(&["complete", "jd.json", "--result", "popup closed"]);
    for (id, key) in [(3, "search"), (4, "filter"), (5, "add_to_cart")] {
        let data = t.ok(&["next", "jd.json"]);
        assert_eq!(data["task"]["id"], id);
        assert_eq!(data["task"]["key"], key);
        t.ok(&["complete", "jd.json", key, "--result", "ok"]);
    }
    let state = t.state("jd.json");
    assert_eq!(state["state"]["status"], "completed");
    assert_eq!(state["state"]["revision"], 14);
    let status = t.ok(&["status", "jd.json"]);
    assert_eq!(status["progress"], 1.0);
    assert_eq!(status["completed_tasks"], 6);
    let none = t.ok(&["next", "jd.json"]);
    assert_eq!(none["task"], json!(null));
    assert_eq!(none["reason"], "completed");

    // The event log holds one line per change, revisions 1..=14.
    let events = t.events("jd.json");
    let revisions: Vec<u64> = events
        .iter()
        .map(|e| e["revision"].as_u64().unwrap())
        .collect();
    assert_eq!(revisions, (1..=14).collect::<Vec<_>>());
    assert_eq!(events[0]["events"][0]["kind"], "created");
    assert_eq!(events[5]["events"][0]["kind"], "added");
    assert_eq!(events[13]["events"][1]["kind"], "plan_completed");
}

#[test]
fn human_output_and_exit_codes() {
    let t = Test::temp();
    let run = t.planc(&[
        "run",
        "init",
        &repo("examples/jd_keyboard.plan"),
        "-o",
        "s.json",
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "created s.json: plan `jd_keyboard`, 5 task(s)\n")
    );
    let run = t.planc(&["run", "next", "s.json"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "Started task 1: Navigate to jd.com homepage\n#1 [in_progress] Navigate to jd.com homepage (open) @browser\n  reasoning: The first step is to open the target website.\n"
    );
    let run = t.planc(&["run", "status", "s.json"]);
    assert_eq!(
        run.stdout,
        "running ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░ 0/5 done (0%)\n\
         0 completed · 1 in progress · 4 pending · 0 failed · 0 skipped · 0 executable · 4 blocked\n\
         ID  STATUS       NAME                                     HOLDER  AFTER  RETRIES\n\
         1   in_progress  Navigate to jd.com homepage              -       -      -\n\
         2   pending      Input '机械键盘' into search bar         -       1      -\n\
         3   pending      Click the search button                  -       2      -\n\
         4   pending      Filter results by price (under 500)      -       3      0/2\n\
         5   pending      Add the first item to the shopping cart  -       4      -\n\
         current task: #1\n"
    );
    let run = t.planc(&["run", "start", "s.json", "9"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "error[TASK_NOT_FOUND]: Task with ID 9 not found\n")
    );
    // Usage errors exit 2.
    assert_eq!(t.planc(&["run", "start", "s.json"]).code, 2);
    assert_eq!(t.planc(&["run", "frobnicate", "s.json"]).code, 2);
    assert_eq!(
        t.planc(&["run", "init", "missing.plan", "-o", "x.json"])
            .code,
        2
    );
    // A state file that cannot be read is an unreadable input: exit 2, for
    // queries and changes alike, with or without --json.
    assert_eq!(
        t.op(&["status", "nope.json"], 2)["error"]["code"],
        "STATE_IO"
    );
    assert_eq!(t.op(&["next", "nope.json"], 2)["error"]["code"], "STATE_IO");
    let run = t.planc(&["run", "next", "nope.json"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "error[STATE_IO]: cannot read nope.json: No such file or directory (os error 2)\n"
        )
    );
    // ...and no lock file is left beside a state that does not exist.
    assert!(!t.path("nope.json.lock").exists());
    std::fs::write(t.path("bad.json"), "{").unwrap();
    assert_eq!(
        t.op(&["complete", "bad.json"], 2)["error"]["code"],
        "INVALID_STATE"
    );
    assert_eq!(t.planc(&["run", "status", "bad.json"]).code, 2);
    // init refuses to overwrite without --force.
    assert_eq!(
        t.err(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]),
        "STATE_IO"
    );
    t.ok(&[
        "init",
        &repo("examples/jd_keyboard.plan"),
        "-o",
        "s.json",
        "--force",
    ]);
    assert_eq!(t.state("s.json")["state"]["revision"], 1);
}

#[test]
fn init_from_a_json_plan_and_from_a_plan_with_errors() {
    let t = Test::temp()
        .file(
            "seed000.json",
            r#"{"overallGoal": "g", "currentTaskID": null, "tasks": [
                {"id": 1, "name": "a", "status": "pending", "dependencies": [], "reasoning": "r", "result": null},
                {"id": 2, "name": "b", "status": "pending", "dependencies": [1], "reasoning": "r", "result": null}]}"#,
        )
        .file("bad.plan", "plan p { goal \"g\" task a \"A\" { after nothing } }\n");
    t.ok(&["init", "seed000.json", "-o", "s.json"]);
    assert_eq!(t.ok(&["next", "s.json"])["task"]["name"], "a");
    let run = t.planc(&["run", "init", "bad.plan", "-o", "b.json"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("unknown_ref"), "{}", run.stderr);
    assert!(!t.path("b.json").exists());
}

const RETRY_PLAN: &str = r#"plan retries {
    goal "Exercise retries and optional tasks"
    task flaky "Flaky" { retry 1 }
    task polish "Polish" {
        optional
        retry 0
    }
    task after_polish "After polish" { after polish }
    task last "Last" { after flaky }
}
"#;

#[test]
fn retry_and_optional_failure() {
    let t = Test::temp().file("p.plan", RETRY_PLAN);
    t.ok(&["init", "p.plan", "-o", "s.json"]);
    assert_eq!(t.ok(&["start", "s.json", "flaky"])["task"]["id"], 1);
    let data = t.ok(&["fail", "s.json", "--error", "timeout"]);
    assert_eq!(data["will_retry"], true);
    assert_eq!(data["retry_count"], 1);
    let state = t.state("s.json");
    assert_eq!(state["tasks"][0]["status"], "pending");
    assert_eq!(state["tasks"][0]["retry"], json!({"max": 1, "count": 1}));
    // The optional task fails; what comes after it may still run.
    t.ok(&["start", "s.json", "polish"]);
    assert_eq!(
        t.ok(&["fail", "s.json", "polish", "--error", "no time"])["will_retry"],
        false
    );
    let ready = t.ok(&["ready", "s.json"]);
    let ids: Vec<u64> = ready["executable_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 3]);
    // The flaky task fails for good: `last` is blocked; once `after_polish` is done the plan has failed.
    t.ok(&["start", "s.json", "flaky"]);
    assert_eq!(
        t.ok(&["fail", "s.json", "--error", "still broken"])["will_retry"],
        false
    );
    assert_eq!(t.state("s.json")["state"]["status"], "running");
    t.ok(&["start", "s.json", "after_polish"]);
    t.ok(&["complete", "s.json", "--result", "ok"]);
    let status = t.ok(&["status", "s.json"]);
    assert_eq!(status["status"], "failed");
    assert_eq!(status["blocked_by"], json!([1]));
    let none = t.ok(&["next", "s.json"]);
    assert_eq!(none["reason"], "blocked");
    // Skipping the failed task lets the plan finish.
    t.ok(&["skip", "s.json", "flaky", "--reason", "done by hand"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["complete", "s.json"]);
    assert_eq!(t.state("s.json")["state"]["status"], "completed");
}

#[test]
fn no_retry_flag_fails_at_once() {
    let t = Test::temp().file("p.plan", RETRY_PLAN);
    t.ok(&["init", "p.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    let data = t.ok(&["fail", "s.json", "--error", "x", "--no-retry"]);
    assert_eq!(data["will_retry"], false);
}

#[test]
fn every_error_code_through_the_cli() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    assert_eq!(t.err(&["show", "s.json", "99"]), "TASK_NOT_FOUND");
    assert_eq!(
        t.err(&["add", "s.json", "--name", "x", "--deps", "42"]),
        "INVALID_DEPENDENCY"
    );
    assert_eq!(
        t.err(&["update", "s.json", "open", "--deps", "search"]),
        "CIRCULAR_DEPENDENCY"
    );
    assert_eq!(t.err(&["complete", "s.json"]), "NO_CURRENT_TASK");
    assert_eq!(
        t.err(&["start", "s.json", "search"]),
        "DEPENDENCIES_NOT_MET"
    );
    assert_eq!(
        t.err(&["add", "s.json", "--name", "x", "--assignee", "robot"]),
        "UNKNOWN_ROLE"
    );
    assert_eq!(t.err(&["add", "s.json", "--name", " "]), "INVALID_ARGUMENT");
    assert_eq!(
        t.err(&["list", "s.json", "--status", "stuck"]),
        "INVALID_STATUS"
    );
    t.ok(&["next", "s.json"]);
    assert_eq!(
        t.err(&["update", "s.json", "open", "--name", "x"]),
        "TASK_NOT_EDITABLE"
    );
    assert_eq!(t.err(&["remove", "s.json", "1"]), "TASK_NOT_EDITABLE");
    assert_eq!(t.err(&["start", "s.json", "open"]), "INVALID_STATUS");
    t.ok(&["pause", "s.json"]);
    assert_eq!(t.err(&["complete", "s.json"]), "PLAN_NOT_ACTIVE");
    std::fs::write(t.path("broken.json"), "{\"format\": ").unwrap();
    assert_eq!(
        t.op(&["status", "broken.json"], 2)["error"]["code"],
        "INVALID_STATE"
    );
    assert_eq!(
        t.op(&["status", "missing.json"], 2)["error"]["code"],
        "STATE_IO"
    );
    let refused = t.op(&["complete", "s.json"], 1);
    assert_eq!(
        refused,
        json!({"success": false, "error": {"code": "PLAN_NOT_ACTIVE",
            "message": "The plan is paused; resume it (`planc run resume`) before changing it",
            "details": {"status": "paused"}}})
    );
}

#[test]
fn pause_resume_and_reset() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    assert_eq!(
        t.ok(&["pause", "s.json"])["message"],
        "Plan paused successfully"
    );
    assert_eq!(t.state("s.json")["state"]["status"], "paused");
    assert_eq!(t.err(&["next", "s.json"]), "PLAN_NOT_ACTIVE");
    // Resume from the file, in a new process: the plan carries on where it was.
    t.ok(&["resume", "s.json"]);
    let state = t.state("s.json");
    assert_eq!(state["state"]["status"], "running");
    assert_eq!(state["state"]["current_task_id"], 1);
    t.ok(&["complete", "s.json"]);
    let data = t.ok(&["reset", "s.json"]);
    assert_eq!(data["reset_tasks"], 1);
    let state = t.state("s.json");
    assert_eq!(state["state"]["status"], "idle");
    assert!(tasks(&state).iter().all(|t| t.1 == "pending"));
    let kinds: Vec<String> = t
        .events("s.json")
        .iter()
        .map(|e| e["events"][0]["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "created",
            "started",
            "paused",
            "resumed",
            "completed",
            "reset"
        ]
    );
}

#[test]
fn replan_from_a_steps_file() {
    let t = Test::temp()
        .file(
            "steps.json",
            r#"["Search on another site", {"name": "Compare prices", "assignee": "browser"}]"#,
        )
        .file("bad.json", r#"{"steps": 3}"#);
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["complete", "s.json", "--result", "opened"]);
    let data = t.ok(&["replan", "s.json", "steps.json"]);
    assert_eq!(data["removed_tasks"], json!([2, 3, 4, 5]));
    let state = t.state("s.json");
    assert_eq!(
        tasks(&state),
        s(&[(1, "completed"), (6, "pending"), (7, "pending")])
    );
    assert_eq!(state["tasks"][2]["dependencies"], json!([6]));
    assert_eq!(state["steps"][0]["tasks"], json!([1]));
    assert_eq!(t.err(&["replan", "s.json", "bad.json"]), "INVALID_ARGUMENT");
    assert_eq!(
        t.planc(&["run", "replan", "s.json", "missing.json"]).code,
        2
    );
    assert_eq!(
        t.events("s.json").last().unwrap()["events"][0]["kind"],
        "replanned"
    );
}

#[test]
fn show_list_ready_update_remove() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    assert_eq!(t.op(&["show", "s.json"], 0)["data"], json!(null));
    assert_eq!(t.ok(&["show", "s.json", "filter"])["task"]["id"], 4);
    let list = t.ok(&[
        "list",
        "s.json",
        "--status",
        "pending",
        "--assignee",
        "browser",
    ]);
    assert_eq!(
        (list["total"].as_u64(), list["filtered"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(t.ok(&["ready", "s.json"])["count"], 1);
    let data = t.ok(&[
        "update",
        "s.json",
        "filter",
        "--name",
        "Filter by price",
        "--reasoning",
        "cheaper",
    ]);
    assert_eq!(data["updated_task"]["name"], "Filter by price");
    let data = t.ok(&["remove", "s.json", "filter"]);
    assert_eq!(data["rewired_tasks"], json!([5]));
    // `filter` waited for `search` only (dependencies are minimal), so its
    // dependent now waits for `search`.
    assert_eq!(t.state("s.json")["tasks"][3]["dependencies"], json!([3]));
    let run = t.planc(&["run", "list", "s.json"]);
    assert_eq!(
        run.stdout,
        "ID  STATUS   NAME                                     HOLDER  AFTER  RETRIES\n\
         1   pending  Navigate to jd.com homepage              -       -      -\n\
         2   pending  Input '机械键盘' into search bar         -       1      -\n\
         3   pending  Click the search button                  -       2      -\n\
         5   pending  Add the first item to the shopping cart  -       3      -\n"
    );
}

#[test]
fn watch_prints_the_event_log() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    let run = t.planc(&["run", "watch", "s.json", "--no-follow"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with("r2 ")
            && lines[1].ends_with(" started #1: Started task 1: Navigate to jd.com homepage"),
        "{}",
        lines[1]
    );
    let run = t.planc(&["run", "watch", "s.json", "--no-follow", "--json"]);
    let record: serde_json::Value =
        serde_json::from_str(run.stdout.lines().nth(1).unwrap()).unwrap();
    assert_eq!(record["op"], "startNextTask");
    assert_eq!(record["plan_status"], "running");
}

#[test]
fn watch_follows_new_changes() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    let mut child = support::planc()
        .args(["run", "watch", "s.json", "--json"])
        .current_dir(t.dir())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    use std::io::BufRead;
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"created\""), "{line}");
    t.ok(&["next", "s.json"]);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"started\""), "{line}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `init --force` starts the log afresh: a follower starts over from its first
/// record, even when the new log has grown as long as the old one in between.
#[test]
fn watch_starts_over_with_a_new_log() {
    let t = Test::temp();
    let plan = repo("examples/jd_keyboard.plan");
    t.ok(&["init", &plan, "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    let mut child = support::planc()
        .args(["run", "watch", "s.json", "--json"])
        .current_dir(t.dir())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in stdout.lines() {
            let _ = sender.send(line.unwrap());
        }
    });
    let mut next_record = || match lines.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(line) => serde_json::from_str::<serde_json::Value>(&line).unwrap(),
        Err(_) => {
            let _ = child.kill();
            panic!("watch printed nothing more");
        }
    };
    assert_eq!(next_record()["op"], "init");
    assert_eq!(next_record()["op"], "startNextTask");
    // Both within one poll: the new log is as long as the old one.
    t.ok(&["init", &plan, "-o", "s.json", "--force"]);
    t.ok(&["next", "s.json"]);
    let record = next_record();
    assert_eq!(record["op"], "init");
    assert_eq!(record["at"], t.state("s.json")["meta"]["created_at"]);
    assert_eq!(next_record()["op"], "startNextTask");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn prompt_in_the_plan_language() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["complete", "s.json", "--result", "Successfully navigated"]);
    t.ok(&["next", "s.json"]);
    let run = t.planc(&["run", "prompt", "s.json"]);
    assert_eq!(
        run.stdout,
        "## 当前任务规划\n\n\
         - 当前任务: 在京东网站上搜索'机械键盘'，并将价格低于500元的第一款产品加入购物车。\n\
         - 进度: 1/5 (状态: running)\n\
         - 当前步骤: #2 Input '机械键盘' into search bar (@browser)\n\
         - 最近结果:\n  - #1 [completed] Navigate to jd.com homepage: Successfully navigated\n\n\
         步骤完成后，说 \"[完成]\" 或 \"[Done]\"（之前的文字作为结果）；无法完成时说 \"[失败] 原因\"；用一行 \"[Step] 描述\" 添加步骤。\n"
    );
}

const STEPS_PLAN: &str = r#"plan loop {
    goal "Download five years of reports and chart them"
    language "en"
    max_iterations 3
    retry 0
}
"#;

#[test]
fn observe_markers_iterations_and_resume() {
    let t = Test::temp().file("p.plan", STEPS_PLAN);
    let run = t.planc(&["run", "init", "p.plan", "-o", "s.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let data = t.ok(&[
        "observe",
        "s.json",
        "--message",
        "[Step] Find the reports\n[Step] Download them\n[Step] Chart",
    ]);
    assert_eq!(data["iteration_count"], 1);
    assert_eq!(data["current_task"]["id"], 1);
    let run = t.planc_with_stdin(
        &["run", "--json", "observe", "s.json"],
        "Found them on the IR site. [完成]",
    );
    let data = run.json()["data"].clone();
    assert_eq!(data["current_task"]["id"], 2);
    let state = t.state("s.json");
    assert_eq!(state["tasks"][0]["result"], "Found them on the IR site.");
    assert_eq!(state["state"]["iteration_count"], 2);
    let data = t.ok(&["observe", "s.json", "--message", "downloading…"]);
    assert_eq!(data["paused"], true);
    assert!(data["summary"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Reached the iteration limit (3 iterations)"));
    assert_eq!(
        t.err(&["observe", "s.json", "--message", "more work"]),
        "PLAN_NOT_ACTIVE"
    );
    // "continue" resumes with a fresh budget; the failed step blocks the rest, so the plan fails.
    let data = t.ok(&[
        "observe",
        "s.json",
        "--message",
        "continue [Failed] the site is down",
    ]);
    assert_eq!(data["plan_status"], "failed");
    let state = t.state("s.json");
    assert_eq!(state["tasks"][1]["status"], "failed");
    assert_eq!(state["tasks"][1]["result"], "the site is down");
    assert_eq!(state["state"]["iteration_count"], 1);
}

/// The full envelope of every error code, pinned: a change in wording is a reviewed diff.
#[test]
fn error_envelopes_snapshot() {
    let t = Test::temp().file("broken.json", "{\"format\": ");
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    // A state whose revision is at its largest value.
    let text = std::fs::read_to_string(t.path("s.json")).unwrap();
    let text = text.replace("\"revision\": 1,", "\"revision\": 18446744073709551615,");
    std::fs::write(t.path("max.json"), text).unwrap();
    let cases: &[&[&str]] = &[
        &["next", "max.json"],
        &["show", "s.json", "99"],
        &["add", "s.json", "--name", "x", "--deps", "42"],
        &["update", "s.json", "open", "--deps", "search"],
        &["start", "s.json", "search"],
        &["complete", "s.json"],
        &["add", "s.json", "--name", "x", "--assignee", "robot"],
        &["add", "s.json", "--name", " "],
        &["list", "s.json", "--status", "stuck"],
        &["status", "missing.json"],
        &["status", "broken.json"],
        &["next", "s.json"],
        &["update", "s.json", "open", "--name", "x"],
        &["start", "s.json", "open"],
        &["pause", "s.json"],
        &["pause", "s.json"],
    ];
    let mut text = String::new();
    for args in cases {
        let run = t.planc(&[&["run", "--json"], *args].concat());
        text.push_str(&format!("$ planc run --json {}\n", args.join(" ")));
        if run.code == 0 {
            text.push_str("(ok)\n\n");
        } else {
            let envelope = run.json();
            text.push_str(&serde_json::to_string_pretty(&envelope["error"]).unwrap());
            text.push_str("\n\n");
        }
    }
    // Paths of the temporary directory vary; keep the file names.
    let dir = t.dir().display().to_string();
    insta::assert_snapshot!("error_envelopes", text.replace(&dir, "TMP"));
}

#[test]
fn init_compiles_with_parameters() {
    let t = Test::temp().file(
        "p.plan",
        "plan shop {\n    goal \"Buy {item}\"\n    param item: string\n    task find \"Find {item}\"\n}\n",
    );
    let run = t.planc(&["run", "init", "p.plan", "-o", "s.json"]);
    assert_eq!(run.code, 1, "a parameter without default must be given");
    assert!(run.stderr.contains("missing_param"), "{}", run.stderr);
    t.ok(&["init", "p.plan", "-o", "s.json", "--set", "item=keyboard"]);
    let state = t.state("s.json");
    assert_eq!(state["meta"]["goal"], "Buy keyboard");
    assert_eq!(state["tasks"][0]["name"], "Find keyboard");
    assert_eq!(
        t.planc(&["run", "init", "p.plan", "-o", "x.json", "--set", "novalue"])
            .code,
        2
    );
}

const TEAM_PLAN: &str = r#"plan report {
    goal "Write a market report"
    role researcher "Finds sources"
    role writer "Writes"
    task sources "Collect sources" { assignee researcher }
    task outline "Draft an outline" { assignee writer }
    task draft "Write the draft" { assignee writer after sources, outline }
}
"#;

/// The Plan Tool: agents in parallel, one per role, on one state file.
#[test]
fn parallel_agents_by_assignee() {
    let t = Test::temp().file("p.plan", TEAM_PLAN);
    t.ok(&["init", "p.plan", "-o", "s.json"]);
    assert_eq!(
        t.ok(&["next", "s.json", "--assignee", "researcher"])["task"]["key"],
        "sources"
    );
    assert_eq!(
        t.ok(&["next", "s.json", "--assignee", "writer"])["task"]["key"],
        "outline"
    );
    let state = t.state("s.json");
    assert_eq!(
        tasks(&state),
        s(&[(1, "in_progress"), (2, "in_progress"), (3, "pending")])
    );
    let waiting = t.ok(&["next", "s.json", "--assignee", "writer"]);
    assert_eq!(waiting["reason"], "waiting");
    assert_eq!(waiting["in_progress"], json!([1, 2]));
    t.ok(&["complete", "s.json", "outline", "--result", "outline ok"]);
    assert_eq!(
        t.ok(&["ready", "s.json", "--assignee", "writer"])["count"],
        0
    );
    t.ok(&["complete", "s.json", "sources", "--result", "12 sources"]);
    assert_eq!(
        t.ok(&["ready", "s.json", "--assignee", "writer"])["count"],
        1
    );
    let list = t.ok(&[
        "list",
        "s.json",
        "--assignee",
        "writer",
        "--status",
        "completed",
    ]);
    assert_eq!(list["filtered"], 1);
    assert_eq!(
        t.ok(&["next", "s.json", "--assignee", "writer"])["task"]["key"],
        "draft"
    );
}

/// A live state is still a plan document: it validates against `planc schema`.
#[test]
fn states_validate_against_the_plan_schema() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["add", "s.json", "--name", "popup", "--after", "1"]);
    t.ok(&["fail", "s.json", "--error", "x"]);
    t.ok(&["observe", "s.json", "--message", "[Step] more"]);
    let schema: serde_json::Value = serde_json::from_str(&t.planc(&["schema"]).stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let state = t.state("s.json");
    let errors: Vec<String> = validator
        .iter_errors(&state)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
