//! Seed 003's agent driving planc as the steps system does: each round's
//! reply (its text and tool calls) goes to `planc run observe` or to the
//! `steps` dialect's `observe` over MCP stdio. The first reply that calls
//! a tool creates the plan, `[Step]` lines may come later, a restated plan
//! adds nothing, a transition word is a signal (not a verdict), a plan made
//! from replies has the steps system's iteration limit, and "继续" resumes
//! with where the plan stands after the message.

use crate::support::mcp::McpClient;
use crate::support::Test;
use serde_json::{json, Value};

/// `planc run observe --session KEY` of `message` with the tools called.
fn observe(t: &Test, key: &str, message: &str, tools: &[&str]) -> Value {
    let mut args = vec!["observe", "--session", key, "--message", message];
    for tool in tools {
        args.extend(["--tool-call", tool]);
    }
    t.ok(&args)
}

fn session(t: &Test, key: &str) -> Value {
    t.state(&format!(".sessions/{key}/plan.json"))
}

/// Each task's status and result.
fn tasks(state: &Value) -> Vec<(String, Value)> {
    state["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["status"].as_str().unwrap().to_owned(),
                t["result"].clone(),
            )
        })
        .collect()
}

const PLAN: &str =
    "I'll check the price.\n[Step] Open amazon.com\n[Step] Search for Sony WH-1000XM5\n\
                    [Step] Read the price of the first result";

/// The two reported bugs: "Let me look at the page again" completed step 1;
/// "The page is now loaded fully" completed step 2 and cut its result to
/// "The page is".
#[test]
fn a_transition_word_inside_a_step_completes_nothing() {
    let t = Test::temp();
    let k = "bugs";
    observe(&t, k, PLAN, &["browser_navigate"]);
    let data = observe(
        &t,
        k,
        "Let me look at the page again",
        &["browser_screenshot"],
    );
    assert_eq!(data["completed_by"], Value::Null, "{data}");
    assert_eq!(data["current_task"]["id"], 1);
    let data = observe(&t, k, "Amazon is open [Done]", &[]);
    assert_eq!(data["current_task"]["id"], 2);
    observe(
        &t,
        k,
        "Typing the product name into the search box.",
        &["browser_type"],
    );
    let data = observe(
        &t,
        k,
        "The page is now loaded fully",
        &["browser_screenshot"],
    );
    assert_eq!(data["completed_by"], Value::Null, "{data}");
    assert_eq!(data["current_task"]["id"], 2);
    assert_eq!(data["step_rounds"], 2);
    // A sentence that turns to the next step's work does move on; the
    // step's result is what came before it.
    let data = observe(
        &t,
        k,
        "The page is now loaded fully. Now reading the first result's price.",
        &["browser_get_text"],
    );
    assert_eq!(
        (data["completed_by"].clone(), data["matched"].clone()),
        (json!("transition"), json!("Now"))
    );
    assert_eq!(data["current_task"]["id"], 3);
    assert_eq!(
        tasks(&session(&t, k))[1],
        (
            "completed".to_owned(),
            json!("The page is now loaded fully.")
        )
    );
}

