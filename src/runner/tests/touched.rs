//! [`Runner::take_touched`] against the document: over random plans and
//! random operations (agents, leases, expiry, edits — insertions after a
//! task, removals, adds at the end —, reset, replan, refusals), rows
//! written as a store writes them (the keys gone deleted, the tasks
//! touched written at their order keys) read back, in key order, as the
//! runner's tasks, and a change of the steps is marked. A store writes
//! only the marked rows, so a mutation site that forgets to mark fails
//! here.

use proptest::prelude::*;
use serde_json::json;

use super::plan;
use super::properties::dag;
use crate::runner::*;

/// One random call: an operation's name, its arguments (`i` picks a task),
/// the agent, and how many seconds pass first.
fn call() -> impl Strategy<Value = (&'static str, usize, u8, u64)> {
    let names = prop_oneof![
        4 => Just("startNextTask"),
        3 => Just("completeTask"),
        2 => Just("failTask"),
        1 => Just("skipTask"),
        1 => Just("retryTask"),
        1 => Just("startTask"),
        1 => Just("heartbeat"),
        1 => Just("addTask"),
        1 => Just("appendTask"),
        1 => Just("removeTask"),
        1 => Just("updateTask"),
        1 => Just("pausePlan"),
        1 => Just("resumePlan"),
        1 => Just("resetPlan"),
        1 => Just("replan"),
        1 => Just("expire"),
    ];
    (names, any::<usize>(), 0u8..3, 0u64..40)
}

fn arguments(name: &str, id: u32, other: u32) -> serde_json::Value {
    match name {
        "completeTask" => json!({"task_id": id, "result": "ok"}),
        "failTask" => {
            json!({"task_id": id, "error_message": "no", "should_retry": other.is_multiple_of(2)})
        }
        "skipTask" => json!({"task_id": id, "reason": "later"}),
        "retryTask" | "startTask" | "removeTask" => json!({"task_id": id}),
        "addTask" => json!({"name": "added", "dependencies": [other], "after_task_id": id}),
        "appendTask" => json!({"name": "appended", "dependencies": [other, id]}),
        "updateTask" => json!({"task_id": id, "name": "renamed", "dependencies": [other]}),
        "replan" => json!({"steps": [{"name": "again"}]}),
        _ => json!({}),
    }
}

/// A store's task rows kept as a store keeps them: by order key.
type Rows = std::collections::BTreeMap<i64, crate::document::TaskDoc>;

/// Writes into `rows` what a store writes for a change that touched
/// `touched` on `r`: the keys gone deleted, the tasks touched written at
/// their keys, or every task when every task was touched.
fn write_rows(rows: &mut Rows, r: &Runner, touched: &Touched) {
    let doc = r.document();
    if touched.is_everything() {
        rows.clear();
    }
    for key in touched.gone_keys() {
        rows.remove(&key);
    }
    for (i, task) in doc.tasks.iter().enumerate() {
        if touched.contains(task.id) {
            rows.insert(r.order().key(i), task.clone());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(128)))]

    #[test]
    fn every_task_an_operation_changes_is_marked_touched(
        deps in dag(),
        calls in proptest::collection::vec(call(), 0..80),
    ) {
        let slices: Vec<&[u32]> = deps.iter().map(Vec::as_slice).collect();
        let mut r = Runner::new(plan(&slices)).unwrap();
        let mut rows: Rows = (0..r.document().tasks.len())
            .map(|i| (r.order().key(i), r.document().tasks[i].clone()))
            .collect();
        let mut now = 1_800_000_000u64;
        for (name, pick, agent, wait) in calls {
            now += wait;
            let ids: Vec<u32> = r.document().tasks.iter().map(|t| t.id).collect();
            let id = ids.get(pick % ids.len().max(1)).copied().unwrap_or(1);
            let other = ids.get((pick / 7) % ids.len().max(1)).copied().unwrap_or(1);
            let before = r.document().clone();
            r.take_touched();
            let args = arguments(name, id, other);
            let name = if name == "appendTask" { "addTask" } else { name };
            let refused = if name == "expire" {
                r.expire_leases(now);
                false
            } else {
                let caller = Caller::agent(Some(format!("a{agent}"))).with_lease(Some(30)).at(now);
                let op = Op::from_call(name, args).unwrap();
                r.apply_as(&op, &caller).is_err()
            };
            let touched = r.take_touched();
            if before.steps != r.document().steps {
                prop_assert!(touched.steps_changed(), "{} changed the steps unmarked", name);
            }
            r.assert_consistent();
            // The rows written, in key order, are the tasks, in plan order.
            write_rows(&mut rows, &r, &touched);
            let read: Vec<&crate::document::TaskDoc> = rows.values().collect();
            let tasks: Vec<&crate::document::TaskDoc> = r.document().tasks.iter().collect();
            prop_assert_eq!(read, tasks, "{} wrote other rows: {:?}", name, touched);
            let keys: Vec<i64> = rows.keys().copied().collect();
            let order: Vec<i64> = (0..r.order().len()).map(|i| r.order().key(i)).collect();
            prop_assert_eq!(keys, order, "after {}", name);
            if refused {
                prop_assert_eq!(r.document(), &before, "a refused {} changed the state", name);
            }
        }
    }
}

