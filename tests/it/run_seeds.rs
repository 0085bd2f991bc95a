//! Seeds 003 and 004 through the real binary: the text protocol's transition
//! words, fallback, sessions, plans from `[Step]` lines and progress
//! summaries; Plan-Act's events, `planc run log` and attachments.

use crate::support::Test;
use serde_json::json;

/// Runs `planc ARGS` and returns its standard output; asserts exit 0.
fn human(t: &Test, args: &[&str]) -> String {
    t.expect(args, 0).stdout
}

/// Runs `planc ARGS` that must be refused as bad usage: its standard error.
fn usage(t: &Test, args: &[&str]) -> String {
    let run = t.expect(args, 2);
    assert_eq!(run.stdout, "");
    run.stderr
}

/// Sends an agent's `message` to the plan at `place` (`--session KEY`, or a
/// state file): the result's data.
fn observe(t: &Test, place: &[&str], message: &str) -> serde_json::Value {
    t.ok(&[&["observe"][..], place, &["--message", message]].concat())
}

/// What moved the step on in an observed round, and the text that did.
fn advanced(data: &serde_json::Value) -> (serde_json::Value, serde_json::Value) {
    (data["completed_by"].clone(), data["matched"].clone())
}

/// The steps system's own scenario (the Tencent reports), in a session: the first
/// message's `[Step]` lines create the plan, a transition word moves on
/// after a round, five quiet rounds make the fallback move on, and "继续"
/// resumes a paused plan with a progress summary.
#[test]
fn seed_003_session_steps_transition_fallback_and_resume() {
    let t = Test::temp();
    let chat = &["--session", "chat-1"][..];
    let first = "帮我下载腾讯5年财报并制作图表\n[Step] 查找财报\n[Step] 下载财报\n[Step] 制作图表";
    assert_eq!(
        human(
            &t,
            &["run", "observe", "--session", "chat-1", "--message", first]
        ),
        "Task 1 added\nTask 2 added\nTask 3 added\nStarted task 1: 查找财报\n\
         iteration 1 (running)\ncurrent: #1 [in_progress] 查找财报 (1 round(s) on it)\n"
    );
    let state = t.state(".sessions/chat-1/plan.json");
    assert_eq!(state["meta"]["goal"], "帮我下载腾讯5年财报并制作图表");
    assert_eq!(state["meta"]["language"], "zh");
    assert_eq!(state["meta"]["id"], "chat-1", "named after its session");
    assert_eq!(
        state["state"],
        json!({"status": "running", "current_task_id": 1, "revision": 2,
               "iteration_count": 1, "step_rounds": [{"task_id": 1, "rounds": 1}]})
    );

    // The plan's first message was the first step's first round: a
    // transition word now moves on; the text before it is the result.
    assert_eq!(
        human(
            &t,
            &[
                "run",
                "observe",
                "--session",
                "chat-1",
                "--message",
                "找到了财报链接。现在下载"
            ]
        ),
        "The transition word \"现在\" after 1 round(s) on task 1 moves on\nTask 1 completed\n\
         Started task 2: 下载财报\niteration 2 (running)\n\
         current: #2 [in_progress] 下载财报 after 1 (0 round(s) on it)\n"
    );
    let state = t.state(".sessions/chat-1/plan.json");
    assert_eq!(state["tasks"][0]["result"], "找到了财报链接。");
    assert_eq!(
        state["state"].get("step_rounds"),
        None,
        "no task has rounds yet"
    );

    // Five rounds on step 2 without a marker or a transition word…
    for rounds in 1..=5 {
        let data = observe(&t, chat, "下载中");
        assert_eq!(advanced(&data), (json!(null), json!(null)));
        assert_eq!(data["step_rounds"], rounds);
    }
    assert_eq!(
        t.state(".sessions/chat-1/plan.json")["state"]["step_rounds"],
        json!([{"task_id": 2, "rounds": 5}])
    );
    // …and the sixth message moves on anyway.
    let data = observe(&t, chat, "下载中");
    assert_eq!(advanced(&data), (json!("fallback"), json!("5 rounds")));
    assert_eq!(
        data["actions"],
        json!([
            "5 round(s) on task 2 without a marker (fallback_rounds 5): moving on",
            "Task 2 completed",
            "Started task 3: 制作图表"
        ])
    );

    // Paused, "请继续" resumes it with where it stands.
    human(&t, &["run", "pause", "--session", "chat-1"]);
    assert_eq!(
        t.err(&[
            "observe",
            "--session",
            "chat-1",
            "--message",
            "图表做好了吗"
        ]),
        "PLAN_NOT_ACTIVE"
    );
    let data = observe(&t, chat, "请继续");
    assert_eq!(data["resumed"], true);
    assert_eq!(
        data["summary"],
        json!({
            "done": 2, "total": 3,
            "finished": [
                {"id": 1, "name": "查找财报", "status": "completed", "result": "找到了财报链接。"},
                {"id": 2, "name": "下载财报", "status": "completed"}
            ],
            "current": {"id": 3, "name": "制作图表", "status": "in_progress"},
            "remaining": [],
            "remaining_count": 0,
            "text": "计划已恢复。进度：2/3。已完成：#1 查找财报；#2 下载财报。当前：#3 制作图表。剩余：无。"
        })
    );
}