/// A tool call that belongs to the next step moves on without any word.
#[test]
fn a_tool_call_of_the_next_step_moves_on() {
    let t = Test::temp();
    let reply = |text: &str, calls: Value| {
        json!({"role": "assistant", "content": text, "tool_calls": calls}).to_string()
    };
    let run = |stdin: String| {
        let run = t.planc_with_stdin(
            &[
                "run",
                "--json",
                "observe",
                "--session",
                "jd",
                "--assistant-json",
            ],
            &stdin,
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["data"].clone()
    };
    let call = |name: &str, args: Value| json!([{"id": "c", "type": "function", "function": {"name": name, "arguments": args.to_string()}}]);
    run(reply(
        "[Step] 打开京东首页\n[Step] 搜索“机械键盘”\n[Step] 加入购物车",
        call("browser_navigate", json!({"url": "https://www.jd.com"})),
    ));
    let data = run(reply(
        "首页已就绪。",
        call(
            "browser_type",
            json!({"selector": "#key", "text": "机械键盘"}),
        ),
    ));
    assert_eq!(data["completed_by"], "transition", "{data}");
    assert_eq!(data["matched"], "tool browser_type");
    assert_eq!(
        data["actions"][0],
        "The next step's work (tool browser_type) after 1 round(s) on task 1 moves on"
    );
    assert_eq!(data["current_task"]["id"], 2);
}

/// The steps system creates a plan on the first reply that calls a tool;
/// its steps may come in a later round; a restated plan adds no step twice.
#[test]
fn the_first_reply_with_a_tool_call_creates_the_plan() {
    let t = Test::temp();
    // No tool call, no step: no plan.
    assert_eq!(
        t.err(&[
            "observe",
            "--session",
            "s",
            "--message",
            "Sure, one moment."
        ]),
        "PLAN_NOT_FOUND"
    );
    let data = observe(&t, "s", "", &["web_search"]);
    assert_eq!(data["current_task"], Value::Null);
    assert_eq!(data["max_iterations"], 200);
    let state = session(&t, "s");
    assert_eq!(
        state["meta"]["goal"],
        "The work begun with the tool call web_search"
    );
    assert_eq!(state["meta"]["max_iterations"], 200);
    assert_eq!(state["tasks"], json!([]));
    // The steps come in the second round; the first is then running.
    let steps = "Found the pages. Plan:\n[Step] Collect the prices\n[Step] Compare them";
    let data = t.ok(&[
        "observe",
        "--session",
        "s",
        "--goal",
        "ignored: the plan exists",
        "--message",
        steps,
        "--tool-call",
        "web_fetch",
    ]);
    assert_eq!(
        data["actions"],
        json!([
            "Task 1 added",
            "Task 2 added",
            "Started task 1: Collect the prices"
        ])
    );
    // A restated plan adds nothing.
    let data = observe(
        &t,
        "s",
        "To recap:\n[Step] Collect the prices\n[Step]  collect the prices.\n[Step] Compare them",
        &["web_fetch"],
    );
    assert_eq!(
        data["actions"],
        json!([
            "Step \"Collect the prices\" is already task 1: not added again",
            "Step \"collect the prices.\" is already task 1: not added again",
            "Step \"Compare them\" is already task 2: not added again"
        ])
    );
    assert_eq!(session(&t, "s")["tasks"].as_array().unwrap().len(), 2);
    // The goal of a created plan comes from --goal when given.
    let data = t.ok(&[
        "observe",
        "--session",
        "g2",
        "--goal",
        "Compare two prices",
        "--message",
        "",
        "--tool-call",
        "web_search",
    ]);
    assert_eq!(data["iteration_count"], 1);
    assert_eq!(session(&t, "g2")["meta"]["goal"], "Compare two prices");
}

/// OpenAI chat, OpenAI Responses and Anthropic assistant messages are the
/// same reply; what is not one is a usage error that says why.
#[test]
fn assistant_messages_in_three_shapes() {
    let t = Test::temp();
    let shapes = [
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "web_search", "arguments": "{\"query\": \"x\"}"}}]}),
        json!({"output": [{"type": "function_call", "call_id": "1", "name": "web_search", "arguments": "{}"}]}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "web_search", "input": {}}]}),
    ];
    for (i, shape) in shapes.iter().enumerate() {
        let key = format!("shape{i}");
        let run = t.planc_with_stdin(
            &["run", "observe", "--session", &key, "--assistant-json"],
            &shape.to_string(),
        );
        assert_eq!(run.code, 0, "{shape}: {}", run.stderr);
        assert_eq!(
            session(&t, &key)["meta"]["goal"],
            "The work begun with the tool call web_search"
        );
    }
    let run = t.planc_with_stdin(
        &["run", "observe", "--session", "bad", "--assistant-json"],
        "{\"tool_calls\": [{\"function\": {}}]}",
    );
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (2, "error: --assistant-json: a tool call has no `name`\n")
    );
    let run = t.planc_with_stdin(
        &["run", "observe", "--session", "bad", "--assistant-json"],
        "not json",
    );
    assert_eq!(run.code, 2);
    assert!(run
        .stderr
        .starts_with("error: --assistant-json: the message is not JSON"));
    assert!(!t.path(".sessions/bad/plan.json").exists());
}

