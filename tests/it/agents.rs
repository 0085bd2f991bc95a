//! The agent model through the command line (docs/agents.md): identities
//! (`--agent`, `PLANC_AGENT`), holders, leases with a real clock, heartbeats,
//! and retries as the PlanManager API says.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{planc, Test};
use serde_json::{json, Value};

fn wide_plan(n: usize) -> String {
    let mut text = String::from("plan wide {\n    goal \"Many independent tasks\"\n");
    for i in 1..=n {
        text.push_str(&format!("    task t{i} \"Task {i}\"\n"));
    }
    text.push_str("}\n");
    text
}

/// `planc run --json ARGS…` in `dir`, as agent `agent`: the envelope.
fn as_agent(dir: &std::path::Path, agent: &str, args: &[&str]) -> Value {
    let output = planc()
        .arg("run")
        .arg("--json")
        .args(args)
        .current_dir(dir)
        .env("PLANC_AGENT", agent)
        .env("PLANC_LOCK_TIMEOUT", "120")
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The issue's finding, reproduced: eight agents (processes) on one state,
/// each doing next / complete without ids. None ever completes another's task.
#[test]
fn parallel_agents_never_complete_each_others_tasks() {
    const AGENTS: usize = 8;
    const TASKS: usize = 40;
    let t = Test::temp().file("wide.plan", &wide_plan(TASKS));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let dir = t.dir().to_path_buf();
    let workers: Vec<_> = (0..AGENTS)
        .map(|a| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let agent = format!("agent-{a}");
                let mut done = Vec::new();
                loop {
                    let next = as_agent(&dir, &agent, &["next", "s.json"]);
                    assert_eq!(next["success"], true, "{next}");
                    let Some(id) = next["data"]["task"]["id"].as_u64() else {
                        break;
                    };
                    assert_eq!(next["data"]["task"]["holder"]["agent"], agent.as_str());
                    let result = format!("done by {agent}");
                    let complete =
                        as_agent(&dir, &agent, &["complete", "s.json", "--result", &result]);
                    assert_eq!(complete["success"], true, "{complete}");
                    assert_eq!(
                        complete["data"]["task_id"], id,
                        "{agent} completed another agent's task"
                    );
                    done.push(id);
                }
                (agent, done)
            })
        })
        .collect();
    let mut finished = 0;
    let state_after = |t: &Test| t.state("s.json");
    let mut by_agent = Vec::new();
    for worker in workers {
        let (agent, done) = worker.join().unwrap();
        finished += done.len();
        by_agent.push((agent, done));
    }
    assert_eq!(finished, TASKS);
    let state = state_after(&t);
    assert_eq!(state["state"]["status"], "completed");
    for (agent, done) in by_agent {
        for id in done {
            let task = &state["tasks"][id as usize - 1];
            assert_eq!(task["result"], format!("done by {agent}"));
            assert_eq!(task.get("holder"), None, "a finished task has no holder");
        }
    }
    // The log says who did what.
    let events = t.events("s.json");
    let started: Vec<&Value> = events
        .iter()
        .flat_map(|r| r["events"].as_array().unwrap())
        .filter(|e| e["kind"] == "started")
        .collect();
    assert_eq!(started.len(), TASKS);
    assert!(started
        .iter()
        .all(|e| e["agent"].as_str().unwrap().starts_with("agent-")));
}

#[test]
fn without_an_identity_an_id_less_complete_is_refused_when_two_tasks_run() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json"]);
    t.ok(&["next", "s.json"]);
    let before = std::fs::read(t.path("s.json")).unwrap();
    let envelope = t.op(&["complete", "s.json", "--result", "x"], 1);
    assert_eq!(
        envelope["error"],
        json!({
            "code": "AMBIGUOUS_TASK",
            "message": "No task ID given and the plan has 2 tasks in progress (1, 2); name the task (its ID after the state file), or say which agent you are (--agent, PLANC_AGENT)",
            "details": {"in_progress": [1, 2]},
        })
    );
    assert_eq!(
        std::fs::read(t.path("s.json")).unwrap(),
        before,
        "nothing changed"
    );
    let run = t.planc(&["run", "fail", "s.json"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("error[AMBIGUOUS_TASK]: "),
        "{}",
        run.stderr
    );
    assert_eq!(t.ok(&["complete", "s.json", "2"])["task_id"], 2);
    // One task in progress: a caller without an identity may finish it.
    assert_eq!(t.ok(&["complete", "s.json"])["task_id"], 1);
    assert_eq!(
        t.err(&["next", "s.json", "--agent", ""]),
        "INVALID_ARGUMENT"
    );
}