/// `resumePlan` answers the same summary, printed by the CLI from the type.
#[test]
fn resume_prints_a_progress_summary() {
    let t = Test::temp().file(
        "p.plan",
        "plan p { goal \"Chart the reports\" task find \"Find the reports\" \
         task get \"Download them\" { after find } task chart \"Chart\" { after get } }",
    );
    human(&t, &["run", "init", "p.plan", "-o", "s.json"]);
    human(&t, &["run", "next", "s.json"]);
    human(
        &t,
        &["run", "complete", "s.json", "--result", "on the IR site"],
    );
    human(&t, &["run", "next", "s.json"]);
    human(&t, &["run", "pause", "s.json"]);
    assert_eq!(
        human(&t, &["run", "resume", "s.json"]),
        "Plan resumed successfully\nPlan resumed. Progress: 1/3. Done: #1 Find the reports. \
         Current: #2 Download them. Left: #3 Chart.\n"
    );
}

/// The iteration limit pauses with the summary; the thresholds come from
/// the plan (`transition_rounds`, `fallback_rounds`) and reach the state.
#[test]
fn plan_thresholds_and_the_iteration_limit() {
    let t = Test::temp().file(
        "p.plan",
        "plan p {\n  goal \"g\"\n  max_iterations 4\n  transition_rounds 0\n  fallback_rounds 2\n  \
         task a \"Open the shop\"\n  task b \"Search the shop\" { after a }\n  task c \"Chart the prices\" { after b }\n}\n",
    );
    human(&t, &["run", "init", "p.plan", "-o", "s.json"]);
    let state = &["s.json"][..];
    let meta = t.state("s.json")["meta"].clone();
    assert_eq!(
        (
            meta["transition_rounds"].clone(),
            meta["fallback_rounds"].clone()
        ),
        (json!(0), json!(2))
    );
    // Round 1 starts task a; with transition_rounds 0 a word acts at once.
    assert_eq!(observe(&t, state, "go")["current_task"]["id"], 1);
    let data = observe(&t, state, "The shop is open, then I search it");
    assert_eq!(advanced(&data), (json!("transition"), json!("then")));
    assert_eq!(t.state("s.json")["tasks"][0]["result"], "The shop is open");
    // fallback_rounds 2: two rounds on b, the third message moves on —
    // but the fourth iteration is the limit, so the plan pauses after it.
    observe(&t, state, "working on b");
    let data = observe(&t, state, "still on b");
    assert_eq!(advanced(&data), (json!(null), json!(null)));
    assert_eq!(data["paused"], true);
    assert_eq!(
        data["summary"]["text"],
        "Reached the iteration limit (4 iterations); the plan is paused. Progress: 1/3. \
         Done: #1 Open the shop. Current: #2 Search the shop. Left: #3 Chart the prices. \
         Say \"continue\" to resume."
    );
    // Rounds are state: `run init` of the state keeps them.
    human(&t, &["run", "init", "s.json", "-o", "copy.json"]);
    assert_eq!(
        t.state("copy.json")["state"]["step_rounds"],
        json!([{"task_id": 2, "rounds": 2}])
    );
    // A resumed plan: b has had its two rounds, this message moves on.
    let data = observe(&t, &["copy.json"], "continue");
    assert_eq!(advanced(&data), (json!("fallback"), json!("2 rounds")));
    assert_eq!(data["current_task"]["id"], 3);
}

/// `planc fmt` keeps the two keywords; `planc check` bounds them, in the
/// .plan language and in JSON alike.
#[test]
fn the_thresholds_are_checked_in_both_languages() {
    let t = Test::temp()
        .file(
            "bad.plan",
            "plan p { goal \"g\" fallback_rounds 0 transition_rounds 1001 task a \"A\" }\n",
        )
        .file(
            "bad.json",
            r#"{"meta": {"goal": "g", "fallback_rounds": 0, "transition_rounds": 1}, "tasks": [{"id": 1, "name": "A"}]}"#,
        );
    let run = t.planc(&["check", "bad.plan", "--format", "json"]);
    assert_eq!(run.code, 1);
    let messages: Vec<String> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        messages,
        [
            "`fallback_rounds` takes a number from 1 to 1000, not 0",
            "`transition_rounds` takes a number from 0 to 1000, not 1001"
        ]
    );
    let run = t.planc(&["check", "bad.json", "--format", "json"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.json()[0]["message"],
        "`meta.fallback_rounds` takes a number from 1 to 1000, not 0"
    );
}