/// A plan made from replies pauses at the steps system's limit (200
/// iterations) with a summary; "继续" resumes it, and its summary counts the
/// step the same message finished.
#[test]
fn the_iteration_limit_and_a_resume_that_finishes_a_step() {
    let t = Test::temp();
    t.ok(&[
        "observe",
        "--session",
        "long",
        "--goal",
        "下载腾讯5年财报并制作图表",
        "--message",
        "",
        "--tool-call",
        "web_search",
    ]);
    for _ in 2..200 {
        observe(&t, "long", "还在查找", &["web_fetch"]);
    }
    // The steps come in the 200th round: the plan pauses there.
    let data = observe(
        &t,
        "long",
        "[Step] 查找财报\n[Step] 下载财报\n[Step] 制作图表",
        &["web_fetch"],
    );
    assert_eq!(data["iteration_count"], 200);
    assert_eq!(data["paused"], true);
    assert_eq!(
        data["summary"]["text"],
        "已达到迭代上限（200 轮），计划已暂停。进度：0/3。已完成：无。当前：#1 查找财报。剩余：#2 下载财报；#3 制作图表。说“继续”恢复执行。"
    );
    assert_eq!(
        t.err(&["observe", "--session", "long", "--message", "还在吗"]),
        "PLAN_NOT_ACTIVE"
    );
    let data = observe(&t, "long", "继续。找到了财报链接 [完成]", &[]);
    assert_eq!(data["resumed"], true);
    assert_eq!(data["current_task"]["id"], 2);
    assert_eq!(
        data["summary"]["text"],
        "计划已恢复。进度：1/3。已完成：#1 查找财报。当前：#2 下载财报。剩余：#3 制作图表。"
    );
}

/// `--target steps` writes each step's progress and the plan id the steps
/// system gives a plan: `plan_` and the milliseconds of its creation.
#[test]
fn the_steps_target_writes_progress_and_a_plan_ms_id() {
    let t = Test::temp();
    observe(&t, "ids", PLAN, &["browser_navigate"]);
    let run = t.expect(
        &[
            "build",
            ".sessions/ids/plan.json",
            "--target",
            "steps",
            "-o",
            "steps.json",
        ],
        0,
    );
    assert_eq!(run.stderr, "");
    let steps = t.state("steps.json");
    let created = session(&t, "ids")["meta"]["created_at"].clone();
    let id = steps["id"].as_str().unwrap();
    let ms: u64 = id.strip_prefix("plan_").unwrap().parse().unwrap();
    assert_eq!(ms % 1000, 0, "{id}: from created_at {created}");
    assert!((1_700_000_000_000..4_000_000_000_000).contains(&ms), "{id}");
    assert_eq!(
        steps["steps"][1],
        json!({"id": "step_2", "description": "Search for Sony WH-1000XM5", "status": "pending",
               "result": null, "progress": {"current": 1, "total": 1},
               "planc": {"id": 2, "dependencies": [1]}})
    );
    // Loaded back, the plan keeps its own id.
    let back = t.expect(&["build", "steps.json"], 0).json();
    assert_eq!(back["meta"]["id"], "ids");
    assert_eq!(back["tasks"][1].get("progress"), None);
}

