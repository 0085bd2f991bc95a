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

/// `n` tasks in steps of 4 (each task after the one 5 before it), the
/// steps listed in the document.
fn stepped_plan(n: u32) -> PlanDocument {
    let mut doc = plan(n);
    for task in &mut doc.tasks {
        task.dependencies = if task.id > 5 {
            vec![task.id - 5]
        } else {
            Vec::new()
        };
        task.step = Some(format!("s{}", (task.id - 1) / 4));
    }
    let steps = (0..n.div_ceil(4))
        .map(|s| json!({"id": format!("s{s}"), "name": format!("Step {s}"), "tasks": (s * 4 + 1..=(s * 4 + 4).min(n)).collect::<Vec<_>>()}))
        .collect::<Vec<_>>();
    doc.steps = serde_json::from_value(json!(steps)).unwrap();
    doc
}

/// A random operation on `doc` (its name and arguments), the `step`th.
fn random_op(
    roll: &mut impl FnMut(u64) -> u64,
    doc: &PlanDocument,
    step: usize,
) -> (&'static str, serde_json::Value) {
    let id = doc
        .tasks
        .get(roll(doc.tasks.len().max(1) as u64) as usize)
        .map_or(1, |t| t.id);
    match roll(16) {
        0..=4 => ("startNextTask", json!({})),
        5..=7 => (
            "completeTask",
            json!({"task_id": id, "result": format!("r{step}")}),
        ),
        8 => (
            "failTask",
            json!({"task_id": id, "error_message": "no", "should_retry": roll(2) == 0}),
        ),
        9 => ("retryTask", json!({"task_id": id})),
        10 => ("skipTask", json!({"task_id": id})),
        11 if roll(2) == 0 => (
            "addTask",
            json!({"name": format!("appended {step}"), "dependencies": [id]}),
        ),
        11 => (
            "addTask",
            json!({"name": format!("added {step}"), "after_task_id": id}),
        ),
        12 => ("removeTask", json!({"task_id": id})),
        13 => (
            "updateTask",
            json!({"task_id": id, "name": format!("renamed {step}")}),
        ),
        14 => (
            "replan",
            json!({"steps": [format!("new {step}"), format!("next {step}")]}),
        ),
        _ => match doc.state.status {
            crate::document::PlanStatus::Completed => ("resetPlan", json!({})),
            _ => ("heartbeat", json!({})),
        },
    }
}

/// Random operations on a plan with steps — the status changes that leave
/// the steps alone and the changes of the task list that move tasks in and
/// out of them — through the store, whose plan's steps are a row of their
/// own written only by a change of the list: after every operation the
/// plan read back by a fresh handle is the kept runner's document byte for
/// byte (as when the steps were written with every change), and each
/// change's stored event is the one the operation returned.
#[test]
fn random_changes_of_a_stepped_plan_read_back_as_kept() {
    let mut total = (0, 0, 0);
    for seed in [3u64, 11, 29] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.db");
        let store = SqliteStore::open(&path).unwrap();
        store.create("p", stepped_plan(14), false).unwrap();
        let mut seed = seed;
        let mut roll = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let (mut changed, mut moved, mut appended) = (0, 0, 0);
        for step in 0..120 {
            let doc = store.load("p").unwrap();
            let (name, args) = random_op(&mut roll, &doc, step);
            let caller = Caller::agent(Some(format!("a{}", roll(3)))).with_lease(Some(600));
            let appends = name == "addTask" && args.get("after_task_id").is_none();
            let op = Op::from_call(name, args).unwrap();
            let before = read_back(&path, "p");
            match store.apply("p", &op, &caller) {
                Ok(applied) if applied.changed() => {
                    changed += 1;
                    let now = store.load("p").unwrap();
                    let revision = now.state.revision;
                    let stored = store.events("p", revision - 1, 1).unwrap();
                    assert_eq!(
                        serde_json::to_value(&stored[0].record.events).unwrap(),
                        serde_json::to_value(&applied.events).unwrap(),
                        "{name}'s event"
                    );
                    if now.steps != doc.steps {
                        moved += 1;
                    }
                    if appends {
                        appended += 1;
                    }
                }
                Ok(_) => assert_eq!(read_back(&path, "p"), before, "{name} changed nothing"),
                Err(_) => assert_eq!(read_back(&path, "p"), before, "a refused {name}"),
            }
            if let Some(kept) = kept(&store, "p") {
                assert_eq!(read_back(&path, "p"), kept, "after {name} (step {step})");
            }
        }
        total = (total.0 + changed, total.1 + moved, total.2 + appended);
    }
    assert!(
        total.0 > 100 && total.1 > 12 && total.2 > 3,
        "{total:?} changes, of the steps, appends"
    );
}

/// Past [`MAX_KEPT`] plans the store keeps no more entries than that (those
/// not in use are dropped), and every plan — kept or read again — still
/// answers with its own state.
#[test]
fn more_plans_than_are_kept_each_answer_for_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.db");
    let store = SqliteStore::open(&path).unwrap();
    let plans = MAX_KEPT * 3;
    let start = Op::from_call("startNextTask", json!({})).unwrap();
    let status = Op::from_call("getPlanStatus", json!({})).unwrap();
    for n in 0..plans {
        store.create(&format!("p{n}"), plan(6), false).unwrap();
    }
    // Plan n gets n % 3 + 1 of its 3 free tasks started, in rounds over
    // every plan.
    for round in 0..3 {
        for n in (0..plans).filter(|n| n % 3 >= round) {
            let caller = Caller::agent(Some(format!("a{round}")));
            let applied = store.apply(&format!("p{n}"), &start, &caller).unwrap();
            assert_eq!(applied.data.to_json()["task"]["id"], round + 1);
            assert!(lock(&store.shared.entries).len() <= MAX_KEPT);
        }
    }
    for n in 0..plans {
        let answer = store
            .apply(&format!("p{n}"), &status, &Caller::default())
            .unwrap();
        assert_eq!(
            answer.data.to_json()["in_progress_tasks"],
            n % 3 + 1,
            "p{n}"
        );
        let doc = store.load(&format!("p{n}")).unwrap();
        assert_eq!(doc.state.revision as usize, n % 3 + 2, "p{n}");
        assert_eq!(read_back(&path, &format!("p{n}")), doc.to_json());
    }
    assert!(lock(&store.shared.entries).len() <= MAX_KEPT);
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