#[test]
fn session_keys_and_state_paths() {
    let t = Test::temp().file("p.plan", "plan p { goal \"g\" task a \"A\" }");
    assert_eq!(
        human(&t, &["run", "init", "p.plan", "--session", "k1"]),
        format!(
            "created {}: plan `p`, 1 task(s)\n",
            std::path::Path::new(".sessions/k1/plan.json").display()
        )
    );
    // With --session the first positional argument is the task.
    human(&t, &["run", "start", "--session", "k1", "a"]);
    assert_eq!(
        human(
            &t,
            &["run", "complete", "--session", "k1", "1", "--result", "ok"]
        ),
        "Task 1 completed\n"
    );
    assert_eq!(
        t.state(".sessions/k1/plan.json")["tasks"][0]["result"],
        "ok"
    );
    let both = "error: give either --session or a state file, not both (`s.json` with --session)\n";
    let not_a_key = |key: &str, why: &str| {
        format!(
            "error: `{key}` is not a session key: it {why}; a key is one name such as `chat-42`\n"
        )
    };
    let separator = "holds a path separator (`/` or `\\`)";
    let refused = [
        (
            &["run", "status", "s.json", "--session", "k1"][..],
            both.to_owned(),
        ),
        (
            &["run", "complete", "--session", "k1", "s.json"],
            both.to_owned(),
        ),
        (
            &["run", "status"],
            "error: give the state file (STATE) or --session KEY\n".to_owned(),
        ),
        (
            &["run", "status", "--session", "../etc"],
            not_a_key("../etc", separator),
        ),
        (
            &["run", "status", "--session", ".."],
            not_a_key("..", "holds `..` or is `.`"),
        ),
        (
            &["run", "status", "--session", "a\u{1b}b"],
            not_a_key("a\\u{1b}b", "holds a control character"),
        ),
        (&["mcp", "s.json", "--session", "k1"], both.to_owned()),
        (&["mcp", "--session", "a/b"], not_a_key("a/b", separator)),
    ];
    for (args, expected) in refused {
        assert_eq!(usage(&t, args), expected, "planc {}", args.join(" "));
    }
    // A message that declares no steps creates no plan.
    assert_eq!(
        t.err(&["observe", "--session", "new", "--message", "hello"]),
        "PLAN_NOT_FOUND"
    );
    assert!(!t.path(".sessions/new/plan.json").exists());
}

/// Parallel agents each advance their own task through the text protocol.
#[test]
fn observe_acts_for_the_calling_agent() {
    let t = Test::temp().file("p.plan", "plan p { goal \"g\" task a \"A\" task b \"B\" }");
    human(&t, &["run", "init", "p.plan", "-o", "s.json"]);
    assert_eq!(
        t.ok(&["observe", "s.json", "--agent", "x", "--message", "go"])["current_task"]["id"],
        1
    );
    assert_eq!(
        t.ok(&[
            "observe",
            "s.json",
            "--agent",
            "y",
            "--lease",
            "5m",
            "--message",
            "go"
        ])["current_task"]["id"],
        2
    );
    let state = t.state("s.json");
    assert_eq!(state["tasks"][1]["holder"]["agent"], "y");
    assert!(state["tasks"][1]["holder"]["lease_expires_at"].is_string());
    let data = t.ok(&[
        "observe",
        "s.json",
        "--agent",
        "y",
        "--message",
        "B works [Done]",
    ]);
    assert_eq!(data["completed_by"], "marker");
    let state = t.state("s.json");
    assert_eq!(state["tasks"][0]["status"], "in_progress");
    assert_eq!(state["tasks"][1]["result"], "B works");
    // The log names who observed.
    let events = t.events("s.json");
    let last = &events.last().unwrap()["events"];
    assert_eq!(last[0]["kind"], "iteration");
    assert_eq!(last[0]["agent"], "y");
}

