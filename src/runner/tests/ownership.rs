//! Ownership and cursors with a fixed clock: a held task is changed only by
//! its holder or by a logged takeover; seed 000's cursor; ids never reused.

use serde_json::{json, Value};

use super::plan;
use crate::document::TaskStatus;
use crate::runner::{Applied, Caller, ErrorCode, EventKind, Op, OpError, Runner};

/// 2026-11-23T10:00:00Z
const T0: u64 = 1_795_428_000;

fn by(r: &mut Runner, caller: &Caller, name: &str, args: Value) -> Result<Applied, OpError> {
    r.apply_as(&Op::from_call(name, args)?, caller)
}

fn agent(name: &str) -> Caller {
    Caller::agent(Some(name.to_owned())).at(T0)
}

fn kinds(applied: &Applied) -> Vec<EventKind> {
    applied.events.iter().map(|e| e.kind).collect()
}

#[test]
fn another_agents_task_is_refused_with_task_held() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    let bob = agent("bob").with_lease(Some(60));
    by(&mut r, &bob, "startTask", json!({"task_id": 1})).unwrap();
    let before = r.document().clone();
    for (op, args) in [
        ("completeTask", json!({"task_id": 1, "result": "x"})),
        ("failTask", json!({"task_id": 1})),
        ("skipTask", json!({"task_id": 1})),
        ("startTask", json!({"task_id": 1})),
        ("updateTask", json!({"task_id": 1, "name": "y"})),
        ("removeTask", json!({"task_id": 1})),
        ("retryTask", json!({"task_id": 1})),
        ("resetPlan", json!({})),
    ] {
        for caller in [agent("alice"), Caller::default().at(T0)] {
            let error = by(&mut r, &caller, op, args.clone()).unwrap_err();
            assert_eq!(error.code, ErrorCode::TaskHeld, "{op}: {error}");
            assert_eq!(r.document(), &before, "{op} changed nothing");
        }
    }
    let error = by(&mut r, &agent("alice"), "skipTask", json!({"task_id": 1})).unwrap_err();
    assert_eq!(
        error.message,
        "Task 1 is held by agent bob since 2026-11-23T10:00:00Z, lease until 2026-11-23T10:01:00Z; only bob may change it, or take it over (takeover: true)"
    );
    assert_eq!(
        error.details,
        json!({
            "task_id": 1,
            "holder": {"agent": "bob", "since": "2026-11-23T10:00:00Z", "lease_seconds": 60, "lease_expires_at": "2026-11-23T10:01:00Z"},
            "agent": "alice",
        })
    );
    // The holder itself may.
    let done = by(&mut r, &bob, "completeTask", json!({"task_id": 1})).unwrap();
    assert_eq!(kinds(&done), [EventKind::Completed]);
}

#[test]
fn a_takeover_goes_ahead_and_is_logged() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    by(&mut r, &agent("bob"), "startTask", json!({"task_id": 1})).unwrap();
    let alice = agent("alice").taking_over(true);
    let done = by(
        &mut r,
        &alice,
        "completeTask",
        json!({"task_id": 1, "result": "r"}),
    )
    .unwrap();
    assert_eq!(
        kinds(&done),
        [EventKind::TaskTakenOver, EventKind::Completed]
    );
    let taken = &done.events[0];
    assert_eq!(
        taken.message,
        "Task 1 taken over from agent bob by agent alice"
    );
    assert_eq!(taken.agent.as_deref(), Some("alice"));
    assert_eq!(
        taken.data,
        Some(
            json!({"previous_holder": {"agent": "bob", "since": "2026-11-23T10:00:00Z"}, "new_holder": "alice"})
        )
    );
    // startTask with a takeover hands the task over: alice holds it now.
    by(&mut r, &agent("bob"), "startTask", json!({"task_id": 2})).unwrap();
    let started = by(&mut r, &alice, "startTask", json!({"task_id": 2})).unwrap();
    assert_eq!(kinds(&started), [EventKind::TaskTakenOver]);
    let holder = r.document().tasks[1].holder.clone().unwrap();
    assert_eq!(holder.agent.as_deref(), Some("alice"));
    let error = by(&mut r, &agent("bob"), "completeTask", json!({})).unwrap_err();
    assert_eq!(
        error.code,
        ErrorCode::NoCurrentTask,
        "bob holds nothing now"
    );
    let mine = by(&mut r, &agent("alice"), "completeTask", json!({})).unwrap();
    assert_eq!(mine.data.to_json()["task_id"], 2);
}

