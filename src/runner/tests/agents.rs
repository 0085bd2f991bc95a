//! The agent model with a fixed clock: identities, holders, leases, retries.

use serde_json::{json, Value};

use super::plan;
use crate::document::{PlanStatus, TaskStatus};
use crate::runner::{Caller, ErrorCode, Op, OpError, Runner};

/// 2026-11-23T10:00:00Z
const T0: u64 = 1_795_428_000;

fn as_(
    r: &mut Runner,
    agent: Option<&str>,
    now: u64,
    name: &str,
    args: Value,
) -> Result<Value, OpError> {
    let caller = Caller::agent(agent.map(str::to_owned)).at(now);
    r.apply_as(&Op::from_call(name, args)?, &caller)
        .map(|a| serde_json::to_value(&a.data).unwrap())
}

fn leased(r: &mut Runner, agent: &str, now: u64, lease: u64) -> Value {
    let caller = Caller::agent(Some(agent.to_owned()))
        .at(now)
        .with_lease(Some(lease));
    let applied = r
        .apply_as(&Op::from_call("startNextTask", json!({})).unwrap(), &caller)
        .unwrap();
    serde_json::to_value(&applied.data).unwrap()
}

fn status(r: &Runner, id: u32) -> TaskStatus {
    r.document().tasks[id as usize - 1].status
}

#[test]
fn each_agent_completes_its_own_task_without_naming_it() {
    let mut r = Runner::new(plan(&[&[], &[], &[]])).unwrap();
    for agent in ["a", "b", "c"] {
        as_(&mut r, Some(agent), T0, "startNextTask", json!({})).unwrap();
    }
    let holder = r.document().tasks[1].holder.clone().unwrap();
    assert_eq!(holder.agent.as_deref(), Some("b"));
    assert_eq!(holder.since.as_deref(), Some("2026-11-23T10:00:00Z"));
    // b finishes first, without an id: its own task 2, not the latest started (3).
    let done = as_(
        &mut r,
        Some("b"),
        T0 + 5,
        "completeTask",
        json!({"result": "b's"}),
    )
    .unwrap();
    assert_eq!(done["task_id"], 2);
    assert_eq!(
        r.document().tasks[1].holder,
        None,
        "a finished task has no holder"
    );
    assert_eq!(
        as_(&mut r, Some("c"), T0, "getCurrentTask", json!({})).unwrap()["id"],
        3
    );
    assert_eq!(
        as_(&mut r, Some("b"), T0, "getCurrentTask", json!({})).unwrap(),
        Value::Null
    );
    let error = as_(&mut r, Some("b"), T0, "failTask", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NoCurrentTask);
    assert!(
        error.message.contains("agent b holds no task"),
        "{}",
        error.message
    );
    // Without an identity, the tasks agents hold are not the caller's: refused, nothing changes.
    let before = r.document().clone();
    let error = as_(&mut r, None, T0, "completeTask", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NoCurrentTask);
    assert_eq!(r.document(), &before);
    assert_eq!(
        as_(
            &mut r,
            Some("a"),
            T0,
            "failTask",
            json!({"error_message": "x"})
        )
        .unwrap()["task_id"],
        1
    );
    // c's task is c's: a caller without an identity may not finish it (TASK_HELD).
    let unchanged = r.document().clone();
    let error = as_(&mut r, None, T0, "completeTask", json!({"task_id": 3})).unwrap_err();
    assert_eq!(error.code, ErrorCode::TaskHeld);
    assert_eq!(r.document(), &unchanged);
}

#[test]
fn an_agent_holding_two_tasks_must_name_one() {
    let mut r = Runner::new(plan(&[&[], &[]])).unwrap();
    as_(&mut r, Some("a"), T0, "startTask", json!({"task_id": 1})).unwrap();
    as_(&mut r, Some("a"), T0, "startTask", json!({"task_id": 2})).unwrap();
    let error = as_(&mut r, Some("a"), T0, "completeTask", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::AmbiguousTask);
    assert_eq!(error.details, json!({"agent": "a", "in_progress": [1, 2]}));
    // Its current task: the PlanManager API's current task (the last started) when it holds it.
    assert_eq!(
        as_(&mut r, Some("a"), T0, "getCurrentTask", json!({})).unwrap()["id"],
        2
    );
}

#[test]
fn blank_agent_names_are_refused() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    let error = as_(&mut r, Some(" "), T0, "startNextTask", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(status(&r, 1), TaskStatus::Pending);
}

#[test]
fn a_lease_that_runs_out_puts_the_task_back_for_the_next_agent() {
    let mut r = Runner::new(plan(&[&[], &[1]])).unwrap();
    let started = leased(&mut r, "crashed", T0, 30);
    assert_eq!(
        started["task"]["holder"],
        json!({"agent": "crashed", "since": "2026-11-23T10:00:00Z", "lease_seconds": 30,
               "lease_expires_at": "2026-11-23T10:00:30Z"})
    );
    assert!(r.expire_leases(T0 + 29).is_empty(), "not yet");
    let events = r.expire_leases(T0 + 30);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].task_id, Some(1));
    assert_eq!(events[0].agent.as_deref(), Some("crashed"));
    assert_eq!(
        events[0].message,
        "Task 1 is pending again: agent crashed's lease ran out at 2026-11-23T10:00:30Z"
    );
    assert_eq!(status(&r, 1), TaskStatus::Pending);
    assert_eq!(r.document().tasks[0].holder, None);
    assert_eq!(r.document().state.current_task_id, None);
    // The next agent takes it.
    assert_eq!(leased(&mut r, "other", T0 + 31, 60)["task"]["id"], 1);
    // The crashed agent comes back: it holds nothing any more.
    let error = as_(&mut r, Some("crashed"), T0 + 32, "completeTask", json!({})).unwrap_err();
    assert_eq!(error.code, ErrorCode::NoCurrentTask);
}