/// Plan-Act's events: each carries the task or plan it changed; agents log
/// tool calls, messages and errors; a completed step keeps its attachments.
#[test]
fn seed_004_events_log_and_attachments() {
    let t = Test::temp().file(
        "p.plan",
        "plan baidu { title \"Baidu\" goal \"Search AI Agent and sum up\" language \"zh\" \
         task open \"打开百度搜索页面\" task sum \"总结结果内容\" { after open } }",
    );
    human(&t, &["run", "init", "p.plan", "-o", "s.json"]);
    let created = &t.events("s.json")[0]["events"][0];
    assert_eq!(
        created["plan"],
        json!({"id": "baidu", "title": "Baidu", "goal": "Search AI Agent and sum up",
               "language": "zh", "status": "idle", "done": 0, "total": 2})
    );
    human(&t, &["run", "next", "s.json", "--agent", "executor"]);
    assert_eq!(
        human(
            &t,
            &[
                "run",
                "log",
                "s.json",
                "--agent",
                "executor",
                "--kind",
                "tool",
                "--data",
                r#"{"name": "browser_navigate", "args": {"url": "https://www.baidu.com"}, "result": {"success": true}}"#
            ]
        ),
        "Logged a tool call for task 1\n"
    );
    let record = t.events("s.json").pop().unwrap();
    assert_eq!(record["op"], "logEvent");
    assert_eq!(
        record["revision"], 3,
        "a logged event is one revision, one line"
    );
    let event = &record["events"][0];
    assert_eq!(
        (
            event["kind"].clone(),
            event["task_id"].clone(),
            event["agent"].clone()
        ),
        (json!("tool"), json!(1), json!("executor"))
    );
    assert_eq!(
        event["data"],
        json!({"name": "browser_navigate", "args": {"url": "https://www.baidu.com"}, "result": {"success": true}})
    );
    assert_eq!(event["task"]["status"], "in_progress");
    assert_eq!(event["task"]["holder"]["agent"], "executor");

    human(
        &t,
        &[
            "run",
            "complete",
            "s.json",
            "--agent",
            "executor",
            "--result",
            "百度首页已打开",
            "--attachment",
            "shots/baidu.png",
            "--attachment",
            "https://www.baidu.com",
        ],
    );
    let state = t.state("s.json");
    assert_eq!(
        state["tasks"][0]["extra"],
        json!({"attachments": ["shots/baidu.png", "https://www.baidu.com"]})
    );
    let event = &t.events("s.json").pop().unwrap()["events"][0];
    assert_eq!(event["kind"], "completed");
    assert_eq!(event["task"]["result"], "百度首页已打开");
    assert_eq!(event["task"]["extra"]["attachments"][0], "shots/baidu.png");
    // Plan-Act's Step shows them.
    let run = t.planc(&["build", "s.json", "--target", "plan-act"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json()["steps"][0]["attachments"],
        json!(["shots/baidu.png", "https://www.baidu.com"])
    );

    // Logging is no change to the plan: allowed while paused; a message
    // without a task when the caller holds none.
    human(&t, &["run", "pause", "s.json"]);
    let data = t.ok(&[
        "log",
        "s.json",
        "--kind",
        "message",
        "--data",
        r#""已打开百度""#,
    ]);
    assert_eq!(
        data,
        json!({"kind": "message", "task_id": null, "message": "Logged a message"})
    );
    let event = &t.events("s.json").pop().unwrap()["events"][0];
    assert_eq!(event["data"], "已打开百度");
    assert_eq!(event["plan"]["status"], "paused");
    // What a strict-schema client sends: an object as JSON text is kept as the object.
    t.ok(&[
        "log",
        "s.json",
        "--kind",
        "tool",
        "--data",
        r#""{\"name\": \"browser_view\"}""#,
    ]);
    let event = &t.events("s.json").pop().unwrap()["events"][0];
    assert_eq!(event["data"], json!({"name": "browser_view"}));
    human(&t, &["run", "resume", "s.json"]);
    human(&t, &["run", "next", "s.json"]);
    human(
        &t,
        &["run", "complete", "s.json", "--result", "AI Agent 是…"],
    );
    let events = t.events("s.json").pop().unwrap()["events"].clone();
    assert_eq!(events[1]["kind"], "plan_completed");
    assert_eq!(events[1]["plan"]["status"], "completed");
    assert_eq!(events[1]["plan"]["done"], 2);

    // Bad data: a clear error, nothing logged.
    let revision = t.state("s.json")["state"]["revision"].clone();
    let run = t.planc(&["run", "log", "s.json", "--kind", "error", "--data", "{oops"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error[INVALID_ARGUMENT]: --data is not JSON: key must be a string at line 1 column 2\n"
    );
    let big = format!("\"{}\"", "x".repeat(64 * 1024));
    let run = t.planc_with_stdin(
        &["run", "log", "s.json", "--kind", "error", "--data", "-"],
        &big,
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error[INVALID_ARGUMENT]: --data is 65538 bytes as JSON; a logged event carries at most 65536 (64 KiB)\n"
    );
    let run = t.planc(&["run", "log", "s.json", "--kind", "warning"]);
    assert_eq!(run.code, 2);
    let run = t.planc(&["run", "complete", "s.json", "2", "--attachment", " "]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error[INVALID_ARGUMENT]: attachment 1 is blank; an attachment is a path or URL of 1 to 4096 bytes\n"
    );
    assert_eq!(t.state("s.json")["state"]["revision"], revision);
}
