//! The paged reads of `planc serve` over HTTP: `GET /api/plans/{id}/tasks`
//! (a page of tasks in plan order, filtered, with a cursor) and
//! `GET /api/plans/{id}/summary` (where the plan stands, without its
//! tasks); `GET /api/plans/{id}` stays the whole document.

#![cfg(unix)]

use serde_json::{json, Value};

use crate::serve_support::{store_url, Server};

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

/// A plan of `n` tasks listed in id order: odd ids in step `odd`, even ids
/// in step `even`, every tenth outside both; every 5th completed.
fn plan(n: u32) -> Value {
    let step = |i: u32| match i {
        _ if i.is_multiple_of(10) => Value::Null,
        _ if i % 2 == 1 => json!("odd"),
        _ => json!("even"),
    };
    let tasks: Vec<Value> = (1..=n)
        .map(|i| {
            let status = if i.is_multiple_of(5) { "completed" } else { "pending" };
            json!({"id": i, "name": format!("Task {i}"), "status": status, "dependencies": [], "step": step(i)})
        })
        .collect();
    let members = |odd: bool| -> Vec<u32> {
        (1..=n)
            .filter(|i| !i.is_multiple_of(10) && (i % 2 == 1) == odd)
            .collect()
    };
    json!({"planc": 1, "meta": {"id": "p", "goal": "pages"},
        "steps": [{"id": "odd", "name": "Odd ones", "tasks": members(true)},
                  {"id": "even", "name": "Even ones", "tasks": members(false)}],
        "tasks": tasks})
}

/// The plan order of [`plan`]: step `odd` (where task 1 stands), step
/// `even` (task 2), then the tasks outside steps (task 10).
fn plan_order(n: u32) -> Vec<u64> {
    let odd = (1..=n).filter(|i| !i.is_multiple_of(10) && i % 2 == 1);
    let even = (1..=n).filter(|i| !i.is_multiple_of(10) && i % 2 == 0);
    let loose = (1..=n).filter(|i| i.is_multiple_of(10));
    odd.chain(even).chain(loose).map(u64::from).collect()
}

/// A server with plan `p` of `n` tasks (and the directory of its store).
fn started(n: u32) -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let created = server.post("/api/plans?id=p", &plan(n).to_string());
    assert_eq!(created.status, 201, "{}", created.text());
    (server, dir)
}

/// `data` of a successful GET.
fn data(server: &Server, path: &str) -> Value {
    let answer = server.get(path);
    assert_eq!(answer.status, 200, "GET {path}: {}", answer.text());
    answer.json()["data"].clone()
}

