//! Seed 000's and seed 001's agents as they drive planc (issue 31, items 2,
//! 3, 8 and 9): over MCP on standard streams with the seed's own tools and
//! arguments (`planc mcp --dialect tasks|planc`), and through `planc run`.
//! Each agent must never reach a dead end, never change a task another agent
//! holds unless it says it takes it over, never see another agent's task as
//! its own, and never get an id handed out twice.

use crate::support::mcp::McpClient;
use crate::support::{repo, Test};
use serde_json::{json, Value};

/// A plan of `n` tasks with no dependencies: all executable at once.
fn wide_plan(n: usize) -> String {
    let mut text = String::from("plan wide {\n    goal \"Independent tasks\"\n");
    for i in 1..=n {
        text.push_str(&format!("    task t{i} \"Task {i}\"\n"));
    }
    text.push_str("}\n");
    text
}

/// A state `s.json` made from a wide plan of `n` tasks.
fn wide_state(n: usize) -> Test {
    let t = Test::temp().file("wide.plan", &wide_plan(n));
    t.ok(&["init", "wide.plan", "-o", "s.json"]);
    t
}

/// A refused call's structured content, asserting it was refused.
fn refused(client: &mut McpClient, tool: &str, arguments: Value) -> Value {
    let result = client.call(tool, arguments.clone());
    assert_eq!(result["isError"], true, "{tool} {arguments}: {result}");
    result["structuredContent"].clone()
}

/// An accepted call's structured content, asserting it was accepted.
fn accepted(client: &mut McpClient, tool: &str, arguments: Value) -> Value {
    let result = client.call(tool, arguments.clone());
    assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
    result["structuredContent"].clone()
}

/// The argument names a dialect's tools accept, from its `tools/list`.
fn accepted_arguments(client: &mut McpClient) -> Vec<String> {
    let tools = client.request("tools/list", json!({}));
    let mut names = Vec::new();
    for tool in tools["result"]["tools"].as_array().unwrap() {
        if let Some(properties) = tool["inputSchema"]["properties"].as_object() {
            names.extend(properties.keys().cloned());
        }
    }
    names
}

/// Seed 000 (item 2): after two `startNextTask`, `completeCurrentTask` and
/// `failCurrentTask` follow the one cursor — the last task the caller
/// started — and a refusal never suggests an argument the tools refuse.
#[test]
fn seed_000_completes_the_last_task_it_started() {
    for agent in [None, Some("bob")] {
        let t = wide_state(3);
        let mut args = vec!["s.json", "--dialect", "tasks"];
        if let Some(agent) = agent {
            args.extend(["--agent", agent]);
        }
        let mut client = McpClient::connect(t.dir(), &args);
        assert_eq!(accepted(&mut client, "startNextTask", json!({}))["id"], 1);
        assert_eq!(accepted(&mut client, "startNextTask", json!({}))["id"], 2);
        // Another agent starts a task meanwhile: not this caller's cursor.
        t.ok(&["next", "s.json", "--agent", "carol"]);
        assert_eq!(
            accepted(
                &mut client,
                "completeCurrentTask",
                json!({"result_message": "two"})
            ),
            json!({"success": true, "message": "Task 2 marked as completed."}),
            "{agent:?}"
        );
        assert_eq!(
            accepted(
                &mut client,
                "failCurrentTask",
                json!({"error_message": "one"})
            ),
            json!({"success": true, "message": "Task 1 marked as failed."}),
            "{agent:?}"
        );
        let state = t.state("s.json");
        assert_eq!(state["tasks"][1]["status"], "completed");
        assert_eq!(state["tasks"][1]["result"], "two");
        assert_eq!(state["tasks"][0]["status"], "failed");
        assert_eq!(
            state["tasks"][2]["status"], "in_progress",
            "carol's task untouched"
        );
        // Nothing left to complete: the advice names the seed's own tools only.
        let refusal = refused(
            &mut client,
            "completeCurrentTask",
            json!({"result_message": "x"}),
        );
        assert_eq!(refusal["code"], "NO_CURRENT_TASK");
        let message = refusal["message"].as_str().unwrap();
        assert!(
            message.ends_with("start one with startNextTask"),
            "{message}"
        );
        let offered = accepted_arguments(&mut client);
        for word in ["task_id", "agent", "takeover"] {
            assert!(
                !message.contains(word) || offered.iter().any(|a| a == word),
                "`{message}` suggests `{word}`, which the tools refuse"
            );
        }
        client.close();
    }
}