#[test]
fn with_identities_each_finishes_its_own_and_nobody_elses() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json", "--agent", "alice"]);
    t.ok(&["next", "s.json", "--agent", "bob"]);
    // The tasks agents hold are not a caller's without an identity.
    assert_eq!(t.err(&["complete", "s.json"]), "NO_CURRENT_TASK");
    assert_eq!(
        t.ok(&["complete", "s.json", "--agent", "bob"])["task_id"],
        2
    );
    assert_eq!(
        t.ok(&["show", "s.json", "--agent", "alice"])["holder"]["agent"],
        "alice"
    );
    assert_eq!(t.ok(&["show", "s.json", "--agent", "bob"]), Value::Null);
    assert_eq!(
        t.err(&["complete", "s.json", "--agent", "bob"]),
        "NO_CURRENT_TASK"
    );
}

#[test]
fn views_show_who_holds_each_task() {
    let t = Test::temp().file("wide.plan", &wide_plan(3));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t.ok(&["next", "s.json", "--agent", "alice", "--lease", "10m"]);
    t.ok(&["next", "s.json", "--agent", "bob"]);
    let state = t.state("s.json");
    let holder = &state["tasks"][0]["holder"];
    assert_eq!(holder["agent"], "alice");
    assert_eq!(holder["lease_seconds"], 600);
    assert!(holder["since"].as_str().unwrap().ends_with('Z'));
    assert!(holder["lease_expires_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        state["tasks"][1]["holder"],
        json!({"agent": "bob", "since": state["tasks"][1]["holder"]["since"]})
    );

    let list = t.planc(&["run", "list", "s.json"]).stdout;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines[0],
        "ID  STATUS       NAME    HOLDER                AFTER  RETRIES"
    );
    // The lease's end, as a time of day (the table of docs/runner.md).
    let until = holder["lease_expires_at"].as_str().unwrap();
    assert_eq!(
        lines[1],
        format!(
            "1   in_progress  Task 1  alice until {}  -      -",
            &until[11..19]
        )
    );
    assert_eq!(
        lines[2],
        "2   in_progress  Task 2  bob                   -      -"
    );
    assert_eq!(
        lines[3],
        "3   pending      Task 3  -                     -      -"
    );
    let show = t.planc(&["run", "show", "s.json", "1"]).stdout;
    assert!(show.contains("\n  held by alice since "), "{show}");

    let prompt = t
        .planc(&["run", "prompt", "s.json", "--agent", "bob"])
        .stdout;
    assert!(
        prompt.contains("- Current task: #2 Task 2 [held by bob]\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- In progress: #1 Task 1 [held by alice]\n"),
        "{prompt}"
    );

    let graph = t.planc(&["graph", "s.json"]).stdout;
    assert!(graph.contains("held by alice"), "{graph}");
    let status = t.ok(&["status", "s.json"]);
    assert_eq!(status["in_progress_tasks"], 2);
    let watch = t.planc(&["run", "watch", "s.json", "--no-follow"]).stdout;
    let started: Vec<&str> = watch.lines().filter(|l| l.contains(" started ")).collect();
    assert!(
        started[0].ends_with(" started #1 (alice): Started task 1: Task 1"),
        "{watch}"
    );
    assert!(
        started[1].ends_with(" started #2 (bob): Started task 2: Task 2"),
        "{watch}"
    );
}

