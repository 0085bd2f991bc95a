//! PostgreSQL's tasks as rows (schema 5, keyed by order keys since 7): each handle keeps its plans'
//! runners and writes only the tasks a change touched, yet what any handle
//! reads is byte for byte what a fresh handle reads from the rows — after
//! changes through two handles (two servers) mixed with adds, updates,
//! refusals and starts over; a refused change leaves no trace; another
//! handle's change (a task's, or the list's) is seen; and a store written
//! by schema 4 (a whole document a plan) or by schema 5 (each plan's steps
//! in its header) is carried forward. Skipped, saying so, where PostgreSQL
//! is not installed.

use planc::document::{Meta, PlanDocument, PlanStatus, StepDoc, TaskDoc, TaskStatus};
use planc::runner::{
    open_store, Caller, CommitCounts, ErrorCode, Op, OpError, PlanStore, ORDER_GAP,
};
use serde_json::json;

use crate::store_support::Backend;

/// `n` tasks, each after the one three before it.
fn plan(n: u32) -> PlanDocument {
    let tasks = (1..=n)
        .map(|id| {
            let deps = if id > 3 { vec![id - 3] } else { Vec::new() };
            TaskDoc::pending(id, format!("task {id}"), deps)
        })
        .collect();
    PlanDocument::new(Meta::new("p", "rows"), tasks)
}

/// [`plan`]`(n)` with its tasks in steps of four.
fn plan_in_steps(n: u32) -> PlanDocument {
    let mut doc = plan(n);
    for task in &mut doc.tasks {
        task.step = Some(format!("s{}", (task.id - 1) / 4));
    }
    doc.steps = (0..n.div_ceil(4))
        .map(|s| StepDoc {
            id: format!("s{s}"),
            name: format!("Step {s}"),
            tasks: (s * 4 + 1..=(s * 4 + 4).min(n)).collect(),
        })
        .collect();
    doc
}

fn op(name: &str, args: serde_json::Value) -> Op {
    Op::from_call(name, args).unwrap()
}

fn agent(name: &str) -> Caller {
    Caller::agent(Some(name.to_owned())).with_lease(Some(600))
}

/// The plan as a new handle reads it from the rows.
fn fresh(url: &str, plan_id: &str) -> String {
    open_store(url).unwrap().load(plan_id).unwrap().to_json()
}

/// A pseudo-random number below `n` (the same sequence every run).
fn roller(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    }
}

/// A mixed operation on `doc` (starts, completes, fails, adds at the end
/// and after a task, updates, heartbeats; a reset once the plan is done).
fn mixed(roll: &mut impl FnMut(u64) -> u64, doc: &PlanDocument, step: usize) -> Op {
    let id = doc
        .tasks
        .get(roll(doc.tasks.len().max(1) as u64) as usize)
        .map_or(1, |t| t.id);
    match roll(10) {
        0..=3 => op("startNextTask", json!({})),
        4 | 5 => op(
            "completeTask",
            json!({"task_id": id, "result": format!("r{step}")}),
        ),
        6 => op(
            "failTask",
            json!({"task_id": id, "error_message": "no", "should_retry": true}),
        ),
        7 if roll(2) == 0 => op(
            "addTask",
            json!({"name": format!("appended {step}"), "dependencies": [id]}),
        ),
        7 => op(
            "addTask",
            json!({"name": format!("added {step}"), "after_task_id": id}),
        ),
        8 => op(
            "updateTask",
            json!({"task_id": id, "description": format!("d{step}")}),
        ),
        _ => match doc.state.status {
            PlanStatus::Completed => op("resetPlan", json!({})),
            _ => op("heartbeat", json!({})),
        },
    }
}