fn ids(page: &Value) -> Vec<u64> {
    page["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_u64().expect("an id"))
        .collect()
}

#[test]
fn paging_through_a_plan_returns_every_task_once_in_plan_order() {
    let (server, _dir) = started(250);
    let mut seen = Vec::new();
    let mut path = "/api/plans/p/tasks?limit=37".to_owned();
    loop {
        let page = data(&server, &path);
        assert_eq!(
            (&page["total"], &page["matched"], &page["limit"]),
            (&json!(250), &json!(250), &json!(37))
        );
        assert_eq!(page["offset"], json!(seen.len()), "{path}");
        seen.extend(ids(&page));
        match page["next"].as_u64() {
            Some(next) => {
                assert_eq!(Some(&next), seen.last());
                path = format!("/api/plans/p/tasks?limit=37&after={next}");
            }
            None => break,
        }
    }
    assert_eq!(seen, plan_order(250));
    // A task is the document's task, every field.
    let whole = data(&server, "/api/plans/p");
    let first = data(&server, "/api/plans/p/tasks?limit=1");
    assert_eq!(first["tasks"][0], whole["tasks"][0]);
    assert_eq!(first["revision"], 1);
    // The default page is 100; past the last task, an empty page.
    assert_eq!(ids(&data(&server, "/api/plans/p/tasks")).len(), 100);
    let last = *seen.last().expect("a task");
    let past = data(&server, &format!("/api/plans/p/tasks?after={last}"));
    assert_eq!(
        (
            past["tasks"].clone(),
            past["next"].clone(),
            past["offset"].clone()
        ),
        (json!([]), Value::Null, json!(250))
    );
    // By offset, with each group's counts.
    let page = data(&server, "/api/plans/p/tasks?offset=248&limit=5&groups=true");
    assert_eq!(ids(&page), [240, 250]);
    assert_eq!(page["next"], Value::Null);
    assert_eq!(
        page["groups"],
        json!([
            {"step": "odd", "name": "Odd ones", "total": 125, "done": 25, "matched": 125},
            {"step": "even", "name": "Even ones", "total": 100, "done": 0, "matched": 100},
            {"step": null, "name": "", "total": 25, "done": 25, "matched": 25}
        ])
    );
    // limit=0: the counts alone.
    let counts = data(&server, "/api/plans/p/tasks?limit=0&status=completed");
    assert_eq!((ids(&counts).len(), &counts["matched"]), (0, &json!(50)));
}

#[test]
fn each_filter_narrows_the_pages() {
    let (server, _dir) = started(30);
    for agent in ["alice", "alice", "bob"] {
        let answer = server.request(
            "POST",
            "/api/plans/p/ops/startNextTask",
            &[("X-Planc-Agent", agent)],
            b"{}",
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
    }
    // Ready work is taken in plan order: 1 and 2 by alice, 3 by bob.
    let cases: [(&str, &[u64]); 13] = [
        ("status=completed", &[5, 15, 25, 10, 20, 30]),
        ("status=in_progress,completed&step=odd", &[1, 3, 5, 15, 25]),
        ("status=in_progress", &[1, 3, 2]),
        ("holder=alice", &[1, 2]),
        ("holder=bob", &[3]),
        ("held=true", &[1, 3, 2]),
        (
            "held=false&step=odd&status=in_progress,pending",
            &[7, 9, 11, 13, 17, 19, 21, 23, 27, 29],
        ),
        ("holder=carol", &[]),
        (
            "step=even&status=pending",
            &[4, 6, 8, 12, 14, 16, 18, 22, 24, 26, 28],
        ),
        ("step=-", &[10, 20, 30]),
        ("step=none_such", &[]),
        ("q=TASK%202", &[21, 23, 25, 27, 29, 2, 22, 24, 26, 28, 20]),
        ("q=%231", &[1, 11, 13, 15, 17, 19, 12, 14, 16, 18, 10]),
    ];
    for (query, wanted) in cases {
        let page = data(&server, &format!("/api/plans/p/tasks?{query}"));
        assert_eq!(ids(&page), wanted, "{query}");
        assert_eq!(page["matched"], json!(wanted.len()), "{query}");
    }
    // A holder's name is found by the text filter too; one task by id.
    assert_eq!(ids(&data(&server, "/api/plans/p/tasks?q=bob")), [3]);
    let one = data(&server, "/api/plans/p/tasks?id=2");
    assert_eq!(ids(&one), [2]);
    assert_eq!(one["tasks"][0]["holder"]["agent"], "alice");
    // The cursor of a filtered page: after a task, even one the filter
    // leaves out now.
    let page = data(&server, "/api/plans/p/tasks?status=pending&after=5&limit=2");
    assert_eq!((ids(&page), &page["offset"]), (vec![7, 9], &json!(0)));
    assert_eq!(page["next"], 9);
}

#[test]
fn bad_parameters_are_refused_with_the_field() {
    let (server, _dir) = started(5);
    let long = "x".repeat(1025);
    let cases: Vec<(String, &str)> = [
        ("limit=1001", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("offset=1.5", "offset"),
        ("status=done", "status"),
        ("status=pending,", "status"),
        ("after=0", "after"),
        ("after=abc", "after"),
        ("after=6", "after"),
        ("id=0", "id"),
        ("holder=", "holder"),
        ("step=", "step"),
        ("groups=maybe", "groups"),
        ("held=yes", "held"),
        ("limit=1&limit=2", "limit"),
        ("after=1&offset=2", "offset"),
        ("page=2", "page"),
    ]
    .into_iter()
    .map(|(q, f)| (q.to_owned(), f))
    .chain([(format!("q={long}"), "q")])
    .collect();
    for (query, field) in &cases {
        let answer = server.get(&format!("/api/plans/p/tasks?{query}"));
        assert_eq!(
            (answer.status, answer.code()),
            (400, "INVALID_ARGUMENT".to_owned()),
            "{query}: {}",
            answer.text()
        );
        assert_eq!(
            answer.json()["error"]["details"]["field"],
            *field,
            "{query}"
        );
    }
    let answer = server.get("/api/plans/p/tasks?limit=1001");
    assert_eq!(
        answer.json()["error"]["message"],
        "`limit` takes a whole number from 0 to 1000, not `1001`"
    );
    for path in ["/api/plans/nope/tasks", "/api/plans/nope/summary"] {
        let answer = server.get(path);
        assert_eq!(
            (answer.status, answer.code()),
            (404, "PLAN_NOT_FOUND".to_owned())
        );
    }
    let answer = server.get("/api/plans/p/summary?limit=5");
    assert_eq!(
        (answer.status, answer.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
}

#[test]
fn the_whole_document_stays_the_export_and_refuses_paging() {
    let (server, _dir) = started(5);
    let whole = server.get("/api/plans/p");
    assert_eq!(whole.status, 200);
    // Other parameters are ignored as before: the same bytes.
    assert_eq!(server.get("/api/plans/p?pretty=1").body, whole.body);
    for (query, field) in [
        ("limit=2", "limit"),
        ("status=pending", "status"),
        ("after=1", "after"),
    ] {
        let answer = server.get(&format!("/api/plans/p?{query}"));
        assert_eq!(
            (answer.status, answer.code()),
            (400, "INVALID_ARGUMENT".to_owned())
        );
        let error = &answer.json()["error"];
        assert_eq!(error["details"]["field"], field);
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains("GET /api/plans/{id}/tasks")),
            "{error}"
        );
    }
}

#[test]
fn the_summary_follows_changes_without_carrying_tasks() {
    let (server, _dir) = started(30);
    let summary = data(&server, "/api/plans/p/summary");
    assert_eq!(summary.get("tasks"), None);
    assert_eq!(
        summary["counts"],
        json!({"total": 30, "pending": 24, "in_progress": 0, "completed": 6, "failed": 0, "skipped": 0})
    );
    assert_eq!(summary["holders"], json!([]));
    assert_eq!(summary["state"]["revision"], 1);
    assert_eq!(summary["meta"]["goal"], "pages");

    let op = |agent: &str, op: &str, args: Value| {
        let answer = server.request(
            "POST",
            &format!("/api/plans/p/ops/{op}"),
            &[("X-Planc-Agent", agent)],
            args.to_string().as_bytes(),
        );
        assert_eq!(answer.status, 200, "{op}: {}", answer.text());
    };
    op("alice", "startNextTask", json!({}));
    op("alice", "startNextTask", json!({}));
    op("bob", "startNextTask", json!({}));
    op(
        "alice",
        "completeTask",
        json!({"task_id": 1, "result": "ok"}),
    );
    op(
        "bob",
        "failTask",
        json!({"task_id": 3, "error_message": "no", "should_retry": false}),
    );
    let summary = data(&server, "/api/plans/p/summary");
    assert_eq!(
        summary["counts"],
        json!({"total": 30, "pending": 21, "in_progress": 1, "completed": 7, "failed": 1, "skipped": 0})
    );
    assert_eq!(summary["done"], 7);
    assert_eq!(summary["holders"], json!([{"agent": "alice", "tasks": 1}]));
    assert_eq!(summary["state"]["revision"], 6);
    assert_eq!(
        summary["steps"],
        json!([
            {"step": "odd", "name": "Odd ones", "total": 15, "done": 4},
            {"step": "even", "name": "Even ones", "total": 12, "done": 0},
            {"step": null, "name": "", "total": 3, "done": 3}
        ])
    );
    // Started over with another plan: the summary is the new plan's.
    let created = server.post("/api/plans?id=p&force=true", &plan(10).to_string());
    assert_eq!(created.status, 201, "{}", created.text());
    let summary = data(&server, "/api/plans/p/summary");
    assert_eq!(
        (&summary["counts"]["total"], &summary["state"]["revision"]),
        (&json!(10), &json!(1))
    );
    assert_eq!(data(&server, "/api/plans/p/tasks")["matched"], 10);
    // Deleted: gone.
    assert_eq!(
        server.request("DELETE", "/api/plans/p", &[], b"").status,
        200
    );
    assert_eq!(server.get("/api/plans/p/summary").status, 404);
}
