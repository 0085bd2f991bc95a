//! Unit tests of the runner library: the semantics of docs/runner.md.

// A scenario test may run long: it reads as one story.
#![allow(clippy::too_many_lines)]

mod agents;
mod deep;
mod many_steps;
mod ownership;
mod properties;
mod step_answers;
mod touched;

use serde_json::json;

use super::*;
use crate::document::{Meta, TaskStatus};

/// A plan whose task `n + 1` depends on the tasks listed at `deps[n]`.
pub(crate) fn plan(deps: &[&[u32]]) -> PlanDocument {
    let tasks = deps
        .iter()
        .enumerate()
        .map(|(i, d)| TaskDoc {
            key: Some(format!("t{}", i + 1)),
            ..TaskDoc::pending(i as u32 + 1, format!("task {}", i + 1), d.to_vec())
        })
        .collect();
    PlanDocument::new(Meta::new("t", "test"), tasks)
}

fn call(runner: &mut Runner, name: &str, args: serde_json::Value) -> Result<Applied, OpError> {
    runner.apply(&Op::from_call(name, args)?)
}

fn ok(runner: &mut Runner, name: &str, args: serde_json::Value) -> serde_json::Value {
    match call(runner, name, args) {
        Ok(applied) => applied.data.to_json(),
        Err(error) => panic!("{name} failed: {error}"),
    }
}

fn code(runner: &mut Runner, name: &str, args: serde_json::Value) -> &'static str {
    match call(runner, name, args) {
        Ok(applied) => panic!("{name} succeeded: {}", applied.data.to_json()),
        Err(error) => error.code.as_str(),
    }
}

fn statuses(runner: &Runner) -> Vec<&'static str> {
    runner
        .document()
        .tasks
        .iter()
        .map(|t| t.status.as_str())
        .collect()
}

fn plan_status(runner: &Runner) -> &'static str {
    runner.document().state.status.as_str()
}

#[test]
fn start_next_takes_the_first_executable_task_in_plan_order() {
    let mut r = Runner::new(plan(&[&[], &[1], &[]])).unwrap();
    assert_eq!(plan_status(&r), "idle");
    let data = ok(&mut r, "startNextTask", json!({}));
    assert_eq!(data["task"]["id"], 1);
    assert_eq!(data["message"], "Started task 1: task 1");
    // Several tasks may be in progress at once.
    assert_eq!(ok(&mut r, "startNextTask", json!(null))["task"]["id"], 3);
    assert_eq!(statuses(&r), ["in_progress", "pending", "in_progress"]);
    assert_eq!(r.document().state.current_task_id, Some(3));
    assert_eq!(plan_status(&r), "running");
    let none = ok(&mut r, "startNextTask", json!({}));
    assert_eq!(none["task"], json!(null));
    assert_eq!(none["reason"], "waiting");
    assert_eq!(none["in_progress"], json!([1, 3]));
    assert_eq!(
        r.document().state.revision,
        2,
        "a start with nothing to start changes nothing"
    );
}

#[test]
fn completing_every_task_completes_the_plan() {
    let mut r = Runner::new(plan(&[&[], &[1]])).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    let data = ok(&mut r, "completeTask", json!({"result": "done"}));
    assert_eq!(data["task_id"], 1);
    assert_eq!(r.document().state.current_task_id, None);
    assert_eq!(r.document().tasks[0].result.as_deref(), Some("done"));
    ok(&mut r, "startNextTask", json!({}));
    let applied = call(
        &mut r,
        "completeTask",
        json!({"task_id": "t2", "result": "ok"}),
    )
    .unwrap();
    assert_eq!(
        applied.events.last().unwrap().kind,
        EventKind::PlanCompleted
    );
    assert_eq!(plan_status(&r), "completed");
    let none = ok(&mut r, "startNextTask", json!({}));
    assert_eq!(none["reason"], "completed");
    let status = ok(&mut r, "getPlanStatus", json!({}));
    assert_eq!(status["progress"], 1.0);
    assert_eq!(status["completed_tasks"], 2);
}