#[test]
fn an_expired_lease_hands_the_task_to_the_next_agent() {
    let t = Test::temp().file("wide.plan", &wide_plan(2));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    assert_eq!(
        t.ok(&["next", "s.json", "--agent", "crashed", "--lease", "1s"])["task"]["id"],
        1
    );
    std::thread::sleep(Duration::from_millis(2200));
    // Reading already shows it pending again; the next change records it.
    assert_eq!(t.ok(&["show", "s.json", "1"])["task"]["status"], "pending");
    assert_eq!(
        t.ok(&["next", "s.json", "--agent", "rescuer"])["task"]["id"],
        1,
        "the next startNextTask takes it"
    );
    let events = t.events("s.json");
    let last = &events.last().unwrap()["events"];
    assert_eq!(last[0]["kind"], "lease_expired");
    assert_eq!(last[0]["task_id"], 1);
    assert_eq!(last[0]["agent"], "crashed");
    assert_eq!(last[1]["kind"], "started");
    assert_eq!(last[1]["agent"], "rescuer");
    assert_eq!(
        t.err(&["complete", "s.json", "--agent", "crashed"]),
        "NO_CURRENT_TASK"
    );
    assert_eq!(
        t.planc(&["run", "next", "s.json", "--lease", "soon"]).code,
        2
    );
}

#[test]
fn heartbeats_keep_a_lease_alive() {
    let t = Test::temp().file("wide.plan", &wide_plan(2));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    // A beat every half second keeps a 6 s lease alive past its first 6 s
    // even on a loaded machine, where one `planc` run may take seconds.
    t.ok(&["next", "s.json", "--agent", "worker", "--lease", "6s"]);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(7500) {
        let beat = t.ok(&["heartbeat", "s.json", "--agent", "worker"]);
        assert_eq!(beat["renewed"][0]["task_id"], 1, "{beat}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let task = t.ok(&["show", "s.json", "1"])["task"].clone();
    assert_eq!(task["status"], "in_progress", "alive past its first lease");
    assert_eq!(task["holder"]["agent"], "worker");
    let kinds: Vec<Value> = t
        .events("s.json")
        .iter()
        .flat_map(|r| r["events"].as_array().unwrap().clone())
        .map(|e| e["kind"].clone())
        .collect();
    assert!(kinds.contains(&json!("lease_renewed")));
    assert!(!kinds.contains(&json!("lease_expired")));
    // Someone holding nothing: nothing to renew, nothing written.
    let revision = t.state("s.json")["state"]["revision"].clone();
    assert_eq!(
        t.ok(&["heartbeat", "s.json", "--agent", "idle"])["renewed"],
        json!([])
    );
    assert_eq!(t.state("s.json")["state"]["revision"], revision);
}

#[test]
fn planc_agent_names_the_caller() {
    let t = Test::temp().file("wide.plan", &wide_plan(2));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    let started = as_agent(t.dir(), "from-env", &["next", "s.json"]);
    assert_eq!(started["data"]["task"]["holder"]["agent"], "from-env");
    // --agent wins over the environment.
    let other = as_agent(t.dir(), "from-env", &["next", "s.json", "--agent", "flag"]);
    assert_eq!(other["data"]["task"]["holder"]["agent"], "flag");
}

const RETRY_PLAN: &str = r#"plan retries {
    goal "Retry budgets"
    retry 1
    task a "Uses the plan's budget"
    task b "Opts out" { retry 0 }
    task c "After b" { after b }
}
"#;

#[test]
fn retries_follow_the_task_then_the_plan_then_the_default() {
    let t = Test::temp().file("p.plan", RETRY_PLAN);
    t.ok(&["init", "p.plan", "-o", "s.json"]);
    let state = t.state("s.json");
    assert_eq!(state["meta"]["retry"], 1);
    assert_eq!(state["tasks"][0]["retry"], json!({"max": null, "count": 0}));
    assert_eq!(state["tasks"][1]["retry"], json!({"max": 0, "count": 0}));
    t.ok(&["start", "s.json", "a"]);
    let failed = t.ok(&["fail", "s.json", "--error", "flaky"]);
    assert_eq!(
        (&failed["will_retry"], &failed["retry_budget"]),
        (&json!(true), &json!(1))
    );
    t.ok(&["start", "s.json", "b"]);
    let failed = t.ok(&["fail", "s.json", "--error", "broken"]);
    assert_eq!(failed["will_retry"], false);
    // c waits on a failed task: blocked.
    let blocked = t.ok(&["list", "s.json", "--status", "blocked"]);
    assert_eq!(blocked["tasks"][0]["id"], 3);
    let status = t.planc(&["run", "status", "s.json"]).stdout;
    assert!(status.contains(" · 1 blocked\n"), "{status}");
    // retry puts b back; c can then run once b is done.
    let retried = t.ok(&["retry", "s.json", "b"]);
    assert_eq!(retried["task"]["status"], "pending");
    assert_eq!(t.err(&["retry", "s.json", "b"]), "INVALID_STATUS");
    let run = t.planc(&["run", "retry", "s.json", "b"]);
    assert!(
        run.stderr
            .contains("Task 2 is pending, so it cannot be retried"),
        "{}",
        run.stderr
    );
    t.ok(&["start", "s.json", "b"]);
    t.ok(&["complete", "s.json", "b"]);
    assert_eq!(t.ok(&["next", "s.json"])["task"]["id"], 1);
}

#[test]
fn a_json_plan_retries_by_default_keeps_created_at_and_reads_blocked() {
    let t = Test::temp().file(
        "seed001.json",
        r#"{"meta": {"goal": "g", "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"},
            "state": {"current_task_id": null, "status": "idle"},
            "tasks": [
              {"id": 1, "name": "a", "status": "pending", "dependencies": [], "reasoning": "r", "result": null},
              {"id": 2, "name": "b", "status": "blocked", "dependencies": [1], "reasoning": "r", "result": null}]}"#,
    );
    t.ok(&["init", "seed001.json", "-o", "s.json"]);
    let state = t.state("s.json");
    assert_eq!(state["meta"]["created_at"], "2024-01-01T00:00:00Z");
    assert_ne!(state["meta"]["updated_at"], "2024-01-01T00:00:00Z");
    assert_eq!(state["tasks"][1]["status"], "pending");
    t.ok(&["next", "s.json"]);
    for count in 1..=2 {
        let failed = t.ok(&["fail", "s.json", "--error", "e"]);
        assert_eq!(failed["will_retry"], true, "should_retry defaults to true");
        assert_eq!(failed["retry_count"], count);
        t.ok(&["next", "s.json"]);
    }
    let failed = t.ok(&["fail", "s.json", "--error", "e"]);
    assert_eq!(
        (&failed["will_retry"], &failed["retry_budget"]),
        (&json!(false), &json!(2)),
        "the default budget is two retries"
    );
}

