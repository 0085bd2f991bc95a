//! `planc mcp` spoken to directly, one JSON-RPC line at a time (no SDK, no
//! network): the handshake, the tool list, a tool error and a change.
//! tests/it/mcp_python.rs tests the same server with the official Python SDK.

use std::io::BufReader;
use std::process::Stdio;

use crate::support::mcp::McpClient;
use crate::support::{planc, repo, wait_for_line, KillOnPanic, Test};
use serde_json::{json, Value};

/// Starts `planc mcp ARGS` in the test's directory, after the handshake.
fn connect(t: &Test, args: &[&str]) -> McpClient {
    McpClient::connect(t.dir(), args)
}

#[test]
fn json_rpc_over_stdio() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    let mut client = connect(&t, &["s.json"]);

    let tools = client.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 21);
    assert_eq!(names[1], "startNextTask");
    assert_eq!(names[19], "logEvent");
    assert_eq!(names[20], "observe");
    // Every tool declares its result's schema (the envelope).
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(
            tool["outputSchema"]["required"],
            json!(["success"]),
            "{}",
            tool["name"]
        );
    }

    // An unknown tool is a JSON-RPC error (MCP: invalid params), not a tool result.
    let unknown = client.request(
        "tools/call",
        json!({"name": "completeCurrentTask", "arguments": {}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Unknown tool: completeCurrentTask"),
        "{unknown}"
    );
    // An unknown argument is refused, naming the field.
    let result = client.call("completeTask", json!({"result_mesage": "typo"}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        result["structuredContent"]["error"]["details"]["field"],
        "result_mesage"
    );
    assert_eq!(t.state("s.json")["state"]["revision"], 1, "nothing changed");

    // An operation error is a tool result with isError, carrying the envelope.
    let result = client.call("startTask", json!({"task_id": 99}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "TASK_NOT_FOUND"
    );
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    // So is a call with bad arguments.
    let result = client.call("completeTask", json!({"task_id": [1]}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "INVALID_ARGUMENT"
    );

    let result = client.call("startNextTask", json!({}));
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["data"]["task"]["key"], "open");
    assert_eq!(t.state("s.json")["state"]["current_task_id"], 1);

    let status = client.close();
    assert!(
        status.success(),
        "the server exits cleanly when its input closes"
    );
}

#[test]
fn a_missing_state_is_a_usage_error() {
    let run = Test::temp().planc(&["mcp", "missing.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("planc run init"), "{}", run.stderr);
    let run = Test::temp().planc(&["mcp", "missing.json", "--dialect", "tasks"]);
    assert_eq!(run.code, 2, "the planManager's tools cannot create a plan");
    let run = Test::temp().planc(&["mcp", "missing.json", "--dialect", "yaml"]);
    assert_eq!(run.code, 2);
}

/// The dialects that create plans (the Plan Tool's `create_plan_from_structure`,
/// Plan-Act's `create_plan`) serve a state before it exists.
#[test]
fn a_creating_dialect_starts_without_a_state() {
    let t = Test::temp();
    let mut client = connect(&t, &["new.json", "--dialect", "plan-act"]);
    let result = client.call("get_plan", json!({}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["events"][0]["code"], "PLAN_NOT_FOUND",
        "{result}"
    );
    let result = client.call(
        "create_plan",
        json!({"title": "Search", "steps": ["Open the page", "Search"]}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(t.state("new.json")["tasks"][1]["dependencies"], json!([1]));
    assert!(client.close().success());
}

/// A tool call that waits for a writer stopped while holding the lock gives up
/// after `--lock-timeout` (or PLANC_LOCK_TIMEOUT) with STATE_LOCKED, as
/// `planc run` does, and the server goes on serving.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "faults are injected in debug builds only"
)]
fn a_stopped_lock_holder_times_a_tool_call_out() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    let mut holder = planc()
        .args(["run", "skip", "s.json", "1"])
        .current_dir(t.dir())
        .env("PLANC_FAULT", "stop@locked")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _reap = KillOnPanic(holder.id());
    let mut holder_err = BufReader::new(holder.stderr.take().unwrap());
    wait_for_line(&mut holder_err, "planc: fault injected: stop at locked");

    let mut client = connect(&t, &["s.json", "--lock-timeout", "0.2"]);
    let result = client.call("startNextTask", json!({}));
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(result["structuredContent"]["error"]["code"], "STATE_LOCKED");
    assert_eq!(
        result["structuredContent"]["error"]["details"]["timeout_seconds"],
        0.2
    );
    // Queries need no lock, and the next change goes through.
    let result = client.call("getPlanStatus", json!({}));
    assert_eq!(result["isError"], false);
    let result = client.call("startNextTask", json!({}));
    assert_eq!(result["isError"], false, "{result}");
    assert!(client.close().success());
}