#[test]
fn fail_retries_while_retries_are_left() {
    let mut doc = plan(&[&[], &[1]]);
    doc.tasks[0].retry.max = Some(2);
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    let data = ok(&mut r, "failTask", json!({"error_message": "timeout"}));
    assert_eq!(
        data,
        json!({"task_id": 1, "will_retry": true, "retry_count": 1,
        "retry_budget": 2, "message": "Task 1 failed, will retry (attempt 2 of 3)",
        "plan_status": "running"})
    );
    assert_eq!(statuses(&r), ["pending", "pending"]);
    ok(&mut r, "startTask", json!({"task_id": 1}));
    // should_retry=false fails for good even with a retry left.
    let data = ok(
        &mut r,
        "failTask",
        json!({"task_id": 1, "error_message": "gone", "should_retry": false}),
    );
    assert_eq!(data["will_retry"], false);
    assert_eq!(data["retry_count"], 1);
    assert_eq!(statuses(&r), ["failed", "pending"]);
    assert_eq!(plan_status(&r), "failed");
    let status = ok(&mut r, "getPlanStatus", json!({}));
    assert_eq!(status["blocked_by"], json!([1]));
    assert!(status["reason"].as_str().unwrap().contains("1 (gone)"));
    let none = ok(&mut r, "startNextTask", json!({}));
    assert_eq!(none["reason"], "blocked");
    assert_eq!(
        code(&mut r, "startTask", json!({"task_id": 2})),
        "DEPENDENCIES_NOT_MET"
    );
    // Skipping the failed task unblocks the plan.
    ok(
        &mut r,
        "skipTask",
        json!({"task_id": 1, "reason": "done by hand"}),
    );
    assert_eq!(plan_status(&r), "running");
    assert_eq!(ok(&mut r, "startNextTask", json!({}))["task"]["id"], 2);
}

#[test]
fn retries_run_out() {
    let mut doc = plan(&[&[]]);
    doc.tasks[0].retry.max = Some(1);
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    assert_eq!(ok(&mut r, "failTask", json!({}))["will_retry"], true);
    ok(&mut r, "startNextTask", json!({}));
    assert_eq!(ok(&mut r, "failTask", json!({}))["will_retry"], false);
    assert_eq!(plan_status(&r), "failed");
}

#[test]
fn a_failed_optional_task_blocks_neither_dependents_nor_the_plan() {
    let mut doc = plan(&[&[], &[1], &[]]);
    doc.tasks[0].retry.max = Some(0);
    doc.tasks[0].optional = true;
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startTask", json!({"task_id": 1}));
    ok(
        &mut r,
        "failTask",
        json!({"error_message": "no filter on this site"}),
    );
    assert_eq!(plan_status(&r), "running");
    let ready = ok(&mut r, "getExecutableTaskList", json!({}));
    assert_eq!(ready["count"], 2);
    for id in [2, 3] {
        ok(&mut r, "startTask", json!({"task_id": id}));
        ok(&mut r, "completeTask", json!({"task_id": id}));
    }
    // Completed: every required task is done; the optional one failed.
    assert_eq!(statuses(&r), ["failed", "completed", "completed"]);
    assert_eq!(plan_status(&r), "completed");
}

#[test]
fn a_failed_required_task_fails_the_plan_only_when_nothing_can_run() {
    let mut doc = plan(&[&[], &[1], &[]]);
    doc.meta.retry = Some(0);
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startTask", json!({"task_id": 1}));
    ok(&mut r, "failTask", json!({}));
    assert_eq!(plan_status(&r), "running", "task 3 can still run");
    ok(&mut r, "startNextTask", json!({}));
    ok(&mut r, "completeTask", json!({}));
    assert_eq!(plan_status(&r), "failed");
}