/// Mixed changes through two handles on a plan with steps: after each, the
/// handle that made it, the other one (its kept runner brought up to the
/// rows) and — every few steps — a fresh handle read the same bytes; a
/// refused change or one of nothing leaves the rows as they were.
#[test]
fn postgres_rows_read_back_byte_for_byte_after_mixed_changes_through_two_handles() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let url = &backend.url;
    let handles = [open_store(url).unwrap(), open_store(url).unwrap()];
    handles[0].create("p", plan_in_steps(12), false).unwrap();
    let mut roll = roller(11);
    let mut changed = 0;
    for step in 0..200 {
        let (acting, other) = match roll(2) {
            0 => (&handles[0], &handles[1]),
            _ => (&handles[1], &handles[0]),
        };
        let before = other.load("p").unwrap().to_json();
        let op = mixed(&mut roll, &before_doc(&before), step);
        let caller = agent(&format!("a{}", roll(3)));
        let now = match acting.apply("p", &op, &caller) {
            Ok(applied) if applied.changed() => {
                changed += 1;
                acting.load("p").unwrap().to_json()
            }
            _ => {
                let now = acting.load("p").unwrap().to_json();
                assert_eq!(now, before, "{op:?} changed nothing (step {step})");
                now
            }
        };
        assert_eq!(other.load("p").unwrap().to_json(), now, "step {step}");
        if step % 20 == 19 {
            assert_eq!(fresh(url, "p"), now, "step {step}");
        }
    }
    assert!(changed > 40, "{changed} changes");
    let events = handles[1].events("p", 0, 1000).unwrap();
    assert_eq!(
        events.len() as u64,
        handles[0].load("p").unwrap().state.revision
    );
}

fn before_doc(text: &str) -> PlanDocument {
    serde_json::from_str(text).unwrap()
}

/// A change that touched a task and then was refused writes nothing, and
/// the handle's next change starts from what was committed.
#[test]
fn a_refused_postgres_change_leaves_no_trace() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let store = open_store(&backend.url).unwrap();
    store.create("p", plan(4), false).unwrap();
    let start = op("startNextTask", json!({}));
    store.apply("p", &start, &agent("ann")).unwrap();
    let before = fresh(&backend.url, "p");
    let error = store
        .transact("p", "startNextTask", &mut |runner| {
            runner.apply(&start)?;
            Err(OpError::new(ErrorCode::InvalidArgument, "not after all"))
        })
        .unwrap_err();
    assert_eq!(error.message, "not after all");
    assert_eq!(store.load("p").unwrap().to_json(), before);
    assert_eq!(fresh(&backend.url, "p"), before);
    let applied = store.apply("p", &start, &agent("bob")).unwrap();
    assert_eq!(applied.data.to_json()["task"]["id"], 2);
    assert_eq!(store.load("p").unwrap().to_json(), fresh(&backend.url, "p"));
    let complete = op("completeTask", json!({"task_id": 4}));
    let error = store.apply("p", &complete, &Caller::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::DependenciesNotMet);
    assert_eq!(store.events("p", 0, 10).unwrap().len(), 3);
}

/// A handle's kept runner sees another handle's changes: a task's (its
/// query answers and its next change start from it) and the list's (a task
/// added); its change made on an outdated runner is made again under the
/// plan's lock.
#[test]
fn another_postgres_handles_change_is_seen_by_a_kept_runner() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    use planc::runner::PostgresStore;
    let one = PostgresStore::open(&backend.url).unwrap();
    let two = PostgresStore::open(&backend.url).unwrap();
    one.create("p", plan(6), false).unwrap();
    let start = op("startNextTask", json!({}));
    let status = op("getPlanStatus", json!({}));
    let running = |store: &PostgresStore| {
        store
            .apply("p", &status, &Caller::default())
            .unwrap()
            .data
            .to_json()["in_progress_tasks"]
            .clone()
    };
    one.apply("p", &start, &agent("ann")).unwrap();
    assert_eq!(running(&one), 1);
    two.apply("p", &start, &agent("bob")).unwrap();
    assert_eq!(running(&one), 2);
    let add = op("addTask", json!({"name": "late", "after_task_id": 1}));
    two.apply("p", &add, &agent("bob")).unwrap();
    let seen = one.load("p").unwrap();
    assert_eq!(seen.tasks.len(), 7);
    assert_eq!(seen.to_json(), fresh(&backend.url, "p"));
    // One's runner is at two's revision now: its change goes ahead. Then
    // two completes bob's task behind one's back, and one's next change,
    // computed on the runner before it, is made again on the rows.
    let applied = one.apply("p", &start, &agent("cy")).unwrap();
    assert_eq!(applied.data.to_json()["task"]["id"], 3);
    let counts = one.commit_counts();
    assert_eq!(
        counts,
        CommitCounts {
            ahead: 2,
            on_rows: 0
        }
    );
    let done = op("completeTask", json!({"task_id": 2}));
    two.apply("p", &done, &agent("bob")).unwrap();
    let applied = one.apply("p", &start, &agent("dan")).unwrap();
    // Task 5 waited for task 2, which two completed: dan has it.
    assert_eq!(applied.data.to_json()["task"]["id"], 5);
    let counts = |ahead, on_rows| CommitCounts { ahead, on_rows };
    assert_eq!(one.commit_counts(), counts(3, 0));
    // A handle that makes its changes under the plan's lock at once: on
    // the rows as they are (its kept runner brought up to them first).
    one.set_ahead_attempts(0);
    let done = op("completeTask", json!({"task_id": 3}));
    two.apply("p", &done, &agent("cy")).unwrap();
    let applied = one.apply("p", &start, &agent("eve")).unwrap();
    assert_eq!(applied.data.to_json()["task"]["id"], 6);
    assert_eq!(one.commit_counts(), counts(3, 1));
    let doc = fresh(&backend.url, "p");
    assert_eq!(one.load("p").unwrap().to_json(), doc);
    let doc = before_doc(&doc);
    assert_eq!(doc.state.revision, 9);
}