#[test]
fn heartbeats_and_changes_renew_a_lease() {
    let mut r = Runner::new(plan(&[&[], &[], &[]])).unwrap();
    leased(&mut r, "a", T0, 30);
    leased(&mut r, "b", T0, 30);
    let beat = as_(&mut r, Some("a"), T0 + 20, "heartbeat", json!({})).unwrap();
    assert_eq!(
        beat["renewed"],
        json!([{"task_id": 1, "lease_expires_at": "2026-11-23T10:00:50Z"}])
    );
    // b's lease runs out at +30; a's not until +50.
    let expired: Vec<_> = r.expire_leases(T0 + 40).iter().map(|e| e.task_id).collect();
    assert_eq!(expired, [Some(2)]);
    assert_eq!(status(&r, 1), TaskStatus::InProgress);
    // Any change by a renews too (here: starting another task, for 10 s).
    let caller = Caller::agent(Some("a".to_owned())).at(T0 + 45);
    r.apply_as(
        &Op::from_call("startTask", json!({"task_id": 3})).unwrap(),
        &caller,
    )
    .unwrap();
    assert_eq!(
        r.document().tasks[0]
            .holder
            .as_ref()
            .unwrap()
            .lease_expires_at
            .as_deref(),
        Some("2026-11-23T10:01:15Z")
    );
    // A heartbeat with a new length, and one from an agent holding nothing.
    let caller = Caller::agent(Some("a".to_owned()))
        .at(T0 + 50)
        .with_lease(Some(600));
    r.apply_as(&Op::from_call("heartbeat", json!({})).unwrap(), &caller)
        .unwrap();
    assert_eq!(
        r.document().tasks[0].holder.as_ref().unwrap().lease_seconds,
        Some(600)
    );
    let idle = r
        .apply_as(
            &Op::from_call("heartbeat", json!({})).unwrap(),
            &Caller::agent(Some("z".to_owned())).at(T0),
        )
        .unwrap();
    assert!(!idle.changed());
    assert_eq!(
        serde_json::to_value(&idle.data).unwrap()["renewed"],
        json!([])
    );
}

#[test]
fn a_lease_needs_a_clock() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    let caller = Caller::agent(None).with_lease(Some(30));
    let error = r
        .apply_as(&Op::from_call("startNextTask", json!({})).unwrap(), &caller)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
}

#[test]
fn lease_durations() {
    use crate::runner::parse_lease;
    assert_eq!(parse_lease("30s"), Ok(30));
    assert_eq!(parse_lease("90"), Ok(90));
    assert_eq!(parse_lease("1h30m"), Ok(5400));
    assert_eq!(parse_lease("2d"), Ok(172_800));
    for bad in [
        "",
        "0",
        "0s",
        "30x",
        "s",
        "1h30",
        "400d",
        "99999999999999999999s",
    ] {
        assert!(parse_lease(bad).is_err(), "{bad}");
    }
}

#[test]
fn retries_default_to_the_plan_then_to_two() {
    // No budget anywhere: two retries (three attempts), should_retry by default.
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    for attempt in 1..=3 {
        as_(&mut r, None, T0, "startNextTask", json!({})).unwrap();
        let failed = as_(&mut r, None, T0, "failTask", json!({"error_message": "e"})).unwrap();
        assert_eq!(failed["will_retry"], attempt < 3, "attempt {attempt}");
        assert_eq!(failed["retry_budget"], 2);
    }
    assert_eq!(r.document().state.status, PlanStatus::Failed);
    // retryTask: back to pending, the plan running again.
    let retried = as_(&mut r, None, T0, "retryTask", json!({"task_id": 1})).unwrap();
    assert_eq!(retried["executable"], true);
    assert_eq!(status(&r, 1), TaskStatus::Pending);
    assert_eq!(r.document().state.status, PlanStatus::Running);
    // A plan-level budget, and a task's own `retry 0` opting out.
    let mut doc = plan(&[&[], &[]]);
    doc.meta.retry = Some(1);
    doc.tasks[1].retry.max = Some(0);
    let mut r = Runner::new(doc).unwrap();
    as_(&mut r, None, T0, "startTask", json!({"task_id": 1})).unwrap();
    assert_eq!(
        as_(&mut r, None, T0, "failTask", json!({})).unwrap()["retry_budget"],
        1
    );
    as_(&mut r, None, T0, "startTask", json!({"task_id": 2})).unwrap();
    let failed = as_(&mut r, None, T0, "failTask", json!({"task_id": 2})).unwrap();
    assert_eq!(
        (failed["will_retry"].clone(), failed["retry_budget"].clone()),
        (json!(false), json!(0))
    );
}

#[test]
fn blocked_tasks_are_worked_out() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2]])).unwrap();
    let blocked = as_(
        &mut r,
        None,
        T0,
        "getTaskList",
        json!({"status": "blocked"}),
    )
    .unwrap();
    assert_eq!(blocked["filtered"], 2);
    assert_eq!(
        as_(&mut r, None, T0, "getPlanStatus", json!({})).unwrap()["blocked_tasks"],
        2
    );
}