#[test]
fn add_after_rewires_dependents_like_seed_000() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2], &[3], &[4]])).unwrap();
    for _ in 0..2 {
        ok(&mut r, "startNextTask", json!({}));
        ok(&mut r, "completeTask", json!({}));
    }
    let data = ok(
        &mut r,
        "addTask",
        json!({"name": "Close the new user coupon popup", "dependencies": [2],
               "reasoning": "An unexpected popup is blocking the search button.", "after_task_id": 2}),
    );
    assert_eq!(data["new_task"]["id"], 6);
    assert_eq!(data["new_task"]["dependencies"], json!([2]));
    let order: Vec<u32> = r.document().tasks.iter().map(|t| t.id).collect();
    assert_eq!(order, [1, 2, 6, 3, 4, 5]);
    assert_eq!(r.document().tasks[3].dependencies, [6]);
    assert_eq!(ok(&mut r, "startNextTask", json!({}))["task"]["id"], 6);
}

#[test]
fn add_without_after_appends_and_defaults() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    let data = ok(
        &mut r,
        "addTask",
        json!({"name": "more", "dependencies": ["t1"]}),
    );
    assert_eq!(data["new_task"]["id"], 2);
    assert_eq!(data["new_task"]["dependencies"], json!([1]));
    let data = ok(
        &mut r,
        "addTask",
        json!({"name": "after one", "after_task_id": 1}),
    );
    assert_eq!(
        data["new_task"]["dependencies"],
        json!([1]),
        "dependencies default to [after]"
    );
    assert_eq!(
        r.document().tasks[2].dependencies,
        [3],
        "task 2 now waits for the new task"
    );
}

#[test]
fn every_error_code() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2]])).unwrap();
    assert_eq!(
        code(&mut r, "getTaskById", json!({"task_id": 9})),
        "TASK_NOT_FOUND"
    );
    assert_eq!(
        code(&mut r, "startTask", json!({"task_id": "nope"})),
        "TASK_NOT_FOUND"
    );
    assert_eq!(
        code(
            &mut r,
            "addTask",
            json!({"name": "x", "dependencies": [42]})
        ),
        "INVALID_DEPENDENCY"
    );
    assert_eq!(
        code(
            &mut r,
            "updateTask",
            json!({"task_id": 2, "dependencies": [2]})
        ),
        "INVALID_DEPENDENCY"
    );
    assert_eq!(
        code(
            &mut r,
            "updateTask",
            json!({"task_id": 1, "dependencies": [3]})
        ),
        "CIRCULAR_DEPENDENCY"
    );
    assert_eq!(
        code(
            &mut r,
            "addTask",
            json!({"name": "x", "dependencies": [3], "after_task_id": 1})
        ),
        "CIRCULAR_DEPENDENCY"
    );
    assert_eq!(code(&mut r, "completeTask", json!({})), "NO_CURRENT_TASK");
    assert_eq!(
        code(&mut r, "completeTask", json!({"task_id": 3})),
        "DEPENDENCIES_NOT_MET"
    );
    ok(&mut r, "startNextTask", json!({}));
    assert_eq!(
        code(&mut r, "updateTask", json!({"task_id": 1, "name": "y"})),
        "TASK_NOT_EDITABLE"
    );
    assert_eq!(
        code(&mut r, "removeTask", json!({"task_id": 1})),
        "TASK_NOT_EDITABLE"
    );
    assert_eq!(
        code(&mut r, "startTask", json!({"task_id": 1})),
        "INVALID_STATUS"
    );
    assert_eq!(
        code(&mut r, "getTaskList", json!({"status": "stuck"})),
        "INVALID_STATUS"
    );
    assert_eq!(code(&mut r, "resumePlan", json!({})), "INVALID_STATUS");
    assert_eq!(
        code(&mut r, "addTask", json!({"name": "  "})),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        code(&mut r, "updateTask", json!({"task_id": 2})),
        "INVALID_ARGUMENT"
    );
    assert_eq!(code(&mut r, "noSuchOp", json!({})), "INVALID_ARGUMENT");
    assert_eq!(code(&mut r, "startTask", json!({})), "INVALID_ARGUMENT");
    assert_eq!(
        code(&mut r, "retryTask", json!({"task_id": 1})),
        "INVALID_STATUS"
    );
    ok(&mut r, "pausePlan", json!({}));
    assert_eq!(code(&mut r, "completeTask", json!({})), "PLAN_NOT_ACTIVE");
    assert_eq!(code(&mut r, "pausePlan", json!({})), "PLAN_NOT_ACTIVE");
    let mut with_roles = plan(&[&[]]);
    with_roles.roles.push(crate::document::RoleDoc {
        id: "browser".to_owned(),
        description: None,
    });
    let mut r = Runner::new(with_roles).unwrap();
    assert_eq!(
        code(
            &mut r,
            "addTask",
            json!({"name": "x", "assignee": "browsr"})
        ),
        "UNKNOWN_ROLE"
    );
    assert_eq!(
        Runner::new(plan(&[&[2], &[1]])).unwrap_err().code,
        ErrorCode::CircularDependency
    );
    assert_eq!(
        Runner::new(plan(&[&[7]])).unwrap_err().code,
        ErrorCode::InvalidState
    );
}