#[test]
fn a_plan_level_retry_is_checked_like_a_task_one() {
    let t = Test::temp()
        .file(
            "big.plan",
            "plan p {\n    goal \"g\"\n    retry 5000\n    task a \"A\"\n}\n",
        )
        .file(
            "twice.plan",
            "plan p {\n    goal \"g\"\n    retry 1\n    retry 2\n    task a \"A\"\n}\n",
        )
        .file(
            "ok.plan",
            "plan p {\n  goal \"g\"\n  retry 3\n  task a \"A\" { retry 0 }\n}\n",
        );
    let run = t.planc(&["check", "big.plan"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("`retry` takes a number from 0 to 1000, not 5000"),
        "{}",
        run.stdout
    );
    let run = t.planc(&["check", "twice.plan"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("duplicate_field"), "{}", run.stdout);
    let built: Value = serde_json::from_str(&t.planc(&["build", "ok.plan"]).stdout).unwrap();
    assert_eq!(built["meta"]["retry"], 3);
    assert_eq!(built["tasks"][0]["retry"], json!({"max": 0, "count": 0}));
    assert_eq!(
        t.planc_with_stdin(
            &["fmt", "-"],
            "plan p {\n  goal \"g\"\n  retry 3\n  task a \"A\" { retry 0 }\n}\n"
        )
        .stdout,
        "plan p {\n    goal \"g\"\n    retry 3\n    task a \"A\" { retry 0 }\n}\n"
    );
}

#[test]
fn a_holder_that_is_not_one_is_named_in_the_diagnostic() {
    let t = Test::temp().file(
        "state.json",
        r#"{"format": "planc/1", "meta": {"goal": "g"}, "tasks": [
             {"id": 1, "name": "a", "status": "in_progress", "dependencies": [],
              "holder": {"agent": "bob", "lease_seconds": "soon"}}]}"#,
    );
    let run = t.planc(&["check", "state.json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("`holder` is not a task holder: invalid type: string \"soon\", expected u64"),
        "{}",
        run.stdout
    );
}