/// `resetPlan` and an `updateTask` that keeps the list write only the task
/// rows they change (counted by triggers on `tasks`), not every task, and
/// the plan reads back from the rows byte for byte as the kept runner's
/// whole document.
#[test]
fn a_reset_writes_only_the_task_rows_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reset.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("p", plan(8), false).unwrap();
    let counter = Connection::open(&path).unwrap();
    counter
        .execute_batch(
            "CREATE TABLE written (n INTEGER NOT NULL); INSERT INTO written VALUES (0);
             CREATE TRIGGER updated AFTER UPDATE ON tasks BEGIN UPDATE written SET n = n + 1; END;
             CREATE TRIGGER inserted AFTER INSERT ON tasks BEGIN UPDATE written SET n = n + 1; END;",
        )
        .unwrap();
    let written = || -> i64 {
        let n = counter
            .query_row("SELECT n FROM written", [], |row| row.get(0))
            .unwrap();
        counter.execute("UPDATE written SET n = 0", []).unwrap();
        n
    };
    let ann = Caller::agent(Some("ann".to_owned()));
    let apply = |name: &str, args: serde_json::Value| {
        let op = Op::from_call(name, args).unwrap();
        store.apply("p", &op, &ann).unwrap();
    };
    apply("startNextTask", json!({}));
    apply("completeTask", json!({"task_id": 1, "result": "ok"}));
    apply("startNextTask", json!({}));
    written();
    apply("resetPlan", json!({}));
    assert_eq!(written(), 2);
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
    apply("updateTask", json!({"task_id": 6, "description": "again"}));
    assert_eq!(written(), 1);
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
    // The new task and task 5, which waited for 2 and now waits for it.
    apply("addTask", json!({"name": "late", "after_task_id": 2}));
    assert_eq!(written(), 2);
    assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")));
}

/// An `addTask` at the end of the plan writes its new task's row alone
/// (counted by triggers on `tasks`) and not the steps (`plan_steps`, one
/// row per plan), whatever the plan's size; one after a task in the middle
/// writes its row, those of the tasks it rewired and the steps (it joins
/// a step), and a removal of a task in no step that nothing waits for
/// deletes its row and writes no other. After each,
/// and after the status changes between them, the plan read back from the
/// rows by a fresh handle is the kept runner's document byte for byte.
#[test]
fn an_add_at_the_end_writes_only_its_own_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("add.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("p", stepped_plan(8), false).unwrap();
    let counter = Connection::open(&path).unwrap();
    counter
        .execute_batch(
            "CREATE TABLE written (n INTEGER NOT NULL, steps INTEGER NOT NULL);
             INSERT INTO written VALUES (0, 0);
             CREATE TRIGGER updated AFTER UPDATE ON tasks BEGIN UPDATE written SET n = n + 1; END;
             CREATE TRIGGER inserted AFTER INSERT ON tasks BEGIN UPDATE written SET n = n + 1; END;
             CREATE TRIGGER stepped AFTER INSERT ON plan_steps
                 BEGIN UPDATE written SET steps = steps + 1; END;
             CREATE TRIGGER restepped AFTER UPDATE ON plan_steps
                 BEGIN UPDATE written SET steps = steps + 1; END;",
        )
        .unwrap();
    let written = || -> (i64, i64) {
        let n = counter
            .query_row("SELECT n, steps FROM written", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        counter
            .execute("UPDATE written SET n = 0, steps = 0", [])
            .unwrap();
        n
    };
    let ann = Caller::agent(Some("ann".to_owned()));
    let apply = |name: &str, args: serde_json::Value| {
        let op = Op::from_call(name, args).unwrap();
        store.apply("p", &op, &ann).unwrap();
        assert_eq!(kept(&store, "p"), Some(read_back(&path, "p")), "{name}");
    };
    apply("startNextTask", json!({}));
    written();
    apply("addTask", json!({"name": "late", "dependencies": [1]}));
    assert_eq!(written(), (1, 0), "an add at the end");
    apply("completeTask", json!({"task_id": 1, "result": "ok"}));
    assert_eq!(written(), (1, 0));
    apply("addTask", json!({"name": "later", "dependencies": [9, 2]}));
    assert_eq!(written(), (1, 0), "a second add at the end");
    apply("startTask", json!({"task_id": 9}));
    written();
    apply("addTask", json!({"name": "middle", "after_task_id": 2}));
    // The new task, and tasks 7 and 10, which waited for 2.
    assert_eq!(written(), (3, 1), "an insertion in the middle");
    apply("removeTask", json!({"task_id": 10}));
    assert_eq!(written(), (0, 0), "a removal");
    apply("addTask", json!({"name": "last"}));
    assert_eq!(written(), (1, 0), "an add after a removal");
    let doc = store.load("p").unwrap();
    let names: Vec<_> = doc.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 11);
    assert_eq!(names[2..4], ["middle", "task 3"]);
    assert_eq!(names[9..], ["late", "last"]);
    assert_eq!(doc.tasks[10].id, 12);
    assert_eq!(doc.state.max_task_id, None);
}