#[test]
fn a_refused_operation_changes_nothing() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2]])).unwrap();
    let before = r.document().clone();
    code(
        &mut r,
        "addTask",
        json!({"name": "x", "dependencies": [3], "after_task_id": 1}),
    );
    code(
        &mut r,
        "updateTask",
        json!({"task_id": 1, "dependencies": [3]}),
    );
    assert_eq!(r.document(), &before);
}

#[test]
fn update_and_remove_pending_tasks() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2], &[2, 3]])).unwrap();
    let data = ok(
        &mut r,
        "updateTask",
        json!({"task_id": 3, "updates": {"name": "renamed", "dependencies": [1], "reasoning": "why"}}),
    );
    assert_eq!(data["updated_task"]["name"], "renamed");
    assert_eq!(data["updated_task"]["dependencies"], json!([1]));
    let data = ok(&mut r, "removeTask", json!({"task_id": 2}));
    assert_eq!(data["task_id"], 2);
    // Task 4 waited for 2 and 3; it now waits for 2's dependency (1) and 3.
    assert_eq!(r.document().tasks[2].dependencies, [1, 3]);
    assert_eq!(
        code(&mut r, "getTaskById", json!({"task_id": 2})),
        "TASK_NOT_FOUND"
    );
}

#[test]
fn pause_refuses_changes_and_resume_restores_the_status() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    ok(&mut r, "pausePlan", json!({}));
    assert_eq!(plan_status(&r), "paused");
    for (name, args) in [
        ("startNextTask", json!({})),
        ("completeTask", json!({})),
        ("failTask", json!({})),
        ("skipTask", json!({"task_id": 1})),
        ("addTask", json!({"name": "x"})),
        ("replan", json!({"steps": []})),
    ] {
        assert_eq!(code(&mut r, name, args), "PLAN_NOT_ACTIVE", "{name}");
    }
    // Queries still answer.
    assert_eq!(ok(&mut r, "getCurrentTask", json!({}))["id"], 1);
    ok(&mut r, "resumePlan", json!({}));
    assert_eq!(plan_status(&r), "running");
    ok(&mut r, "completeTask", json!({}));
    assert_eq!(plan_status(&r), "completed");
}

#[test]
fn pausing_an_idle_plan_and_resuming_leaves_it_idle() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    ok(&mut r, "pausePlan", json!({}));
    ok(&mut r, "resumePlan", json!({}));
    assert_eq!(plan_status(&r), "idle");
}

#[test]
fn ids_running_out_is_an_error_not_a_panic() {
    let mut doc = plan(&[&[]]);
    doc.tasks[0].id = u32::MAX;
    let mut r = Runner::new(doc).unwrap();
    assert_eq!(
        code(&mut r, "addTask", json!({"name": "x"})),
        "COUNTER_OVERFLOW"
    );
    assert_eq!(
        code(&mut r, "replan", json!({"steps": ["a"]})),
        "COUNTER_OVERFLOW"
    );
}