/// Every refusal of the `tasks` dialect in the scenario of the issue names
/// only arguments its tools take.
#[test]
fn seed_000_refusals_suggest_only_what_its_tools_take() {
    let t = wide_state(2);
    let mut client = McpClient::connect(t.dir(), &["s.json", "--dialect", "tasks"]);
    let offered = accepted_arguments(&mut client);
    accepted(&mut client, "startNextTask", json!({}));
    t.ok(&["pause", "s.json"]);
    let paused = refused(
        &mut client,
        "completeCurrentTask",
        json!({"result_message": "x"}),
    );
    assert_eq!(paused["code"], "PLAN_NOT_ACTIVE");
    assert_eq!(
        paused["message"],
        "The plan is paused; it must be resumed (`planc run resume`) before it changes"
    );
    for refusal in [paused] {
        let message = refusal["message"].as_str().unwrap();
        for word in ["task_id", "agent", "resumePlan", "takeover"] {
            assert!(
                !message.contains(word) || offered.iter().any(|a| a == word),
                "{message}"
            );
        }
    }
    client.close();
}

/// Item 3 over MCP (`planc` dialect): bob's task is bob's. alice's
/// complete, fail, skip are refused with TASK_HELD naming bob and his
/// lease; `takeover: true` goes ahead and is logged as its own event.
#[test]
fn another_agents_task_is_refused_unless_taken_over_over_mcp() {
    let t = wide_state(2);
    let mut client = McpClient::connect(t.dir(), &["s.json"]);
    let started = client.data("startNextTask", json!({"agent": "bob", "lease": "5m"}));
    assert_eq!(started["task"]["holder"]["agent"], "bob");
    let before = std::fs::read(t.path("s.json")).unwrap();
    for (tool, arguments) in [
        (
            "completeTask",
            json!({"task_id": 1, "result": "x", "agent": "alice"}),
        ),
        ("failTask", json!({"task_id": 1, "agent": "alice"})),
        ("skipTask", json!({"task_id": 1, "agent": "alice"})),
        ("startTask", json!({"task_id": 1, "agent": "alice"})),
        ("completeTask", json!({"task_id": 1, "result": "x"})),
    ] {
        let refusal = refused(&mut client, tool, arguments);
        let error = &refusal["error"];
        assert_eq!(error["code"], "TASK_HELD", "{tool}: {refusal}");
        assert_eq!(error["details"]["task_id"], 1);
        assert_eq!(error["details"]["holder"]["agent"], "bob");
        assert_eq!(error["details"]["holder"]["lease_seconds"], 300);
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("Task 1 is held by agent bob since "),
            "{message}"
        );
        assert!(message.contains(", lease until "), "{message}");
        assert!(
            message.ends_with("only bob may change it, or take it over (takeover: true)"),
            "{message}"
        );
    }
    assert_eq!(
        std::fs::read(t.path("s.json")).unwrap(),
        before,
        "nothing changed"
    );

    let done = client.data(
        "completeTask",
        json!({"task_id": 1, "result": "alice did it", "agent": "alice", "takeover": true}),
    );
    assert_eq!(done["task_id"], 1);
    let state = t.state("s.json");
    assert_eq!(state["tasks"][0]["status"], "completed");
    assert_eq!(state["tasks"][0]["result"], "alice did it");
    let last = t.events("s.json").pop().unwrap();
    let events = last["events"].as_array().unwrap();
    assert_eq!(events[0]["kind"], "task_taken_over");
    assert_eq!(events[0]["task_id"], 1);
    assert_eq!(events[0]["agent"], "alice");
    assert_eq!(
        events[0]["message"],
        "Task 1 taken over from agent bob by agent alice"
    );
    assert_eq!(events[0]["data"]["previous_holder"]["agent"], "bob");
    assert_eq!(events[0]["data"]["new_holder"], "alice");
    assert_eq!(events[1]["kind"], "completed");
    // The tools say so: `takeover` is an argument of the tools that change a task.
    let tools = client.request("tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let takes = tool["inputSchema"]["properties"].get("takeover").is_some();
        let name = tool["name"].as_str().unwrap();
        assert_eq!(takes, planc::mcp::TAKES_OVER.contains(&name), "{name}");
    }
    client.close();
}

