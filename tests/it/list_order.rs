//! Changes of the task list on the database stores (#32): an insertion
//! after a task, a removal, an add at the end and a reset give, on SQLite
//! and on PostgreSQL (through two handles, one catching up from the rows
//! the other wrote), the document the JSON-file store gives, byte for byte
//! but for the clock; and at 10,000 tasks an insertion in the middle and a
//! removal write a few rows (the task, the tasks rewired, the keys gone),
//! not every row after them. Skipped, saying so, where PostgreSQL is not
//! installed.

use planc::document::{Meta, PlanDocument, TaskDoc};
use planc::runner::{open_store, Caller, Op, PlanStore, ORDER_GAP};
use serde_json::{json, Value};

use crate::store_support::Backend;

/// `n` tasks, each after the one before it, the first `stepped` of them in
/// two steps.
fn chain(n: u32, stepped: u32) -> PlanDocument {
    let tasks = (1..=n)
        .map(|id| {
            let deps = if id > 1 { vec![id - 1] } else { Vec::new() };
            let mut task = TaskDoc::pending(id, format!("task {id}"), deps);
            if id <= stepped {
                task.step = Some(format!("s{}", id % 2));
            }
            task
        })
        .collect();
    let mut doc = PlanDocument::new(Meta::new("p", "order"), tasks);
    if stepped > 0 {
        doc.steps = serde_json::from_value(json!([
            {"id": "s0", "name": "Even", "tasks": (1..=stepped).filter(|i| i % 2 == 0).collect::<Vec<_>>()},
            {"id": "s1", "name": "Odd", "tasks": (1..=stepped).filter(|i| i % 2 == 1).collect::<Vec<_>>()},
        ]))
        .unwrap();
    }
    doc
}

fn op(name: &str, args: Value) -> Op {
    Op::from_call(name, args).unwrap()
}

/// A pseudo-random number below `n` (the same sequence every run).
fn roller(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n.max(1)
    }
}

/// A change of the list (or around it) on `doc`: insertions after a task
/// (with the default dependency or given ones, which may close a cycle
/// and be refused), removals, adds at the end, starts and completions, a
/// reset now and then.
fn list_op(roll: &mut impl FnMut(u64) -> u64, doc: &PlanDocument, step: usize) -> Op {
    let pick = |roll: &mut dyn FnMut(u64) -> u64| {
        doc.tasks
            .get(roll(doc.tasks.len() as u64) as usize)
            .map_or(1, |t| t.id)
    };
    let (id, other) = (pick(roll), pick(roll));
    match roll(12) {
        0..=2 => op(
            "addTask",
            json!({"name": format!("after {step}"), "after_task_id": id}),
        ),
        3 => op(
            "addTask",
            json!({"name": format!("given {step}"), "after_task_id": id, "dependencies": [other]}),
        ),
        4..=6 => op("removeTask", json!({"task_id": id})),
        7 => op(
            "addTask",
            json!({"name": format!("end {step}"), "dependencies": [id]}),
        ),
        8 => op("startNextTask", json!({})),
        9 | 10 => op("completeTask", json!({"task_id": id, "result": "ok"})),
        _ if step.is_multiple_of(5) => op("resetPlan", json!({})),
        _ => op("skipTask", json!({"task_id": id})),
    }
}

/// The document's text without what the clock wrote (`created_at`,
/// `updated_at`): what two stores given the same changes agree on.
fn timeless(text: &str) -> String {
    let mut doc: Value = serde_json::from_str(text).unwrap();
    let meta = doc["meta"].as_object_mut().unwrap();
    meta.remove("created_at");
    meta.remove("updated_at");
    doc.to_string()
}