/// Every change op, with arguments that would change the plan in `plan(&[&[], &[1]])`.
const CHANGES: [(&str, &str); 10] = [
    ("startNextTask", "{}"),
    ("startTask", r#"{"task_id": 1}"#),
    ("completeTask", r#"{"task_id": 1}"#),
    ("failTask", r#"{"task_id": 1}"#),
    ("skipTask", r#"{"task_id": 1}"#),
    ("addTask", r#"{"name": "x"}"#),
    ("updateTask", r#"{"task_id": 2, "name": "y"}"#),
    ("removeTask", r#"{"task_id": 2}"#),
    ("pausePlan", "{}"),
    ("replan", r#"{"steps": ["a"]}"#),
];

#[test]
fn the_revision_does_not_wrap() {
    let mut doc = plan(&[&[], &[1]]);
    doc.state.revision = u64::MAX;
    let r = Runner::new(doc).unwrap();
    for (name, args) in CHANGES {
        let mut changed = r.clone();
        let args = serde_json::from_str(args).unwrap();
        let error = call(&mut changed, name, args).unwrap_err();
        assert_eq!(error.code, ErrorCode::CounterOverflow, "{name}");
        assert_eq!(
            error.details,
            json!({"counter": "state.revision", "max": u64::MAX})
        );
        assert_eq!(changed.document(), r.document(), "{name} changed nothing");
    }
    // Queries still answer.
    let mut r = r;
    assert_eq!(ok(&mut r, "getPlanStatus", json!({}))["revision"], u64::MAX);
    // One below the largest, one change fits.
    let mut doc = plan(&[&[], &[1]]);
    doc.state.revision = u64::MAX - 1;
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    assert_eq!(r.document().state.revision, u64::MAX);
    assert_eq!(code(&mut r, "completeTask", json!({})), "COUNTER_OVERFLOW");
}

#[test]
fn observe_counters_do_not_wrap() {
    let mut doc = plan(&[&[], &[1]]);
    doc.state.iteration_count = u64::MAX;
    let r = Runner::new(doc).unwrap();
    let mut changed = r.clone();
    let error = observe(&mut changed, "[Done]", &Caller::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::CounterOverflow);
    assert_eq!(error.details["counter"], "state.iteration_count");
    assert_eq!(changed.document(), r.document());

    let mut doc = plan(&[&[], &[1]]);
    doc.state.revision = u64::MAX;
    let r = Runner::new(doc).unwrap();
    let mut changed = r.clone();
    let error = observe(&mut changed, "[Step] more", &Caller::default()).unwrap_err();
    assert_eq!(error.details["counter"], "state.revision");
    assert_eq!(changed.document(), r.document());

    // Resuming starts the count again, so a full counter is no obstacle.
    let mut doc = plan(&[&[], &[1]]);
    doc.state.iteration_count = u64::MAX;
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "pausePlan", json!({}));
    let data = observe(&mut r, "continue", &Caller::default())
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["iteration_count"], 1);
    assert_eq!(r.document().state.iteration_count, 1);
}

#[test]
fn the_largest_retry_budget_does_not_overflow_its_message() {
    let mut doc = plan(&[&[]]);
    doc.tasks[0].retry.max = Some(u32::MAX);
    let mut r = Runner::new(doc).unwrap();
    let data = ok(&mut r, "failTask", json!({"task_id": 1}));
    assert_eq!(
        data["message"],
        "Task 1 failed, will retry (attempt 2 of 4294967296)"
    );
}

#[test]
fn reset_sets_everything_back() {
    let mut doc = plan(&[&[], &[1]]);
    doc.tasks[0].retry.max = Some(3);
    let mut r = Runner::new(doc).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    ok(&mut r, "failTask", json!({}));
    ok(&mut r, "startNextTask", json!({}));
    ok(&mut r, "completeTask", json!({"result": "x"}));
    let data = ok(&mut r, "resetPlan", json!({}));
    assert_eq!(data["reset_tasks"], 1);
    assert_eq!(statuses(&r), ["pending", "pending"]);
    assert_eq!(r.document().tasks[0].retry.count, 0);
    assert_eq!(r.document().tasks[0].result, None);
    assert_eq!(plan_status(&r), "idle");
}

#[test]
fn replan_keeps_what_is_done_and_replaces_the_rest() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2], &[3]])).unwrap();
    ok(&mut r, "startNextTask", json!({}));
    ok(&mut r, "completeTask", json!({"result": "opened"}));
    ok(&mut r, "startNextTask", json!({}));
    let data = ok(
        &mut r,
        "replan",
        json!({"steps": ["Search again", {"name": "Check the price", "key": "price", "reasoning": "r"},
                         {"description": "Buy", "dependencies": ["price", 1]}]}),
    );
    assert_eq!(data["removed_tasks"], json!([3, 4]));
    assert_eq!(data["kept_tasks"], 2);
    let ids: Vec<u32> = r.document().tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids, [1, 2, 5, 6, 7]);
    let deps: Vec<Vec<u32>> = r
        .document()
        .tasks
        .iter()
        .map(|t| t.dependencies.clone())
        .collect();
    assert_eq!(deps, [vec![], vec![1], vec![2], vec![5], vec![6, 1]]);
    assert_eq!(r.document().tasks[4].name, "Buy");
    assert_eq!(
        code(
            &mut r,
            "replan",
            json!({"steps": [{"name": "x", "dependencies": [3]}]})
        ),
        "INVALID_DEPENDENCY"
    );
}