/// `resetPlan` and an `updateTask` that keeps the list and the steps mark
/// only the tasks they change (a store writes those rows alone), not every
/// task; so do an insertion after a task and a removal (with the steps,
/// which they change).
#[test]
fn a_reset_and_an_update_mark_only_the_tasks_they_change() {
    let mut doc = plan(&[&[], &[], &[], &[], &[]]);
    for task in &mut doc.tasks {
        task.step = Some(if task.id < 4 { "a" } else { "b" }.to_owned());
    }
    doc.steps = serde_json::from_value(json!([
        {"id": "a", "name": "A", "tasks": [1, 2, 3]},
        {"id": "b", "name": "B", "tasks": [4, 5]},
    ]))
    .unwrap();
    let mut r = Runner::new(doc).unwrap();
    let ann = Caller::agent(Some("ann".to_owned()));
    let call = |r: &mut Runner, name: &str, args: serde_json::Value| {
        let op = Op::from_call(name, args).unwrap();
        r.apply_as(&op, &ann).unwrap();
    };
    call(&mut r, "startNextTask", json!({}));
    call(
        &mut r,
        "completeTask",
        json!({"task_id": 1, "result": "ok"}),
    );
    call(&mut r, "startTask", json!({"task_id": 4}));
    r.take_touched();
    call(&mut r, "resetPlan", json!({}));
    let touched = r.take_touched();
    assert!(!touched.is_everything());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [1, 4]);
    call(
        &mut r,
        "updateTask",
        json!({"task_id": 2, "description": "again"}),
    );
    let touched = r.take_touched();
    assert!(!touched.is_everything());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [2]);
    call(
        &mut r,
        "updateTask",
        json!({"task_id": 5, "dependencies": [2]}),
    );
    assert_eq!(r.take_touched().ids().collect::<Vec<_>>(), [5]);
    // An insertion after task 2 (in step a): the new task, task 5 (which
    // waited for 2 and now waits for it) and the steps, no other task.
    call(
        &mut r,
        "addTask",
        json!({"name": "late", "after_task_id": 2}),
    );
    let touched = r.take_touched();
    assert!(!touched.is_everything() && touched.is_reshaped() && touched.steps_changed());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [5, 6]);
    assert_eq!(touched.gone_keys().count(), 0);
    // Its removal: its key goes, task 5 waits for 2 again.
    call(&mut r, "removeTask", json!({"task_id": 6}));
    let touched = r.take_touched();
    assert!(!touched.is_everything() && touched.steps_changed());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [5]);
    assert_eq!(touched.gone_keys().count(), 1);
}

/// An `addTask` at the end of the plan marks the new task alone, as
/// appended (a store inserts its row and writes no other task and not the
/// steps); one after a task in the middle marks everything.
#[test]
fn an_add_at_the_end_marks_only_the_new_task() {
    let mut r = Runner::new(plan(&[&[], &[1], &[2]])).unwrap();
    let ann = Caller::agent(Some("ann".to_owned()));
    let call = |r: &mut Runner, name: &str, args: serde_json::Value| {
        let op = Op::from_call(name, args).unwrap();
        r.apply_as(&op, &ann).unwrap();
    };
    call(&mut r, "startNextTask", json!({}));
    r.take_touched();
    call(
        &mut r,
        "addTask",
        json!({"name": "late", "dependencies": [1, 3]}),
    );
    let touched = r.take_touched();
    assert!(!touched.is_everything() && touched.is_reshaped() && !touched.steps_changed());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [4]);
    r.assert_consistent();
    // In the middle: the new task and tasks 2 and 4, pending, which waited
    // for 1 and now wait for it; no other task.
    call(
        &mut r,
        "addTask",
        json!({"name": "middle", "after_task_id": 1}),
    );
    let touched = r.take_touched();
    assert!(!touched.is_everything());
    assert_eq!(touched.ids().collect::<Vec<_>>(), [2, 4, 5]);
    r.assert_consistent();
}
