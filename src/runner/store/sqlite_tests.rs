//! The SQLite store's kept runner against its rows: after every change the
//! plan read back from the file (by a fresh handle, no cache) is the kept
//! runner's document byte for byte, so the export (`GET /api/plans/{id}`)
//! is what it was when the whole document was one row; and a refused change
//! leaves no trace.

use serde_json::json;

use super::*;
use crate::document::{Meta, TaskDoc};
use crate::runner::{Caller, Op};

fn plan(tasks: u32) -> PlanDocument {
    let tasks = (1..=tasks)
        .map(|id| {
            let deps = if id > 3 { vec![id - 3] } else { Vec::new() };
            TaskDoc::pending(id, format!("task {id}"), deps)
        })
        .collect();
    PlanDocument::new(Meta::new("p", "rows"), tasks)
}

/// The kept runner's document, as JSON text.
fn kept(store: &SqliteStore, plan_id: &str) -> Option<String> {
    let entry = store.entry(plan_id);
    let slot = lock(&entry.slot);
    slot.runner
        .as_ref()
        .map(|runner| runner.document().to_json())
}

/// The plan as a fresh handle reads it from the file.
fn read_back(path: &Path, plan_id: &str) -> String {
    SqliteStore::open(path)
        .unwrap()
        .load(plan_id)
        .unwrap()
        .to_json()
}

#[test]
fn every_change_writes_what_the_kept_runner_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("p", plan(12), false).unwrap();
    let mut seed = 7u64;
    let mut roll = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut changed = 0;
    for step in 0..160 {
        let doc = store.load("p").unwrap();
        let id = doc
            .tasks
            .get(roll(doc.tasks.len().max(1) as u64) as usize)
            .map_or(1, |t| t.id);
        let (name, args) = match roll(10) {
            0..=3 => ("startNextTask", json!({})),
            4 | 5 => (
                "completeTask",
                json!({"task_id": id, "result": format!("r{step}")}),
            ),
            6 => (
                "failTask",
                json!({"task_id": id, "error_message": "no", "should_retry": true}),
            ),
            7 => (
                "addTask",
                json!({"name": format!("added {step}"), "after_task_id": id}),
            ),
            8 => (
                "updateTask",
                json!({"task_id": id, "description": format!("d{step}")}),
            ),
            _ => match doc.state.status {
                crate::document::PlanStatus::Completed => ("resetPlan", json!({})),
                _ => ("heartbeat", json!({})),
            },
        };
        let agent = format!("a{}", roll(3));
        let caller = Caller::agent(Some(agent.clone())).with_lease(Some(600));
        let op = Op::from_call(name, args).unwrap();
        let before = read_back(&path, "p");
        match store.apply("p", &op, &caller) {
            Ok(applied) if applied.changed() => changed += 1,
            Ok(_) => assert_eq!(read_back(&path, "p"), before, "{name} changed nothing"),
            Err(_) => assert_eq!(read_back(&path, "p"), before, "a refused {name}"),
        }
        if let Some(kept) = kept(&store, "p") {
            assert_eq!(read_back(&path, "p"), kept, "after {name} (step {step})");
        }
    }
    assert!(changed > 40, "{changed} changes");
    assert!(kept(&store, "p").is_some());
}

#[test]
fn a_change_refused_after_it_touched_a_task_leaves_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refused.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("p", plan(4), false).unwrap();
    let start = Op::from_call("startNextTask", json!({})).unwrap();
    store
        .apply("p", &start, &Caller::agent(Some("ann".to_owned())))
        .unwrap();
    let before = read_back(&path, "p");
    let error = store
        .transact("p", "startNextTask", &mut |runner| {
            runner.apply(&start)?;
            Err(OpError::new(ErrorCode::InvalidArgument, "not after all"))
        })
        .unwrap_err();
    assert_eq!(error.message, "not after all");
    // The runner that held the half-made change is gone, read again when
    // next needed: the next change starts from what was committed.
    assert_eq!(kept(&store, "p"), None);
    assert_eq!(read_back(&path, "p"), before);
    let applied = store
        .apply("p", &start, &Caller::agent(Some("bob".to_owned())))
        .unwrap();
    assert_eq!(applied.data.to_json()["task"]["id"], 2);
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
    // A change refused before it touched anything keeps the runner.
    let complete = Op::from_call("completeTask", json!({"task_id": 4})).unwrap();
    let error = store.apply("p", &complete, &Caller::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::DependenciesNotMet);
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
}

#[test]
fn a_query_answered_by_the_kept_runner_sees_another_handles_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.db");
    let (one, two) = (
        SqliteStore::open(&path).unwrap(),
        SqliteStore::open(&path).unwrap(),
    );
    one.create("p", plan(4), false).unwrap();
    let start = Op::from_call("startNextTask", json!({})).unwrap();
    let status = Op::from_call("getPlanStatus", json!({})).unwrap();
    let running = |store: &SqliteStore| {
        store
            .apply("p", &status, &Caller::default())
            .unwrap()
            .data
            .to_json()["in_progress_tasks"]
            .clone()
    };
    two.apply("p", &start, &Caller::agent(Some("bob".to_owned())))
        .unwrap();
    assert_eq!(running(&two), 1);
    assert!(kept(&two, "p").is_some());
    one.apply("p", &start, &Caller::agent(Some("ann".to_owned())))
        .unwrap();
    // `two` keeps a runner at revision 2; the file is at 3.
    assert_eq!(running(&two), 2);
    assert_eq!(running(&one), 2);
}

/// The plan as `read_kept` gives it, as JSON text; `None` when it ran no read.
fn read_kept_json(store: &SqliteStore, plan_id: &str) -> Option<String> {
    let mut text = None;
    let read = store
        .read_kept(plan_id, &mut |doc| text = Some(doc.to_json()))
        .unwrap();
    assert_eq!(read, text.is_some());
    text
}

#[test]
fn a_read_with_no_runner_kept_or_behind_another_handle_answers_the_committed_state_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("p", plan(6), false).unwrap();
    // Creating drops the runner; the read makes one from the rows and keeps it.
    assert_eq!(kept(&store, "p"), None);
    assert_eq!(read_kept_json(&store, "p"), Some(read_back(&path, "p")));
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
    // A change through another handle: the kept runner is behind the file.
    let other = SqliteStore::open(&path).unwrap();
    let start = Op::StartNextTask(serde_json::from_value(json!({})).unwrap());
    other.apply("p", &start, &Caller::default()).unwrap();
    let committed = read_back(&path, "p");
    assert!(committed.contains(r#""status": "in_progress""#));
    assert_eq!(read_kept_json(&store, "p"), Some(committed.clone()));
    assert_eq!(kept(&store, "p"), Some(committed));
    // A change through this handle is read from the same runner.
    store.apply("p", &start, &Caller::default()).unwrap();
    assert_eq!(read_kept_json(&store, "p"), Some(read_back(&path, "p")));
    // No plan: no read, and no entry made for it.
    assert_eq!(read_kept_json(&store, "nope"), None);
    assert!(!lock(&store.shared.entries).contains_key("nope"));
}