#[test]
fn assignee_filters() {
    let mut doc = plan(&[&[], &[], &[1]]);
    doc.tasks[1].assignee = Some("writer".to_owned());
    let mut r = Runner::new(doc).unwrap();
    assert_eq!(
        ok(&mut r, "startNextTask", json!({"assignee": "writer"}))["task"]["id"],
        2
    );
    let none = ok(&mut r, "startNextTask", json!({"assignee": "writer"}));
    assert_eq!(none["reason"], "no_task_for_assignee");
    let list = ok(&mut r, "getTaskList", json!({"assignee": "writer"}));
    assert_eq!(list["filtered"], 1);
    assert_eq!(list["total"], 3);
    let list = ok(
        &mut r,
        "getTaskList",
        json!({"status_filter": "executable"}),
    );
    assert_eq!(list["filtered"], 1);
}

#[test]
fn observe_applies_markers_and_the_iteration_limit() {
    let mut doc = plan(&[]);
    doc.meta.max_iterations = Some(3);
    // `[失败]` below fails for good.
    doc.meta.retry = Some(0);
    let mut r = Runner::new(doc).unwrap();
    let data = observe(
        &mut r,
        "I will plan first.\n[Step] Open the page\n[Step] Read it\n",
        &Caller::default(),
    )
    .unwrap()
    .data
    .to_json();
    assert_eq!(data["iteration_count"], 1);
    assert_eq!(
        data["current_task"]["id"], 1,
        "the first step starts at once"
    );
    assert_eq!(r.document().tasks[1].dependencies, [1]);
    let data = observe(&mut r, "Opened example.com [Done]", &Caller::default())
        .unwrap()
        .data
        .to_json();
    assert_eq!(
        r.document().tasks[0].result.as_deref(),
        Some("Opened example.com")
    );
    assert_eq!(data["current_task"]["id"], 2);
    let data = observe(&mut r, "still reading", &Caller::default())
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["paused"], true);
    assert!(data["summary"]["text"].as_str().unwrap().contains("1/2"));
    assert_eq!(
        observe(&mut r, "hello", &Caller::default())
            .unwrap_err()
            .code,
        ErrorCode::PlanNotActive
    );
    let data = observe(&mut r, "请继续 [失败] page is gone", &Caller::default())
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["iteration_count"], 1);
    assert_eq!(r.document().tasks[1].status, TaskStatus::Failed);
    assert_eq!(
        r.document().tasks[1].result.as_deref(),
        Some("page is gone")
    );
    assert_eq!(
        r.document().state.revision,
        4,
        "one revision per observed message, none when refused"
    );
}