/// A store written by schema 4 (each plan one whole document, as today's
/// planc before rows wrote it) is carried forward when opened: the plan
/// reads back byte for byte, its events keep their feed positions, its
/// tasks are rows, and changes go on from there; a document that does not
/// parse stays whole and says so when read.
#[test]
fn a_schema_4_postgres_store_moves_its_tasks_to_rows() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let mut state = plan(5);
    state.meta.id = "kept".to_owned();
    state.state.revision = 2;
    state.tasks[1].status = TaskStatus::Completed;
    state.tasks[1].result = Some("done".to_owned());
    let before = state.to_json();
    let mut client = ::postgres::Client::connect(&backend.url, ::postgres::NoTls).unwrap();
    client
        .batch_execute(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (4);
             CREATE TABLE plans (
                 plan_id  TEXT PRIMARY KEY,
                 revision BIGINT NOT NULL,
                 doc      TEXT NOT NULL,
                 summary  TEXT NOT NULL DEFAULT '{}'
             );
             CREATE TABLE events (
                 plan_id TEXT NOT NULL,
                 seq     BIGINT NOT NULL,
                 record  TEXT NOT NULL,
                 pos     BIGINT NOT NULL,
                 PRIMARY KEY (plan_id, seq)
             );
             CREATE UNIQUE INDEX events_pos ON events (pos);
             INSERT INTO plans (plan_id, revision, doc) VALUES ('broken', 1, '{\"tasks\": 7}');",
        )
        .unwrap();
    let compact: String = serde_json::to_string(&state).unwrap();
    client
        .execute(
            "INSERT INTO plans (plan_id, revision, doc) VALUES ('kept', 2, $1)",
            &[&compact],
        )
        .unwrap();
    let record = |seq: i64, op: &str| {
        format!(
            r#"{{"revision":{seq},"at":"2026-01-01T00:00:00Z","op":"{op}","plan_status":"running","events":[]}}"#
        )
    };
    for (seq, op, pos) in [(1, "init", 5000i64), (2, "completeTask", 6001)] {
        client
            .execute(
                "INSERT INTO events (plan_id, seq, record, pos) VALUES ('kept', $1, $2, $3)",
                &[&seq, &record(seq, op), &pos],
            )
            .unwrap();
    }
    let store = open_store(&backend.url).unwrap();
    assert_eq!(store.load("kept").unwrap().to_json(), before);
    let (version, rows): (i32, i64) = {
        let row = client
            .query_one(
                "SELECT (SELECT version FROM schema_version),
                        (SELECT count(*) FROM tasks WHERE plan_id = 'kept')",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((version, rows), (7, 5));
    let start = op("startNextTask", json!({}));
    store.apply("kept", &start, &agent("ann")).unwrap();
    let events = store.events("kept", 0, 10).unwrap();
    let positions: Vec<(u64, u64)> = events.iter().map(|e| (e.seq, e.position)).collect();
    assert_eq!(positions[..2], [(1, 5000), (2, 6001)]);
    assert!(positions[2].1 > 6001, "{positions:?}");
    let now = before_doc(&fresh(&backend.url, "kept"));
    assert_eq!(now.tasks[0].status, TaskStatus::InProgress);
    assert_eq!(now.tasks[1].result.as_deref(), Some("done"));
    assert_eq!(now.state.revision, 3);
    let error = store.load("broken").unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidState, "{}", error.message);
}

