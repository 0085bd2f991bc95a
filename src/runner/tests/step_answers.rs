//! Step detection beyond transition words, as `observe_reply` applies it
//! to a plan: the agent's step numbers, a final answer, and the fallback
//! that waits while the agent calls tools (docs/agents.md, "steps").

use serde_json::json;

use super::*;
use crate::document::TaskStatus;

/// A plan made from one reply declaring `steps`, on its first step.
fn steps_plan(steps: &[&str]) -> Runner {
    let declared: String = steps.iter().map(|s| format!("[Step] {s}\n")).collect();
    let mut r = Runner::new(plan(&[])).unwrap();
    observe(&mut r, &declared, &Caller::default()).unwrap();
    r
}

fn reply(text: &str, calls: &[(&str, serde_json::Value)]) -> Reply {
    Reply {
        text: text.to_owned(),
        tool_calls: calls
            .iter()
            .map(|(name, arguments)| ToolCall {
                name: (*name).to_owned(),
                arguments: arguments.clone(),
            })
            .collect(),
    }
}

fn statuses(r: &Runner) -> Vec<TaskStatus> {
    r.document().tasks.iter().map(|t| t.status).collect()
}

#[test]
fn a_final_answer_completes_the_last_step_and_a_report_the_one_before() {
    let mut r = steps_plan(&[
        "Get the Amazon price",
        "Get the Walmart price",
        "Report the cheapest",
    ]);
    let caller = Caller::default();
    let shop = [(
        "browser_navigate",
        json!({"url": "https://www.walmart.com"}),
    )];
    observe_reply(&mut r, &reply("Amazon: $328. [Done]", &shop), &caller).unwrap();
    assert_eq!(r.document().tasks[0].status, TaskStatus::Completed);
    // A report without tool calls is the agent's final answer: it finishes
    // the step it was on and the last one.
    let report = "Walmart: $299.\n\n| Store | Price |\n|---|---|\n| Walmart | $299 |";
    let data = observe_reply(&mut r, &reply(report, &[]), &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], "transition");
    assert_eq!(data["matched"], "final answer");
    assert_eq!(statuses(&r), [TaskStatus::Completed; 3]);
    assert_eq!(r.document().tasks[2].result.as_deref(), Some(report));
}

#[test]
fn a_reply_without_tools_that_asks_or_goes_on_is_no_final_answer() {
    let mut r = steps_plan(&["Open the page", "Read it"]);
    let caller = Caller::default();
    observe(&mut r, "Opened [Done]", &caller).unwrap();
    observe(&mut r, "Reading the page still.", &caller).unwrap();
    observe(&mut r, "Which section do you mean?", &caller).unwrap();
    assert_eq!(r.document().tasks[1].status, TaskStatus::InProgress);
    observe(&mut r, "It says hello.", &caller).unwrap();
    assert_eq!(r.document().tasks[1].status, TaskStatus::Completed);
}

#[test]
fn the_agents_own_step_numbers_move_the_plan() {
    let mut r = steps_plan(&["查看模型", "编写迁移", "更新接口"]);
    let caller = Caller::default();
    let read = [("read_file", json!({"path": "models.py"}))];
    observe_reply(&mut r, &reply("字段有四个。", &read), &caller).unwrap();
    let edit = [("edit_file", json!({"path": "a.py"}))];
    // "Step 2 done" while the plan is on step 1: both are done.
    let data = observe_reply(
        &mut r,
        &reply("第 2 步完成。\n\n**第 3 步：**", &edit),
        &caller,
    )
    .unwrap()
    .data
    .to_json();
    assert_eq!(data["matched"], "第 2 步完成。");
    assert_eq!(
        statuses(&r),
        [
            TaskStatus::Completed,
            TaskStatus::Completed,
            TaskStatus::InProgress
        ]
    );
    assert_eq!(
        r.document().tasks[0].result.as_deref(),
        Some("第 2 步完成。")
    );
}

#[test]
fn the_fallback_waits_while_the_agent_calls_tools() {
    let mut r = steps_plan(&["Collect the data", "Plot it"]);
    let caller = Caller::default();
    let run = [("python_exec", json!({"code": "rows += fetch()"}))];
    for _ in 0..8 {
        observe_reply(&mut r, &reply("", &run), &caller).unwrap();
    }
    assert_eq!(r.document().tasks[0].status, TaskStatus::InProgress);
    // A quiet round without tool calls after the fallback's rounds moves on.
    let data = observe(&mut r, "Working.", &caller).unwrap().data.to_json();
    assert_eq!(data["completed_by"], "fallback");
    assert_eq!(r.document().tasks[0].status, TaskStatus::Completed);
}

#[test]
fn the_agents_step_numbers_need_no_round_on_the_step() {
    let mut r = steps_plan(&["Write the middleware", "Register it", "Write tests"]);
    let caller = Caller::default();
    let edit = [("edit_file", json!({"path": "src/app.js"}))];
    observe_reply(&mut r, &reply("Writing it.", &edit), &caller).unwrap();
    observe_reply(
        &mut r,
        &reply("Middleware done. Now registering it in the app.", &edit),
        &caller,
    )
    .unwrap();
    assert_eq!(statuses(&r)[1], TaskStatus::InProgress);
    // Step 2 had no round of its own yet: a transition word would wait, the
    // agent's own number does not.
    let read = [("read_file", json!({"path": "test/helpers.js"}))];
    let data = observe_reply(
        &mut r,
        &reply("Step 2 done. Moving to step 3.", &read),
        &caller,
    )
    .unwrap()
    .data
    .to_json();
    assert_eq!(data["completed_by"], "transition");
    assert_eq!(
        statuses(&r),
        [
            TaskStatus::Completed,
            TaskStatus::Completed,
            TaskStatus::InProgress
        ]
    );
}

#[test]
fn tool_calls_of_the_next_steps_kind_turn_without_a_word() {
    let mut r = steps_plan(&["Identify the root cause", "Fix it", "Run the full build"]);
    let caller = Caller::default();
    let read = [("read_file", json!({"path": "src/Button.tsx"}))];
    observe_reply(&mut r, &reply("", &read), &caller).unwrap();
    observe_reply(&mut r, &reply("", &read), &caller).unwrap();
    assert_eq!(statuses(&r)[0], TaskStatus::InProgress);
    // A silent round that edits: the fix has begun.
    let edit = [("edit_file", json!({"path": "src/Button.tsx"}))];
    let data = observe_reply(&mut r, &reply("", &edit), &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["matched"], "tool edit_file");
    assert_eq!(statuses(&r)[1], TaskStatus::InProgress);
    // Running the code while fixing it is still the fix.
    let run = [("run_command", json!({"command": "pnpm -r build"}))];
    observe_reply(&mut r, &reply("", &run), &caller).unwrap();
    assert_eq!(statuses(&r)[1], TaskStatus::InProgress);
}