#[test]
fn prompt_speaks_the_plan_language() {
    let mut doc = plan(&[&[], &[1]]);
    let r = Runner::new(doc.clone()).unwrap();
    let text = prompt(&r);
    assert!(text.starts_with("## Current plan\n"), "{text}");
    assert!(text.contains("Progress: 0/2"), "{text}");
    assert!(text.contains("Executable next: #1 task 1"), "{text}");
    doc.meta.language = "zh".to_owned();
    let text = prompt(&Runner::new(doc).unwrap());
    assert!(
        text.contains("## 当前任务规划") && text.contains("进度: 0/2"),
        "{text}"
    );
}

#[test]
fn ops_deserialise_from_seed_argument_names() {
    let op: Op =
        serde_json::from_value(json!({"op": "failTask", "task_id": "open", "error_message": "x"}))
            .unwrap();
    assert_eq!(
        op,
        Op::FailTask(FailArgs {
            task_id: Some(TaskRef::Key("open".to_owned())),
            error_message: Some("x".to_owned()),
            should_retry: true,
        })
    );
    assert_eq!(op.name(), "failTask");
    for name in Op::NAMES {
        let args = match name {
            "startTask" | "getTaskById" | "removeTask" | "skipTask" | "updateTask"
            | "retryTask" => {
                json!({"task_id": 1})
            }
            "addTask" => json!({"name": "x"}),
            "replan" => json!({"steps": []}),
            "logEvent" => json!({"kind": "tool"}),
            _ => json!({}),
        };
        assert_eq!(Op::from_call(name, args).unwrap().name(), name);
    }
}

#[test]
fn cycle_errors_name_the_cycle() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2]])).unwrap();
    let error = call(
        &mut r,
        "updateTask",
        json!({"task_id": 1, "dependencies": [3]}),
    )
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::CircularDependency);
    assert_eq!(
        error.message,
        "the dependencies would form a cycle: 1 → 3 → 2 → 1 (each waits for the next)"
    );
    assert_eq!(error.details, json!({"cycle": [1, 3, 2, 1]}));
}

#[test]
fn task_refs_read_ids_and_keys_and_refuse_the_rest() {
    let parse =
        |v: serde_json::Value| serde_json::from_value::<TaskRef>(v).map_err(|e| e.to_string());
    assert_eq!(parse(json!(3)), Ok(TaskRef::Id(3)));
    assert_eq!(parse(json!(3.0)), Ok(TaskRef::Id(3)));
    assert_eq!(parse(json!("open")), Ok(TaskRef::Key("open".to_owned())));
    assert_eq!(
        parse(json!(-1)).unwrap_err(),
        "task id -1 is negative; ids are whole numbers from 1"
    );
    assert_eq!(
        parse(json!(1.5)).unwrap_err(),
        "task id 1.5 is not a whole number"
    );
    assert!(parse(json!([1]))
        .unwrap_err()
        .contains("a task id (a whole number from 1) or a task key"));
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    assert_eq!(
        ok(&mut r, "getTaskById", json!({"task_id": "1"}))["task"]["id"],
        1
    );
    assert_eq!(
        ok(&mut r, "getTaskById", json!({"task_id": "#1"}))["task"]["id"],
        1
    );
}

#[test]
fn apply_is_a_function_of_document_and_operation() {
    let doc = plan(&[&[]]);
    let (after, applied) =
        apply(doc.clone(), &Op::StartNextTask(StartNextArgs::default())).unwrap();
    assert_eq!(after.tasks[0].status, TaskStatus::InProgress);
    assert_eq!(after.state.revision, 1);
    assert_eq!(applied.events[0].kind, EventKind::Started);
    assert_eq!(
        apply(
            doc,
            &Op::StartTask(TaskIdArgs {
                task_id: TaskRef::Id(5)
            })
        )
        .unwrap_err()
        .code,
        ErrorCode::TaskNotFound
    );
}