#[test]
fn an_expired_lease_frees_the_task_for_anyone() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    by(
        &mut r,
        &agent("bob").with_lease(Some(30)),
        "startNextTask",
        json!({}),
    )
    .unwrap();
    r.expire_leases(T0 + 31);
    assert_eq!(r.document().tasks[0].status, TaskStatus::Pending);
    let done = by(
        &mut r,
        &agent("alice"),
        "completeTask",
        json!({"task_id": 1}),
    )
    .unwrap();
    assert_eq!(kinds(&done)[0], EventKind::Completed);
}

#[test]
fn a_task_nobody_named_holds_is_anyones() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    by(
        &mut r,
        &Caller::default().at(T0),
        "startNextTask",
        json!({}),
    )
    .unwrap();
    let done = by(
        &mut r,
        &agent("alice"),
        "completeTask",
        json!({"task_id": 1}),
    )
    .unwrap();
    assert_eq!(kinds(&done)[0], EventKind::Completed);
}

#[test]
fn the_cursor_is_the_last_task_the_caller_started() {
    for who in [None, Some("bob")] {
        let mut r = Runner::new(plan(&[&[], &[], &[]])).unwrap();
        let caller = Caller::agent(who.map(str::to_owned)).at(T0);
        by(&mut r, &caller, "startNextTask", json!({})).unwrap();
        by(&mut r, &caller, "startNextTask", json!({})).unwrap();
        // Another agent starts a task later: not the caller's cursor.
        by(&mut r, &agent("carol"), "startNextTask", json!({})).unwrap();
        // Without the cursor, an id-less complete is ambiguous …
        let error = by(&mut r, &caller, "completeTask", json!({})).unwrap_err();
        assert_eq!(error.code, ErrorCode::AmbiguousTask, "{who:?}");
        // … with it, it completes the last task the caller started, then the one before.
        let cursor = caller.clone().following_cursor();
        let first = by(&mut r, &cursor, "completeTask", json!({})).unwrap();
        assert_eq!(first.data.to_json()["task_id"], 2, "{who:?}");
        let second = by(&mut r, &cursor, "failTask", json!({"should_retry": false})).unwrap();
        assert_eq!(second.data.to_json()["task_id"], 1, "{who:?}");
        let error = by(&mut r, &cursor, "completeTask", json!({})).unwrap_err();
        assert_eq!(error.code, ErrorCode::NoCurrentTask);
        assert!(!error.message.contains("task_id"), "{}", error.message);
    }
}

#[test]
fn the_current_task_survives_another_agents_finished_task() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    let me = Caller::default().at(T0);
    by(&mut r, &me, "startNextTask", json!({})).unwrap();
    by(&mut r, &agent("bob"), "startNextTask", json!({})).unwrap();
    by(&mut r, &agent("bob"), "completeTask", json!({})).unwrap();
    let current = by(&mut r, &me, "getCurrentTask", json!({})).unwrap();
    assert_eq!(current.data.to_json()["id"], 1);
}

#[test]
fn a_removed_tasks_id_is_never_handed_out_again() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    let me = Caller::default();
    let added = by(&mut r, &me, "addTask", json!({"name": "three"})).unwrap();
    assert_eq!(added.data.to_json()["new_task"]["id"], 3);
    by(&mut r, &me, "removeTask", json!({"task_id": 3})).unwrap();
    assert_eq!(r.document().state.max_task_id, Some(3));
    let added = by(&mut r, &me, "addTask", json!({"name": "four"})).unwrap();
    assert_eq!(added.data.to_json()["new_task"]["id"], 4);
    assert_eq!(r.document().state.max_task_id, None, "task 4 says it now");
    // A replan that drops the largest id keeps it too.
    by(&mut r, &me, "replan", json!({"steps": []})).unwrap();
    assert_eq!(r.document().state.max_task_id, Some(4));
    let added = by(&mut r, &me, "addTask", json!({"name": "five"})).unwrap();
    assert_eq!(added.data.to_json()["new_task"]["id"], 5);
    // A document written before the mark existed derives it from its tasks.
    let mut old = plan(&[&[], &[]]);
    old.state.max_task_id = None;
    let mut r = Runner::new(old).unwrap();
    let added = by(&mut r, &me, "addTask", json!({"name": "three"})).unwrap();
    assert_eq!(added.data.to_json()["new_task"]["id"], 3);
}