/// Item 3 in the `tasks` dialect: an agent (`planc mcp --agent`) cannot
/// skip the task another agent works on unless it says `takeover`.
#[test]
fn seed_000_skips_another_agents_task_only_with_a_takeover() {
    let t = wide_state(2);
    t.ok(&["next", "s.json", "--agent", "bob"]);
    let mut client = McpClient::connect(
        t.dir(),
        &["s.json", "--dialect", "tasks", "--agent", "alice"],
    );
    let refusal = refused(
        &mut client,
        "skipTask",
        json!({"task_id": 1, "reason": "not needed"}),
    );
    assert_eq!(refusal["code"], "TASK_HELD");
    let message = refusal["message"].as_str().unwrap();
    assert!(
        message.ends_with("only bob may change it, or take it over (skipTask's takeover: true)"),
        "{message}"
    );
    assert_eq!(
        accepted(
            &mut client,
            "skipTask",
            json!({"task_id": 1, "reason": "not needed", "takeover": true})
        ),
        json!({"success": true, "message": "Task 1 skipped."})
    );
    client.close();
    let kinds: Vec<Value> = t.events("s.json").pop().unwrap()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(kinds[..2], [json!("task_taken_over"), json!("skipped")]);
}

/// Item 3 on the command line: `--takeover`, and errors that name flags.
#[test]
fn another_agents_task_is_refused_unless_taken_over_on_the_command_line() {
    let t = wide_state(2);
    t.ok(&["next", "s.json", "--agent", "bob", "--lease", "1h"]);
    let run = t.planc(&["run", "complete", "s.json", "1", "--agent", "alice"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("error[TASK_HELD]: Task 1 is held by agent bob since "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .trim_end()
            .ends_with("only bob may change it, or take it over (--takeover)"),
        "{}",
        run.stderr
    );
    assert_eq!(
        t.err(&["skip", "s.json", "1"]),
        "TASK_HELD",
        "no identity either"
    );
    assert_eq!(t.err(&["reset", "s.json", "--agent", "alice"]), "TASK_HELD");
    let done = t.ok(&[
        "fail",
        "s.json",
        "1",
        "--agent",
        "alice",
        "--takeover",
        "--no-retry",
    ]);
    assert_eq!(done["task_id"], 1);
    let record = t.events("s.json").pop().unwrap();
    assert_eq!(record["events"][0]["kind"], "task_taken_over");
    assert_eq!(record["events"][1]["kind"], "failed");
    // bob's own calls still work on what he holds (nothing now).
    assert_eq!(
        t.err(&["complete", "s.json", "--agent", "bob"]),
        "NO_CURRENT_TASK"
    );
}

/// Item 8 (seed 001 over MCP): the caller's task stays its current task
/// after another agent's task finished, and ids are never reused.
#[test]
fn seed_001_keeps_the_callers_task_and_never_reuses_an_id() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["add", "s.json", "--name", "Parallel work"]);
    let mut client = McpClient::connect(t.dir(), &["s.json"]);
    assert_eq!(client.data("startNextTask", json!({}))["task"]["id"], 1);
    let other = client.data("startNextTask", json!({"agent": "bob"}));
    assert_eq!(other["task"]["id"], 6);
    client.data("completeTask", json!({"agent": "bob", "result": "done"}));
    assert_eq!(client.data("getCurrentTask", json!({}))["id"], 1);

    let added = client.data("addTask", json!({"name": "Temporary", "dependencies": [1]}));
    assert_eq!(added["new_task"]["id"], 7);
    client.data("removeTask", json!({"task_id": 7}));
    assert_eq!(t.state("s.json")["state"]["max_task_id"], 7);
    let again = client.data("addTask", json!({"name": "Another", "dependencies": [1]}));
    assert_eq!(again["new_task"]["id"], 8, "7 was removed, not free");
    client.close();
    // The command line reads the mark from the document.
    t.ok(&["remove", "s.json", "8"]);
    assert_eq!(
        t.ok(&["add", "s.json", "--name", "Last"])["new_task"]["id"],
        9
    );
}

/// Item 9: plan-act's `get_plan` before a plan exists answers within its
/// own output schema; the steps dialect's answers PLAN_NOT_FOUND.
#[test]
fn get_plan_before_a_plan_is_plan_not_found_within_the_schema() {
    let t = Test::temp();
    let mut client = McpClient::connect(t.dir(), &["s.json", "--dialect", "plan-act"]);
    let tools = client.request("tools/list", json!({}));
    let get_plan = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "get_plan")
        .unwrap()
        .clone();
    let refusal = refused(&mut client, "get_plan", json!({}));
    assert_eq!(refusal["events"][0]["code"], "PLAN_NOT_FOUND");
    let schema = jsonschema::validator_for(&get_plan["outputSchema"]).unwrap();
    assert!(
        schema.is_valid(&refusal),
        "{refusal} breaks {}",
        get_plan["outputSchema"]
    );
    client.close();

    let mut client = McpClient::connect(t.dir(), &["s.json", "--dialect", "steps"]);
    let refusal = refused(&mut client, "get_plan", json!({}));
    assert_eq!(refusal["error"]["code"], "PLAN_NOT_FOUND", "{refusal}");
    client.close();
}