/// The same over MCP stdio, as the steps system's agent would call it.
#[test]
fn the_steps_dialect_over_mcp_stdio() {
    let t = Test::temp();
    let mut client = McpClient::connect(t.dir(), &["--session", "m", "--dialect", "steps"]);
    let observe = |client: &mut McpClient, arguments: Value| {
        let result = client.call("observe", arguments.clone());
        assert_eq!(result["isError"], false, "{arguments}: {result}");
        result["structuredContent"].clone()
    };
    // Neither a message nor an assistant message: refused, nothing made.
    let refused = client.call("observe", json!({"goal": "g"}));
    assert_eq!(refused["isError"], true);
    assert_eq!(
        refused["structuredContent"]["error"]["code"],
        "INVALID_ARGUMENT"
    );
    // An Anthropic message with a tool call creates the plan, without steps.
    let first = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Let me open the site first."},
        {"type": "tool_use", "id": "t1", "name": "browser_navigate", "input": {"url": "https://www.amazon.com"}}]});
    let answer = observe(
        &mut client,
        json!({"assistant_message": first.to_string(), "goal": "Check the price of the Sony WH-1000XM5"}),
    );
    assert_eq!(answer["plan"]["steps"], json!([]));
    let id = answer["plan"]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("plan_") && id.len() == 18, "{id}");
    // The steps come later, with tool calls as a list.
    let answer = observe(
        &mut client,
        json!({"message": PLAN, "tool_calls": [{"name": "browser_screenshot"}]}),
    );
    assert_eq!(answer["plan"]["steps"][0]["status"], "running");
    assert_eq!(
        answer["plan"]["steps"][2]["progress"],
        json!({"current": 1, "total": 1})
    );
    let answer = observe(
        &mut client,
        json!({"message": "Let me look at the page again", "tool_calls": [{"name": "browser_screenshot"}]}),
    );
    assert_eq!(answer["completed_by"], Value::Null);
    assert_eq!(answer["plan"]["current_step_index"], 0);
    // An OpenAI chat message whose tool call belongs to the next step.
    let typed = json!({"role": "assistant", "content": "Amazon is open.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "browser_type",
         "arguments": "{\"selector\": \"#twotabsearchtextbox\", \"text\": \"Sony WH-1000XM5\"}"}}]});
    let answer = observe(&mut client, json!({"assistant_message": typed}));
    assert_eq!(answer["completed_by"], "transition");
    assert_eq!(answer["plan"]["current_step_index"], 1);
    assert_eq!(answer["plan"]["steps"][0]["result"], "Amazon is open.");
    let answer = observe(
        &mut client,
        json!({"message": "The page is now loaded fully", "tool_calls": [{"name": "browser_screenshot", "arguments": "{}"}]}),
    );
    assert_eq!(answer["completed_by"], Value::Null);
    assert_eq!(answer["plan"]["current_step_index"], 1);
    // A restated plan adds nothing.
    let answer = observe(&mut client, json!({"message": PLAN}));
    assert_eq!(answer["plan"]["steps"].as_array().unwrap().len(), 3);
    assert_eq!(answer["plan"]["id"], id.as_str());
    // Both shapes at once: refused.
    let both = client.call(
        "observe",
        json!({"message": "x", "assistant_message": first.to_string()}),
    );
    assert_eq!(
        both["structuredContent"]["error"]["message"],
        "give either `assistant_message` or `message` (with `tool_calls`), not both"
    );
    assert!(client.close().success());
}

/// Over MCP stdio: an OpenAI Responses output creates the plan (its steps
/// come later), which pauses at 200 iterations; "继续" that finishes a
/// step resumes it with a summary that counts that step.
#[test]
fn the_iteration_limit_over_mcp_stdio() {
    let t = Test::temp();
    let mut client = McpClient::connect(t.dir(), &["--session", "r", "--dialect", "steps"]);
    let mut observe = |arguments: Value| {
        let result = client.call("observe", arguments.clone());
        assert_eq!(result["isError"], false, "{arguments}: {result}");
        result["structuredContent"].clone()
    };
    let responses = json!([
        {"type": "reasoning", "summary": []},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text",
         "text": "我先搜索一下。"}]},
        {"type": "function_call", "call_id": "c1", "name": "web_search",
         "arguments": "{\"query\": \"腾讯 年报\"}"}
    ]);
    let first = observe(json!({"assistant_message": responses.to_string(),
                               "goal": "下载腾讯5年财报并制作图表"}));
    assert_eq!(first["plan"]["steps"], json!([]));
    for _ in 2..200 {
        observe(json!({"message": "还在查找", "tool_calls": [{"name": "web_fetch"}]}));
    }
    let paused = observe(json!({"message": "[Step] 查找财报\n[Step] 下载财报\n[Step] 制作图表"}));
    assert_eq!(paused["plan"]["status"], "paused");
    assert_eq!(paused["plan"]["iteration_count"], 200);
    assert_eq!(
        paused["summary"]["text"],
        "已达到迭代上限（200 轮），计划已暂停。进度：0/3。已完成：无。当前：#1 查找财报。剩余：#2 下载财报；#3 制作图表。说“继续”恢复执行。"
    );
    let resumed = observe(json!({"message": "继续。找到了财报链接 [完成]"}));
    assert_eq!(resumed["resumed"], true);
    assert_eq!(resumed["plan"]["status"], "running");
    assert_eq!(
        resumed["summary"]["text"],
        "计划已恢复。进度：1/3。已完成：#1 查找财报。当前：#2 下载财报。剩余：#3 制作图表。"
    );
    assert!(client.close().success());
}