/// A store written by schema 5 — each plan's steps in its header, written
/// by every change — as planc wrote it before version 6
/// (`tests/store_support/postgres_schema_5`: a plan with steps, one
/// without) is carried forward when opened: each plan's export is byte for
/// byte what that planc's `GET /api/plans/{id}` gave, the steps are a row of
/// their own and out of the header, the events keep their feed positions,
/// and changes go on from there (a change of the list writes the steps).
#[test]
fn a_schema_5_postgres_store_moves_its_steps_out_of_the_headers() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/store_support/postgres_schema_5"
    );
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
    let url = &backend.url;
    // The dump sets its session's search path: a client of its own.
    ::postgres::Client::connect(url, ::postgres::NoTls)
        .unwrap()
        .batch_execute(&read("dump.sql"))
        .unwrap();
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let positions = |client: &mut ::postgres::Client| -> Vec<(String, i64, i64)> {
        client
            .query("SELECT plan_id, seq, pos FROM events ORDER BY pos", &[])
            .unwrap()
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect()
    };
    let written = positions(&mut client);
    assert_eq!(written.len(), 7);
    // Transaction ids past the dump's (its cluster's), as on the cluster
    // that wrote it: new events are fed after the old ones.
    let last = written.last().unwrap().2 / 1024;
    while client
        .query_one("SELECT pg_current_xact_id()::text::bigint", &[])
        .unwrap()
        .get::<_, i64>(0)
        <= last
    {}
    let store = open_store(url).unwrap();
    let export = |store: &dyn PlanStore, plan_id: &str| {
        let mut out = Vec::new();
        store.export_json(plan_id, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    for plan_id in ["jd", "plain"] {
        let written = read(&format!("{plan_id}.export.json"));
        assert_eq!(export(&*store, plan_id), written, "{plan_id}");
        assert_eq!(export(&*open_store(url).unwrap(), plan_id), written);
    }
    let row = client
        .query_one(
            "SELECT (SELECT version FROM schema_version),
                    (SELECT string_agg(plan_id, ',') FROM plan_steps),
                    (SELECT count(*) FROM plans WHERE doc LIKE '%\"steps\":[]%')",
            &[],
        )
        .unwrap();
    let (version, stepped, empty): (i32, String, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((version, stepped.as_str(), empty), (7, "jd", 2));
    let feed: Vec<(String, i64, i64)> = store
        .feed(0, 100)
        .unwrap()
        .iter()
        .map(|e| (e.plan_id.clone(), e.seq as i64, e.position as i64))
        .collect();
    assert_eq!(feed, written);
    let steps = before_doc(&read("jd.export.json")).steps;
    let done = op("completeTask", json!({"task_id": 2, "result": "typed"}));
    store.apply("jd", &done, &agent("a2")).unwrap();
    let now = before_doc(&fresh(url, "jd"));
    assert_eq!(now.tasks[1].status, TaskStatus::Completed);
    assert_eq!((now.state.revision, &now.steps), (6, &steps));
    let add = op(
        "addTask",
        json!({"name": "Check stock", "after_task_id": 5}),
    );
    store.apply("jd", &add, &agent("a2")).unwrap();
    let now = fresh(url, "jd");
    assert_eq!(store.load("jd").unwrap().to_json(), now);
    let now = before_doc(&now);
    assert_eq!(now.steps[1].tasks, [4, 5, 7]);
    let events = store.events("jd", 0, 10).unwrap();
    assert_eq!(events.len(), 7);
    assert!(events[5].position as i64 > written.last().unwrap().2);
}

/// `resetPlan` and an `updateTask` that keeps the list write only the task
/// rows they change (each row keeps the revision that last wrote it), not
/// every task, and the plan reads back from the rows byte for byte as the
/// whole document the writing handle holds; another handle brings its
/// runner up to them from those rows alone.
#[test]
fn a_postgres_reset_writes_only_the_tasks_it_changes() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let url = &backend.url;
    let store = open_store(url).unwrap();
    let other = open_store(url).unwrap();
    store.create("p", plan_in_steps(8), false).unwrap();
    let start = op("startNextTask", json!({}));
    let ann = agent("ann");
    store.apply("p", &start, &ann).unwrap();
    let done = op("completeTask", json!({"task_id": 1, "result": "ok"}));
    store.apply("p", &done, &ann).unwrap();
    store.apply("p", &start, &ann).unwrap();
    assert_eq!(other.load("p").unwrap().to_json(), fresh(url, "p"));
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let mut written_at = |revision: i64| -> Vec<i64> {
        client
            .query(
                "SELECT ord / $2 - 1 FROM tasks WHERE plan_id = 'p' AND revision = $1
                 ORDER BY ord",
                &[&revision, &ORDER_GAP],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect()
    };
    store.apply("p", &op("resetPlan", json!({})), &ann).unwrap();
    let whole = store.load("p").unwrap().to_json();
    assert_eq!(fresh(url, "p"), whole);
    assert_eq!(other.load("p").unwrap().to_json(), whole);
    let doc = before_doc(&whole);
    assert_eq!(doc.state.revision, 5);
    assert!(doc.tasks.iter().all(|t| t.status == TaskStatus::Pending));
    assert_eq!(written_at(5), [0, 1]);
    let update = op("updateTask", json!({"task_id": 6, "description": "again"}));
    store.apply("p", &update, &ann).unwrap();
    assert_eq!(written_at(6), [5]);
    let whole = store.load("p").unwrap().to_json();
    assert_eq!(fresh(url, "p"), whole);
    assert_eq!(other.load("p").unwrap().to_json(), whole);
}

/// An `addTask` at the end of the plan writes its new task's row alone
/// (each row keeps the revision that last wrote it), not the steps' row and
/// not `reshaped`; one after a task in the middle writes its row and those
/// of the tasks it rewired, and not `reshaped` either. After
/// each, the plan reads back from the rows byte for byte as the writing
/// handle holds it, and another handle brings its runner up to the rows. An
/// append refused after it ran (not committed) leaves no task behind.
#[test]
fn a_postgres_add_at_the_end_writes_only_its_own_row() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let url = &backend.url;
    let store = open_store(url).unwrap();
    let other = open_store(url).unwrap();
    store.create("p", plan_in_steps(8), false).unwrap();
    // `ann` holds a task (each of her calls renews its lease); `bob` adds.
    let (ann, bob) = (agent("ann"), agent("bob"));
    store
        .apply("p", &op("startNextTask", json!({})), &ann)
        .unwrap();
    assert_eq!(other.load("p").unwrap().to_json(), fresh(url, "p"));
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let mut written_at = |revision: i64| -> (Vec<i64>, i64, String) {
        let positions = client
            .query(
                "SELECT ord / $2 - 1 FROM tasks WHERE plan_id = 'p' AND revision = $1
                 ORDER BY ord",
                &[&revision, &ORDER_GAP],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        let row = client
            .query_one(
                "SELECT reshaped, (SELECT xmin::text FROM plan_steps WHERE plan_id = 'p')
                 FROM plans WHERE plan_id = 'p'",
                &[],
            )
            .unwrap();
        (positions, row.get(0), row.get(1))
    };
    let (_, reshaped, steps) = written_at(2);
    let same = |store: &dyn PlanStore| {
        let whole = store.load("p").unwrap().to_json();
        assert_eq!(fresh(url, "p"), whole);
        assert_eq!(other.load("p").unwrap().to_json(), whole);
    };
    let late = op("addTask", json!({"name": "late", "dependencies": [1, 2]}));
    store.apply("p", &late, &bob).unwrap();
    same(&*store);
    assert_eq!(written_at(3), (vec![8], reshaped, steps.clone()));
    let done = op("completeTask", json!({"task_id": 1, "result": "ok"}));
    store.apply("p", &done, &ann).unwrap();
    let later = op("addTask", json!({"name": "later", "dependencies": [9]}));
    other.apply("p", &later, &bob).unwrap();
    same(&*other);
    assert_eq!(written_at(5), (vec![9], reshaped, steps.clone()));
    let error = store
        .transact("p", "addTask", &mut |runner| {
            runner.apply(&late)?;
            Err(OpError::new(ErrorCode::InvalidArgument, "not after all"))
        })
        .unwrap_err();
    assert_eq!(error.message, "not after all");
    same(&*store);
    let middle = op("addTask", json!({"name": "middle", "after_task_id": 2}));
    store.apply("p", &middle, &bob).unwrap();
    same(&*store);
    // The new task's row (its key between those of tasks 2 and 3) and
    // those of the tasks that waited for 2 (5, and 9, `late`), not the
    // rows after it; the list was not replaced.
    let (positions, moved, _) = written_at(6);
    assert_eq!((positions, moved), (vec![1, 4, 8], reshaped));
    let doc = before_doc(&fresh(url, "p"));
    let names: Vec<_> = doc.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names[2..4], ["middle", "task 3"]);
    assert_eq!(names[9..], ["late", "later"]);
}