/// The round counts of `state.step_rounds`, as (task, rounds) pairs.
fn rounds(r: &Runner) -> Vec<(u32, u64)> {
    r.document()
        .state
        .step_rounds
        .iter()
        .map(|s| (s.task_id, s.rounds))
        .collect()
}

#[test]
fn transition_words_advance_a_step_only_after_its_rounds() {
    let mut r = Runner::new(plan(&[])).unwrap();
    let caller = Caller::default();
    // The message that creates the plan is the first step's first round.
    observe(
        &mut r,
        "[Step] Open the page\n[Step] Search for the product\n[Step] Sum up the results",
        &caller,
    )
    .unwrap();
    assert_eq!(rounds(&r), [(1, 1)]);
    // A word inside a longer word is no transition word.
    let data = observe(
        &mut r,
        "The old page was discontinued; nowhere to click",
        &caller,
    )
    .unwrap()
    .data
    .to_json();
    assert_eq!(data["completed_by"], json!(null));
    assert_eq!(data["step_rounds"], 2);
    let data = observe(&mut r, "Page open. Next, the search box", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], "transition");
    assert_eq!(data["matched"], "Next");
    assert_eq!(r.document().tasks[0].status, TaskStatus::Completed);
    assert_eq!(r.document().tasks[0].result.as_deref(), Some("Page open."));
    // The next step starts with no rounds: a transition word in the round
    // that started it does not count, the one after does.
    assert_eq!(data["current_task"]["id"], 2);
    assert_eq!(data["step_rounds"], 0);
    assert_eq!(rounds(&r), []);
    let data = observe(&mut r, "现在输入搜索词", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], json!(null));
    let data = observe(&mut r, "Found it, next I sum up the results", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], "transition");
    assert_eq!(data["matched"], "next");
    assert_eq!(r.document().tasks[1].result.as_deref(), Some("Found it"));
    assert_eq!(data["current_task"]["id"], 3);
}

#[test]
fn the_fallback_advances_after_its_rounds_and_both_thresholds_are_the_plans() {
    let mut doc = plan(&[&[], &[1]]);
    doc.meta.transition_rounds = Some(2);
    doc.meta.fallback_rounds = Some(3);
    let mut r = Runner::new(doc).unwrap();
    let caller = Caller::default();
    // The first message starts task 1 (no round on it yet).
    let data = observe(&mut r, "starting", &caller).unwrap().data.to_json();
    assert_eq!(
        (
            data["current_task"]["id"].clone(),
            data["step_rounds"].clone()
        ),
        (json!(1), json!(0))
    );
    // One round on it: "then" is too early with transition_rounds 2.
    observe(&mut r, "working", &caller).unwrap();
    let data = observe(&mut r, "then more", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], json!(null));
    assert_eq!(data["step_rounds"], 2);
    let data = observe(&mut r, "still working", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], json!(null));
    // Three rounds on it and no marker: the next message moves on.
    let data = observe(&mut r, "still working", &caller)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], "fallback");
    assert_eq!(data["matched"], "3 rounds");
    assert_eq!(r.document().tasks[0].status, TaskStatus::Completed);
    assert_eq!(data["current_task"]["id"], 2);
}

#[test]
fn observe_acts_on_the_callers_own_task() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    let a = Caller::agent(Some("a".to_owned()));
    let b = Caller::agent(Some("b".to_owned()));
    assert_eq!(
        observe(&mut r, "go", &a).unwrap().data.to_json()["current_task"]["id"],
        1
    );
    assert_eq!(
        observe(&mut r, "go", &b).unwrap().data.to_json()["current_task"]["id"],
        2
    );
    let data = observe(&mut r, "B is done [Done]", &b)
        .unwrap()
        .data
        .to_json();
    assert_eq!(data["completed_by"], "marker");
    assert_eq!(r.document().tasks[1].status, TaskStatus::Completed);
    assert_eq!(r.document().tasks[0].status, TaskStatus::InProgress);
    assert_eq!(
        rounds(&r),
        [(1, 0)].into_iter().filter(|_| false).collect::<Vec<_>>()
    );
}