/// The plan as `store` exports it.
fn export(store: &dyn PlanStore) -> String {
    let mut out = Vec::new();
    store.export_json("p", &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Random changes of the list, the same on the JSON-file store, SQLite and
/// PostgreSQL (changes made through either of two handles in turn, the
/// other catching up from the rows): after each, every store exports the
/// JSON file's document (but for the clock), and the answers agree; at the
/// end a fresh handle reads the same bytes as the kept ones.
#[test]
fn list_changes_export_on_every_store_as_on_a_json_file() {
    let json_file = Backend::json_file();
    let sqlite = Backend::sqlite();
    let postgres = Backend::postgres();
    let reference = open_store(&json_file.url).unwrap();
    let mut stores: Vec<std::sync::Arc<dyn PlanStore>> = vec![open_store(&sqlite.url).unwrap()];
    if let Some(backend) = &postgres {
        stores.push(open_store(&backend.url).unwrap());
        stores.push(open_store(&backend.url).unwrap());
    }
    let doc = chain(16, 10);
    reference.create("p", doc.clone(), true).unwrap();
    stores[0].create("p", doc.clone(), false).unwrap();
    if stores.len() > 1 {
        stores[1].create("p", doc, false).unwrap();
    }
    let mut roll = roller(32);
    let (mut inserted, mut removed) = (0, 0);
    for step in 0..40 {
        let op = list_op(&mut roll, &reference.load("p").unwrap(), step);
        let expected = reference.apply("p", &op, &Caller::default());
        if expected.is_ok() {
            match op.name() {
                "addTask" => inserted += 1,
                "removeTask" => removed += 1,
                _ => {}
            }
        }
        let want = timeless(&export(&*reference));
        // SQLite, and the PostgreSQL handle whose turn it is; the other
        // catches up when it exports.
        for n in [0, 1 + step % 2] {
            let Some(store) = stores.get(n) else {
                continue;
            };
            let got = store.apply("p", &op, &Caller::default());
            assert_eq!(
                got.as_ref().map(|a| a.data.to_json()).map_err(|e| e.code),
                expected
                    .as_ref()
                    .map(|a| a.data.to_json())
                    .map_err(|e| e.code),
                "step {step}: {op:?} on store {n}"
            );
        }
        for (n, store) in stores.iter().enumerate() {
            assert_eq!(
                timeless(&export(&**store)),
                want,
                "step {step}: {op:?}, store {n}"
            );
        }
    }
    assert!(
        inserted > 8 && removed > 4,
        "{inserted} adds, {removed} removals"
    );
    let urls = [Some(&sqlite), postgres.as_ref()];
    for (backend, store) in urls.into_iter().flatten().zip(&stores) {
        assert_eq!(
            export(&*open_store(&backend.url).unwrap()),
            export(&**store)
        );
    }
}

/// On SQLite at 10,000 tasks (a chain): an insertion after a middle task
/// writes two task rows (the new task and the one that waited for the task
/// before it) and a removal one (the task that waited for it) and deletes
/// one — counted by triggers on `tasks` — and neither writes the steps;
/// the plan then reads back as the store holds it.
#[test]
fn a_middle_insertion_and_a_removal_write_a_few_sqlite_rows_at_10000_tasks() {
    let backend = Backend::sqlite();
    let store = open_store(&backend.url).unwrap();
    store.create("p", chain(10_000, 0), false).unwrap();
    let path = backend.url.strip_prefix("sqlite:").unwrap();
    let counter = rusqlite::Connection::open(path).unwrap();
    counter
        .execute_batch(
            "CREATE TABLE written (n INTEGER NOT NULL, gone INTEGER NOT NULL, steps INTEGER NOT NULL);
             INSERT INTO written VALUES (0, 0, 0);
             CREATE TRIGGER updated AFTER UPDATE ON tasks BEGIN UPDATE written SET n = n + 1; END;
             CREATE TRIGGER inserted AFTER INSERT ON tasks BEGIN UPDATE written SET n = n + 1; END;
             CREATE TRIGGER deleted AFTER DELETE ON tasks BEGIN UPDATE written SET gone = gone + 1; END;
             CREATE TRIGGER stepped AFTER INSERT ON plan_steps BEGIN UPDATE written SET steps = steps + 1; END;",
        )
        .unwrap();
    let written = || -> (i64, i64, i64) {
        let n = counter
            .query_row("SELECT n, gone, steps FROM written", [], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .unwrap();
        counter
            .execute("UPDATE written SET n = 0, gone = 0, steps = 0", [])
            .unwrap();
        n
    };
    let apply = |name: &str, args: Value| {
        store
            .apply("p", &op(name, args), &Caller::default())
            .unwrap();
    };
    apply("startNextTask", json!({}));
    written();
    apply("addTask", json!({"name": "middle", "after_task_id": 5000}));
    assert_eq!(written(), (2, 0, 0), "an insertion after task 5000");
    apply("removeTask", json!({"task_id": 7000}));
    assert_eq!(written(), (1, 1, 0), "a removal of task 7000");
    let keys: Vec<i64> = counter
        .prepare("SELECT ord FROM tasks WHERE plan_id = 'p' AND ord BETWEEN ?1 AND ?2 ORDER BY ord")
        .unwrap()
        .query_map([5000 * ORDER_GAP, 5001 * ORDER_GAP], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        keys,
        [
            5000 * ORDER_GAP,
            5000 * ORDER_GAP + ORDER_GAP / 2,
            5001 * ORDER_GAP
        ]
    );
    let doc = store.load("p").unwrap();
    assert_eq!(doc.tasks.len(), 10_000);
    assert_eq!(
        (doc.tasks[5000].id, doc.tasks[5000].name.as_str()),
        (10_001, "middle")
    );
    assert_eq!(doc.tasks[5001].dependencies, [10_001]);
    assert_eq!(export(&*open_store(&backend.url).unwrap()), export(&*store));
}

/// On PostgreSQL at 10,000 tasks: an insertion after a middle task writes
/// two task rows and a removal one, leaving its key in `tasks_gone` (each
/// row keeps the revision that wrote it), and `reshaped` stays; another
/// handle catches up from those rows and exports what the writer does.
#[test]
fn a_middle_insertion_and_a_removal_write_a_few_postgres_rows_at_10000_tasks() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let url = &backend.url;
    let (store, other) = (open_store(url).unwrap(), open_store(url).unwrap());
    store.create("p", chain(10_000, 0), false).unwrap();
    let apply = |name: &str, args: Value| {
        store
            .apply("p", &op(name, args), &Caller::default())
            .unwrap();
    };
    apply("startNextTask", json!({}));
    other.load("p").unwrap();
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let mut written_at = |revision: i64| -> (i64, i64, i64) {
        let row = client
            .query_one(
                "SELECT (SELECT count(*) FROM tasks WHERE plan_id = 'p' AND revision = $1),
                        (SELECT count(*) FROM tasks_gone WHERE plan_id = 'p' AND revision = $1),
                        (SELECT reshaped FROM plans WHERE plan_id = 'p')",
                &[&revision],
            )
            .unwrap();
        (row.get(0), row.get(1), row.get(2))
    };
    apply("addTask", json!({"name": "middle", "after_task_id": 5000}));
    assert_eq!(written_at(3), (2, 0, 1), "an insertion after task 5000");
    apply("removeTask", json!({"task_id": 7000}));
    assert_eq!(written_at(4), (1, 1, 1), "a removal of task 7000");
    other
        .apply(
            "p",
            &op("removeTask", json!({"task_id": 10_001})),
            &Caller::default(),
        )
        .unwrap();
    assert_eq!(export(&*store), export(&*other));
    let doc = store.load("p").unwrap();
    assert_eq!(doc.tasks.len(), 9_999);
    assert_eq!(doc.tasks[5000].dependencies, [5000]);
}