/// Item 9: the command line's errors name commands, not MCP operations.
#[test]
fn command_line_errors_name_commands() {
    let t = wide_state(2);
    let run = t.planc(&["run", "complete", "s.json"]);
    assert_eq!(
        run.stderr,
        "error[NO_CURRENT_TASK]: No task ID given and there is no current task; start one with `planc run next`\n"
    );
    t.ok(&["pause", "s.json"]);
    let run = t.planc(&["run", "next", "s.json"]);
    assert_eq!(
        run.stderr,
        "error[PLAN_NOT_ACTIVE]: The plan is paused; resume it (`planc run resume`) before changing it\n"
    );
    assert_eq!(
        t.ok(&["status", "s.json"])["reason"],
        "The plan is paused; `planc run resume` continues it"
    );
    // MCP keeps the operations' names.
    let mut client = McpClient::connect(t.dir(), &["s.json"]);
    let refusal = refused(&mut client, "startNextTask", json!({}));
    assert_eq!(
        refusal["error"]["message"],
        "The plan is paused; resume it (resumePlan) before changing it"
    );
    assert_eq!(
        client.data("getPlanStatus", json!({}))["reason"],
        "The plan is paused; resumePlan continues it"
    );
    client.close();
}

/// Item 2 on `planc serve`: each MCP session is its own caller (its agent
/// is the session), so each follows its own cursor; and one session cannot
/// skip the task another works on without `takeover`.
#[test]
fn seed_000_cursors_are_per_session_on_planc_serve() {
    use crate::serve_support::{store_url, McpSession, Server};
    let dir = crate::support::temp_dir("seed-agents-serve");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let created = server.request("POST", "/api/plans?id=w", &[], wide_plan(4).as_bytes());
    assert_eq!(created.status, 201, "{}", created.text());
    let mut a = McpSession::open(&server.addr, "/mcp?dialect=tasks");
    let mut b = McpSession::open(&server.addr, "/mcp?dialect=tasks");
    let w = |mut arguments: Value| {
        arguments["plan_id"] = json!("w");
        arguments
    };
    assert_eq!(a.call("startNextTask", w(json!({}))).0["id"], 1);
    assert_eq!(b.call("startNextTask", w(json!({}))).0["id"], 2);
    assert_eq!(a.call("startNextTask", w(json!({}))).0["id"], 3);
    let done = |session: &mut McpSession, tool: &str, arguments: Value| {
        let (content, is_error) = session.call(tool, w(arguments));
        assert!(!is_error, "{tool}: {content}");
        content["message"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        done(
            &mut b,
            "completeCurrentTask",
            json!({"result_message": "b"})
        ),
        "Task 2 marked as completed."
    );
    assert_eq!(
        done(
            &mut a,
            "completeCurrentTask",
            json!({"result_message": "a"})
        ),
        "Task 3 marked as completed."
    );
    let (refusal, is_error) = b.call("skipTask", w(json!({"task_id": 1, "reason": "b's"})));
    assert!(is_error, "{refusal}");
    assert_eq!(refusal["code"], "TASK_HELD");
    assert_eq!(
        done(&mut a, "failCurrentTask", json!({"error_message": "a"})),
        "Task 1 marked as failed."
    );
}

/// Item 3 through seed 002's status changes: `update_task_status` on a task
/// another agent holds is refused like any other change (the check is the
/// runner's, so every dialect applies it).
#[test]
fn a_status_change_on_another_agents_task_is_task_held_in_every_dialect() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    t.ok(&["next", "s.json", "--agent", "bob"]);
    let plan_id = t.state("s.json")["meta"]["id"].as_str().unwrap().to_owned();
    let before = std::fs::read(t.path("s.json")).unwrap();
    let mut client = McpClient::connect(t.dir(), &["s.json", "--dialect", "plan-tool"]);
    let refusal = refused(
        &mut client,
        "update_task_status",
        json!({"plan_id": plan_id, "task_id": "open", "status": "completed"}),
    );
    assert_eq!(refusal["error"]["code"], "TASK_HELD", "{refusal}");
    client.close();
    let mut client = McpClient::connect(t.dir(), &["s.json", "--dialect", "plan-act"]);
    let refusal = refused(&mut client, "complete_step", json!({"result": "not mine"}));
    assert_eq!(refusal["events"][0]["code"], "NO_CURRENT_TASK", "{refusal}");
    client.close();
    assert_eq!(
        std::fs::read(t.path("s.json")).unwrap(),
        before,
        "nothing changed"
    );
}
