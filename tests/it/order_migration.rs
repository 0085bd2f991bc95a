//! Stores written by planc at commit 56c4736 (task rows keyed by their
//! position: SQLite schema 4, PostgreSQL schema 6;
//! `tests/store_support/stores_56c4736`, each plan changed by insertions
//! after a task, removals and adds at the end) are carried forward when
//! opened (task rows keyed by order keys: SQLite 5, PostgreSQL 7): each
//! plan exports byte for byte what that planc's `GET /api/plans/{id}`
//! gave, the events keep their feed positions, and insertions and removals
//! go on from there as the runner makes them on the exported document.
//! PostgreSQL's part is skipped, saying so, where it is not installed.

use planc::document::PlanDocument;
use planc::runner::{open_store, Caller, Op, PlanStore, Runner};
use serde_json::{json, Value};

use crate::store_support::Backend;

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/store_support/stores_56c4736"
);

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).unwrap()
}

fn export(store: &dyn PlanStore, plan_id: &str) -> String {
    let mut out = Vec::new();
    store.export_json(plan_id, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The document's text without `updated_at` (the clock's).
fn timeless(text: &str) -> String {
    let mut doc: Value = serde_json::from_str(text).unwrap();
    doc["meta"].as_object_mut().unwrap().remove("updated_at");
    doc.to_string()
}

/// What `kind`'s store (opened at `url`, with every event's (plan, seq,
/// position) `written` before it was opened) must show: the exports as
/// written, the feed as it was, and changes of the lists made as the runner
/// makes them on the exported documents (a fresh handle reading the same).
fn carried_forward(kind: &str, url: &str, written: &[(String, u64, u64)]) {
    let store = open_store(url).unwrap();
    for plan_id in ["jd", "plain"] {
        let want = read(&format!("{kind}.{plan_id}.export.json"));
        assert_eq!(export(&*store, plan_id), want, "{kind} {plan_id}");
        assert_eq!(export(&*open_store(url).unwrap(), plan_id), want);
    }
    let feed: Vec<(String, u64, u64)> = store
        .feed(0, 100)
        .unwrap()
        .iter()
        .map(|e| (e.plan_id.clone(), e.seq, e.position))
        .collect();
    assert_eq!(feed, written, "{kind}: the feed as it was");
    let changes = [
        (
            "jd",
            "addTask",
            json!({"name": "Check stock", "after_task_id": 7}),
        ),
        ("jd", "removeTask", json!({"task_id": 6})),
        ("jd", "addTask", json!({"name": "Pay", "after_task_id": 5})),
        ("plain", "removeTask", json!({"task_id": 8})),
        (
            "plain",
            "addTask",
            json!({"name": "Bisect", "after_task_id": 1}),
        ),
        ("plain", "addTask", json!({"name": "Ship"})),
    ];
    let mut runners: Vec<(&str, Runner)> = ["jd", "plain"]
        .into_iter()
        .map(|id| {
            let doc: PlanDocument =
                serde_json::from_str(&read(&format!("{kind}.{id}.export.json"))).unwrap();
            (id, Runner::new(doc).unwrap())
        })
        .collect();
    for (plan_id, name, args) in changes {
        let op = Op::from_call(name, args).unwrap();
        store.apply(plan_id, &op, &Caller::default()).unwrap();
        let runner = &mut runners.iter_mut().find(|(id, _)| *id == plan_id).unwrap().1;
        runner.apply(&op).unwrap();
        let want = timeless(&runner.document().to_json());
        assert_eq!(timeless(&export(&*store, plan_id)), want, "{kind}: {name}");
        assert_eq!(timeless(&export(&*open_store(url).unwrap(), plan_id)), want);
    }
    let events = store.events("jd", 0, 100).unwrap();
    let old = written.iter().filter(|e| e.0 == "jd").count();
    assert_eq!(events.len(), old + 3);
    assert!(events[old].position > written.iter().map(|e| e.2).max().unwrap());
}

/// The SQLite store (schema 4) is carried forward (schema 5).
#[test]
fn a_sqlite_store_written_at_56c4736_is_carried_forward() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&read("sqlite.sql")).unwrap();
    let written: Vec<(String, u64, u64)> = conn
        .prepare("SELECT plan_id, seq, position FROM events ORDER BY position")
        .unwrap()
        .query_map([], |row| {
            let (seq, position): (i64, i64) = (row.get(1)?, row.get(2)?);
            Ok((row.get(0)?, seq as u64, position as u64))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(written.len(), 12);
    let url = format!("sqlite:{}", path.display());
    carried_forward("sqlite", &url, &written);
    let version: i64 = conn
        .query_row("SELECT version FROM schema_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, 5);
}

/// The PostgreSQL store (schema 6) is carried forward (schema 7).
#[test]
fn a_postgres_store_written_at_56c4736_is_carried_forward() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let url = &backend.url;
    // The dump sets its session's search path: a client of its own.
    ::postgres::Client::connect(url, ::postgres::NoTls)
        .unwrap()
        .batch_execute(&read("postgres.sql"))
        .unwrap();
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let written: Vec<(String, u64, u64)> = client
        .query("SELECT plan_id, seq, pos FROM events ORDER BY pos", &[])
        .unwrap()
        .iter()
        .map(|row| {
            let (plan_id, seq, pos): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
            (plan_id, seq as u64, pos as u64)
        })
        .collect();
    assert_eq!(written.len(), 12);
    // Transaction ids past the dump's (its cluster's), as on the cluster
    // that wrote it: new events are fed after the old ones. The feed shows
    // events below the oldest transaction still running in the whole
    // cluster (`pg_snapshot_xmin`), which other tests share: burn ids until
    // that is past the dump's too (a transaction of another test that began
    // before held it back, and the feed read empty).
    let last = written.last().unwrap().2 as i64 / 1024;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while client
        .query_one(
            "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
            &[],
        )
        .unwrap()
        .get::<_, i64>(0)
        <= last
    {
        assert!(
            std::time::Instant::now() < deadline,
            "a transaction of the cluster stayed open for a minute"
        );
        client
            .query_one("SELECT pg_current_xact_id()", &[])
            .unwrap();
    }
    carried_forward("postgres", url, &written);
    let version: i32 = client
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 7);
}
