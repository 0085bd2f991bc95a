//! `planc serve`, the real binary on a free port: the JSON API, the SSE
//! streams (resumed with `Last-Event-ID`), health and metrics, the token,
//! the Host and Origin checks, the body and rate limits, and a graceful
//! shutdown that keeps every acknowledged change.

#![cfg(unix)]

use std::time::Duration;

use crate::serve_support::{
    repo, request, request_chunked, store_url, streams_follow_a_plan_started_over, EventStream,
    McpSession, Server,
};
use serde_json::{json, Value};

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

#[test]
fn the_json_api_creates_lists_shows_changes_and_deletes_plans() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);

    let health = server.get("/health");
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["data"]["status"], "ok");
    assert_eq!(health.json()["data"]["plans"], 0);

    // From .plan source, id given.
    let created = server.create("jd", "examples/jd_keyboard.plan");
    assert_eq!(
        created.json(),
        json!({"success": true, "data": {"plan_id": "jd", "revision": 1, "total_tasks": 5, "message": "Created plan jd with 5 task(s)"}})
    );
    // From a JSON plan document, id derived from it.
    let doc = server.get("/api/plans/jd").json()["data"].clone();
    let mut other = doc.clone();
    other["meta"]["id"] = json!("copy");
    let created = server.post("/api/plans", &other.to_string());
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.json()["data"]["plan_id"], "copy");
    // Again: refused.
    let again = server.post("/api/plans", &other.to_string());
    assert_eq!(
        (again.status, again.code()),
        (409, "PLAN_EXISTS".to_owned())
    );

    let list = server.get("/api/plans").json();
    let ids: Vec<&str> = list["data"]["plans"]
        .as_array()
        .expect("plans")
        .iter()
        .map(|p| p["plan_id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["copy", "jd"]);
    assert_eq!(list["data"]["plans"][1]["counts"]["total"], 5);

    assert_eq!(doc["meta"]["id"], "jd");
    assert_eq!(doc["tasks"][0]["name"], "Navigate to jd.com homepage");
    assert_eq!(doc["tasks"][0]["status"], "pending");

    // An operation, as an agent (header), then with the agent argument.
    let started = server.request(
        "POST",
        "/api/plans/jd/ops/startNextTask",
        &[("X-Planc-Agent", "alice")],
        b"{\"lease\": \"5m\"}",
    );
    assert_eq!(started.status, 200, "{}", started.text());
    assert_eq!(started.json()["data"]["task"]["id"], 1);
    let doc = server.get("/api/plans/jd").json()["data"].clone();
    assert_eq!(doc["tasks"][0]["status"], "in_progress");
    assert_eq!(doc["tasks"][0]["holder"]["agent"], "alice");
    assert_eq!(doc["tasks"][0]["holder"]["lease_seconds"], 300);
    let done = server.op(
        "jd",
        "completeTask",
        json!({"agent": "alice", "result": "opened <b>jd</b>"}),
    );
    assert_eq!(done.json()["data"]["message"], "Task 1 completed");
    let doc = server.get("/api/plans/jd").json()["data"].clone();
    assert_eq!(doc["tasks"][0]["result"], "opened <b>jd</b>");
    assert_eq!(doc["state"]["revision"], 3);

    // Errors, in the runner's envelope.
    let missing = server.get("/api/plans/nope");
    assert_eq!(
        (missing.status, missing.code()),
        (404, "PLAN_NOT_FOUND".to_owned())
    );
    let no_task = server.op("jd", "startTask", json!({"task_id": 99}));
    assert_eq!(
        (no_task.status, no_task.code()),
        (404, "TASK_NOT_FOUND".to_owned())
    );
    let bad_op = server.op("jd", "launchRockets", json!({}));
    assert_eq!(
        (bad_op.status, bad_op.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let bad_args = server.op("jd", "completeTask", json!({"reslt": "x"}));
    assert_eq!(
        (bad_args.status, bad_args.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let broken = server.post(
        "/api/plans?id=broken",
        "plan \"x\" {\n  task a \"A\" after nowhere\n}\n",
    );
    assert_eq!(broken.status, 400, "{}", broken.text());
    assert_eq!(broken.code(), "INVALID_ARGUMENT");
    let diagnostics = &broken.json()["error"]["details"]["diagnostics"];
    assert!(
        diagnostics.as_array().is_some_and(|d| !d.is_empty()),
        "{}",
        broken.text()
    );
    let importing = server.post("/api/plans?id=imp", "import \"../secret.plan\"\n");
    assert_eq!(importing.status, 400, "{}", importing.text());
    let bad_id = server.post("/api/plans?id=..%2Fx", &other.to_string());
    assert_eq!(
        (bad_id.status, bad_id.code()),
        (400, "INVALID_PLAN_ID".to_owned())
    );
    let nowhere = server.get("/api/nothing");
    assert_eq!(
        (nowhere.status, nowhere.code()),
        (404, "NOT_FOUND".to_owned())
    );

    let deleted = server.request("DELETE", "/api/plans/copy", &[], b"");
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    assert_eq!(deleted.json()["data"]["deleted"], true);
    let gone = server.request("DELETE", "/api/plans/copy", &[], b"");
    assert_eq!(
        (gone.status, gone.code()),
        (404, "PLAN_NOT_FOUND".to_owned())
    );
    assert_eq!(server.get("/health").json()["data"]["plans"], 1);
}

/// A client that resumes from an id this server has not reached yet (it
/// came from another server, further on) gets nothing at or below that id
/// when the changes arrive, on a plan's stream and on every plan's.
/// `POST /api/plans/{id}/ops/…`: a change's answer carries the plan's
/// revision after it beside `data`; a query's and a refusal's carry none.
#[test]
fn an_op_that_changed_the_plan_answers_with_its_revision() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    server.create("jd", "examples/jd_keyboard.plan");
    let keys = |answer: &Value| {
        answer
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    let started = server
        .op("jd", "startNextTask", json!({"agent": "alice"}))
        .json();
    assert_eq!(keys(&started), ["success", "data", "revision"]);
    assert_eq!(started["revision"], 2);
    assert_eq!(started["data"]["task"]["id"], 1);
    let status = server.op("jd", "getPlanStatus", json!({})).json();
    assert_eq!(keys(&status), ["success", "data"]);
    let done = server
        .op("jd", "completeTask", json!({"agent": "alice"}))
        .json();
    assert_eq!(
        (done["success"].clone(), done["revision"].clone()),
        (json!(true), json!(3))
    );
    let refused = server
        .op("jd", "completeTask", json!({"task_id": 1}))
        .json();
    assert_eq!(keys(&refused), ["success", "error"]);
    let doc = server.get("/api/plans/jd").json();
    assert_eq!(doc["data"]["state"]["revision"], 3);
}

#[test]
fn a_stream_resumed_ahead_of_the_server_sends_nothing_up_to_its_id() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    server.create("jd", "examples/jd_keyboard.plan");
    let mut plan = EventStream::open(
        &server.addr,
        "/api/plans/jd/events",
        &[("Last-Event-ID", "3")],
    );
    let mut every = EventStream::open(&server.addr, "/api/events", &[("Last-Event-ID", "3")]);
    std::thread::sleep(Duration::from_millis(300));
    server.op("jd", "startNextTask", json!({"agent": "a"}));
    server.op(
        "jd",
        "completeTask",
        json!({"agent": "a", "result": "done"}),
    );
    server.op("jd", "pausePlan", json!({}));
    let (message, data) = plan.next_json();
    assert_eq!(
        (
            message.id.as_deref(),
            data["seq"].as_u64(),
            data["op"].as_str()
        ),
        (Some("4"), Some(4), Some("pausePlan")),
        "{data}"
    );
    // SQLite's positions: the creation is 1, the changes 2, 3 and 4.
    let (message, data) = every.next_json();
    assert_eq!(
        (message.id.as_deref(), data["seq"].as_u64()),
        (Some("4"), Some(4)),
        "{data}"
    );
}

#[test]
fn event_streams_resume_after_last_event_id_and_follow_live_changes() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path()), "--keep-alive", "1"]);
    server.create("jd", "examples/jd_keyboard.plan");
    server.op("jd", "startNextTask", json!({"agent": "a"}));
    server.op(
        "jd",
        "completeTask",
        json!({"agent": "a", "result": "done"}),
    );

    // From the start: created (1), started (2), completed (3).
    let mut all = EventStream::open(&server.addr, "/api/plans/jd/events", &[]);
    assert_eq!(all.status, 200);
    let (first, data) = all.next_json();
    assert_eq!(
        (first.id.as_deref(), first.event.as_deref()),
        (Some("1"), Some("plan"))
    );
    assert_eq!(
        (&data["type"], &data["kind"], &data["status"]),
        (&json!("plan"), &json!("created"), &json!("created"))
    );
    assert_eq!(data["plan_id"], "jd");

    // Resumed after 1: 2 and 3, then what happens next, live.
    let mut resumed = EventStream::open(
        &server.addr,
        "/api/plans/jd/events",
        &[("Last-Event-ID", "1")],
    );
    let (second, data) = resumed.next_json();
    assert_eq!(
        (second.id.as_deref(), second.event.as_deref()),
        (Some("2"), Some("step"))
    );
    assert_eq!(
        (
            &data["type"],
            &data["kind"],
            &data["status"],
            &data["task_id"],
            &data["agent"]
        ),
        (
            &json!("step"),
            &json!("started"),
            &json!("started"),
            &json!(1),
            &json!("a")
        )
    );
    assert_eq!(data["step"]["status"], "running");
    assert_eq!(data["op"], "startNextTask");
    assert_eq!(data["seq"], 2);
    let (third, data) = resumed.next_json();
    assert_eq!(third.id.as_deref(), Some("3"));
    assert_eq!(data["kind"], "completed");
    server.op("jd", "pausePlan", json!({}));
    let (fourth, data) = resumed.next_json();
    assert_eq!(
        (fourth.id.as_deref(), fourth.event.as_deref()),
        (Some("4"), Some("plan"))
    );
    assert_eq!(data["kind"], "paused");
    assert_eq!(data["plan_status"], "paused");

    // The stream of every plan: ids are the store's positions, in order.
    server.create("other", "examples/jd_keyboard.plan");
    let mut feed = EventStream::open(&server.addr, "/api/events", &[]);
    let mut seen = Vec::new();
    let mut positions = Vec::new();
    for _ in 0..5 {
        let (message, data) = feed.next_json();
        positions.push(message.id.expect("an id").parse::<u64>().expect("a number"));
        seen.push((
            data["plan_id"].as_str().unwrap().to_owned(),
            data["seq"].as_u64().unwrap(),
        ));
    }
    assert_eq!(
        seen,
        [
            ("jd".into(), 1),
            ("jd".into(), 2),
            ("jd".into(), 3),
            ("jd".into(), 4),
            ("other".into(), 1)
        ]
    );
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    // Resumed after the third position: the fourth and fifth again.
    let after = positions[2].to_string();
    let mut feed2 = EventStream::open(&server.addr, "/api/events", &[("Last-Event-ID", &after)]);
    let (m, _) = feed2.next_json();
    assert_eq!(m.id, Some(positions[3].to_string()));
    // `after=now`: only what comes next.
    let mut live = EventStream::open(&server.addr, "/api/events?after=now", &[]);
    std::thread::sleep(Duration::from_millis(300));
    server.op("other", "startNextTask", json!({}));
    let (_, data) = live.next_json();
    assert_eq!(
        (data["plan_id"].as_str(), data["seq"].as_u64()),
        (Some("other"), Some(2))
    );
    // Keep-alive comments while idle.
    std::thread::sleep(Duration::from_millis(1500));
    server.op("other", "pausePlan", json!({}));
    let _ = live.next_json();
    assert!(
        live.comments.iter().any(|c| c == "keep-alive"),
        "{:?}",
        live.comments
    );

    let bad = server.request(
        "GET",
        "/api/plans/jd/events",
        &[("Last-Event-ID", "x")],
        b"",
    );
    assert_eq!(
        (bad.status, bad.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let missing = server.get("/api/plans/nope/events");
    assert_eq!(
        (missing.status, missing.code()),
        (404, "PLAN_NOT_FOUND".to_owned())
    );
}

#[test]
fn metrics_count_requests_changes_events_and_errors() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    server.create("jd", "examples/jd_keyboard.plan");
    server.op("jd", "startNextTask", json!({}));
    server.get("/api/plans/nope");
    let mut stream = EventStream::open(&server.addr, "/api/plans/jd/events", &[]);
    stream.next_json();
    stream.next_json();
    let wanted = [
        "planc_http_requests_total{route=\"/api/plans\",status=\"201\"} 1",
        "planc_http_requests_total{route=\"/api/plans/{id}/ops/{op}\",status=\"200\"} 1",
        "planc_http_requests_total{route=\"/api/plans/{id}\",status=\"404\"} 1",
        "planc_errors_total{code=\"PLAN_NOT_FOUND\"} 1",
        "planc_changes_total 2",
        "planc_events_streamed_total 2",
        "planc_sse_streams_open 1",
        "planc_plans 1",
    ];
    // The stream may replay the events from the store before the thread
    // that forwards (and counts) committed changes has seen them: the
    // counts are asked again for a while, never expected to pass.
    let mut text = String::new();
    for _ in 0..100 {
        let metrics = server.get("/metrics");
        assert_eq!(metrics.status, 200);
        assert_eq!(
            metrics.header("content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        text = metrics.text();
        if wanted.iter().all(|w| text.lines().any(|l| l == *w)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for line in wanted {
        assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
    }
}

#[test]
fn a_token_guards_every_endpoint() {
    let dir = tempdir();
    let server = Server::start(&[
        "--store",
        &store_url(dir.path()),
        "--token",
        "s3cret-0123456789",
    ]);
    for path in [
        "/",
        "/health",
        "/metrics",
        "/api/plans",
        "/api/events",
        "/mcp",
    ] {
        let refused = server.get(path);
        assert_eq!(refused.status, 401, "{path}: {}", refused.text());
        assert_eq!(refused.code(), "UNAUTHORIZED");
        assert_eq!(
            refused.header("www-authenticate"),
            Some("Bearer realm=\"planc\"")
        );
    }
    let wrong = server.request(
        "GET",
        "/health",
        &[("Authorization", "Bearer s3cret-012345678")],
        b"",
    );
    assert_eq!(wrong.status, 401);
    let right = server.request(
        "GET",
        "/health",
        &[("Authorization", "Bearer s3cret-0123456789")],
        b"",
    );
    assert_eq!(right.status, 200);
    let page = server.get("/?access_token=s3cret-0123456789");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("<title>planc serve</title>"));
}

#[test]
fn a_public_address_needs_a_token() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_planc"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--store",
            "sqlite::memory:",
        ])
        .env_remove("PLANC_TOKEN")
        .output()
        .expect("planc runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let dir = tempdir();
    let server = Server::start(&[
        "--store",
        &store_url(dir.path()),
        "--allow-origin",
        "https://ok.example",
    ]);
    let rebound = server.request("GET", "/api/plans", &[("Host", "evil.example:7411")], b"");
    assert_eq!(
        (rebound.status, rebound.code()),
        (403, "FORBIDDEN_HOST".to_owned())
    );
    let rebound = server.request("POST", "/mcp", &[("Host", "evil.example")], b"{}");
    assert_eq!(rebound.status, 403);
    let named = server.request("GET", "/health", &[("Host", "localhost:1234")], b"");
    assert_eq!(named.status, 200);
    let cross = server.request(
        "GET",
        "/api/plans",
        &[("Origin", "http://evil.example")],
        b"",
    );
    assert_eq!(
        (cross.status, cross.code()),
        (403, "FORBIDDEN_ORIGIN".to_owned())
    );
    let own = format!("http://{}", server.addr);
    let same = server.request("GET", "/api/plans", &[("Origin", &own)], b"");
    assert_eq!(same.status, 200);
    let allowed = server.request(
        "GET",
        "/api/plans",
        &[("Origin", "https://ok.example")],
        b"",
    );
    assert_eq!(allowed.status, 200);
}

#[test]
fn bodies_past_the_limit_get_413_and_fast_clients_429() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path()), "--max-body", "1000"]);
    let big = vec![b' '; 2000];
    let refused = server.request("POST", "/api/plans?id=big", &[], &big);
    assert_eq!(
        (refused.status, refused.code()),
        (413, "PAYLOAD_TOO_LARGE".to_owned())
    );
    assert_eq!(refused.json()["error"]["details"]["max_body_bytes"], 1000);
    let mcp = server.request(
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        &big,
    );
    assert_eq!(
        (mcp.status, mcp.code()),
        (413, "PAYLOAD_TOO_LARGE".to_owned())
    );
    // Without a Content-Length (chunked) the body is found too large while
    // it is read: the same envelope, from /mcp as from the API.
    let mcp_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    for path in ["/mcp", "/api/plans?id=big"] {
        let chunked = request_chunked(&server.addr, "POST", path, &mcp_headers, &big);
        assert_eq!(
            (chunked.status, chunked.header("content-type")),
            (413, Some("application/json")),
            "{path}: {}",
            chunked.text()
        );
        assert_eq!(chunked.json(), refused.json(), "{path}");
    }
    drop(server);

    let server = Server::start(&["--store", &store_url(dir.path()), "--rate-limit", "2"]);
    assert_eq!(server.get("/health").status, 200);
    assert_eq!(server.get("/api/plans").status, 200);
    let limited = server.get("/health");
    assert_eq!(
        (limited.status, limited.code()),
        (429, "RATE_LIMITED".to_owned())
    );
    assert_eq!(
        limited.json()["error"]["message"],
        "too many requests: this server takes 2 requests per second from one client; retry in 1 s"
    );
    assert_eq!(limited.header("retry-after"), Some("1"));
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(server.get("/health").status, 200);
}

#[test]
fn a_graceful_shutdown_keeps_every_acknowledged_change() {
    let dir = tempdir();
    let store = store_url(dir.path());
    let server = Server::start(&["--store", &store, "--rate-limit", "0"]);
    // A plan of 400 independent tasks.
    let tasks: Vec<Value> = (1..=400)
        .map(|i| json!({"id": i, "name": format!("task {i}"), "status": "pending", "dependencies": []}))
        .collect();
    let plan = json!({"planc": 1, "meta": {"id": "big", "goal": "many changes"}, "tasks": tasks});
    let created = server.post("/api/plans", &plan.to_string());
    assert_eq!(created.status, 201, "{}", created.text());

    let addr = server.addr.clone();
    let workers: Vec<_> = (0..8)
        .map(|n| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                loop {
                    let agent = format!("w{n}");
                    let body = json!({"agent": agent}).to_string();
                    let Ok(started) = std::panic::catch_unwind(|| {
                        request(
                            &addr,
                            "POST",
                            "/api/plans/big/ops/startNextTask",
                            &[],
                            body.as_bytes(),
                        )
                    }) else {
                        break;
                    };
                    if started.status != 200 {
                        break;
                    }
                    let Some(id) = started.json()["data"]["task"]["id"].as_u64() else {
                        break;
                    };
                    let body = json!({"agent": agent, "task_id": id, "result": format!("by {n}")})
                        .to_string();
                    let Ok(done) = std::panic::catch_unwind(|| {
                        request(
                            &addr,
                            "POST",
                            "/api/plans/big/ops/completeTask",
                            &[],
                            body.as_bytes(),
                        )
                    }) else {
                        break;
                    };
                    if done.status != 200 {
                        break;
                    }
                    acknowledged.push((id, format!("by {n}")));
                }
                acknowledged
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    let code = server.terminate();
    assert_eq!(code, Some(0));
    let acknowledged: Vec<(u64, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("a worker"))
        .collect();
    assert!(
        !acknowledged.is_empty(),
        "no change made before the shutdown"
    );

    let server = Server::start(&["--store", &store]);
    let doc = server.get("/api/plans/big").json()["data"].clone();
    for (id, result) in &acknowledged {
        let task = &doc["tasks"][(*id - 1) as usize];
        assert_eq!(
            task["status"], "completed",
            "task {id} was acknowledged: {task}"
        );
        assert_eq!(task["result"], result.as_str());
    }
    let completed = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter(|t| t["status"] == "completed")
        .count();
    assert_eq!(completed, acknowledged.len());
}

#[test]
fn the_web_view_is_one_page_that_sets_text_never_html() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let text = page.text();
    assert!(
        !text.contains("innerHTML"),
        "the page must not parse plan text as HTML"
    );
    assert!(text.contains("textContent"));
    assert_eq!(
        text,
        std::fs::read_to_string(repo("src/serve/page.html")).expect("the page")
    );
}

#[test]
fn streams_follow_a_plan_started_over_in_sqlite() {
    let dir = tempdir();
    let store = format!("sqlite:{}", dir.path().join("plans.db").display());
    // No keep-alive comment: a missing event ends the wait (30 s) and fails.
    let server = Server::start(&["--store", &store, "--keep-alive", "3600"]);
    streams_follow_a_plan_started_over(&server, &server);
}

#[test]
fn streams_follow_a_plan_started_over_in_a_directory() {
    let dir = tempdir();
    let store = format!("dir:{}", dir.path().join("plans").display());
    let server = Server::start(&["--store", &store, "--keep-alive", "3600"]);
    streams_follow_a_plan_started_over(&server, &server);
}

/// The (id, event name, data) of a stream's next `n` messages.
fn take_messages(stream: &mut EventStream, n: usize) -> Vec<(String, String, Value)> {
    (0..n)
        .map(|_| {
            let (message, data) = stream.next_json();
            (
                message.id.unwrap_or_default(),
                message.event.unwrap_or_default(),
                data,
            )
        })
        .collect()
}

#[test]
fn event_streams_carry_seed_004_events_typed_and_resumed_alike() {
    let dir = tempdir();
    let server = Server::start(&["--store", &store_url(dir.path())]);
    let schema = server.get("/api/schema/events.json");
    assert_eq!(schema.status, 200);
    assert_eq!(
        schema.header("content-type"),
        Some("application/schema+json")
    );
    let schema: Value = schema.json();
    let validator = jsonschema::validator_for(&schema).expect("the events schema is a schema");
    let mut live = EventStream::open(&server.addr, "/api/events?after=now", &[]);
    std::thread::sleep(Duration::from_millis(300));

    // Seed 004's agent: the planner, then the executor with its tools.
    let mut mcp = McpSession::open(&server.addr, "/mcp?dialect=plan-act");
    let calls = [
        (
            "create_plan",
            json!({"title": "Search Baidu", "steps": ["Open Baidu", "Summarise"], "language": "en"}),
        ),
        ("start_step", json!({})),
        (
            "log_event",
            json!({"kind": "tool", "data": "{\"name\": \"browser_navigate\", \"args\": {\"url\": \"https://www.baidu.com\"}, \"result\": {\"success\": true}}"}),
        ),
        (
            "log_event",
            json!({"kind": "message", "data": "Baidu is open"}),
        ),
        (
            "log_event",
            json!({"kind": "error", "data": "A captcha was shown"}),
        ),
        ("complete_step", json!({"result": "opened"})),
        ("start_step", json!({})),
        (
            "complete_step",
            json!({"result": "Three results summarised"}),
        ),
    ];
    for (tool, args) in calls {
        let (content, is_error) = mcp.call(tool, args);
        assert!(!is_error, "{tool}: {content}");
    }
    let plans = server.get("/api/plans").json();
    let plan_id = plans["data"]["plans"][0]["plan_id"]
        .as_str()
        .expect("a plan")
        .to_owned();

    let path = format!("/api/plans/{plan_id}/events");
    let mut stream = EventStream::open(&server.addr, &path, &[]);
    let messages = take_messages(&mut stream, 9);
    for (id, name, data) in &messages {
        let errors: Vec<String> = validator.iter_errors(data).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{id} {data}: {errors:?}");
        assert_eq!(
            data["type"],
            json!(name),
            "{id}: the event name is the type"
        );
        assert_eq!(data["plan_id"], json!(plan_id));
    }
    let heads: Vec<(&str, &str, &str, &str)> = messages
        .iter()
        .map(|(id, name, data)| {
            (
                id.as_str(),
                name.as_str(),
                data["kind"].as_str().unwrap_or(""),
                data["op"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        heads,
        [
            ("1", "plan", "created", "init"),
            ("2", "step", "started", "startNextTask"),
            ("3", "tool", "tool", "logEvent"),
            ("4", "message", "message", "logEvent"),
            ("5", "error", "error", "logEvent"),
            ("6", "step", "completed", "completeTask"),
            ("7", "step", "started", "startNextTask"),
            ("8.1", "step", "completed", "completeTask"),
            ("8", "plan", "plan_completed", "completeTask"),
        ]
    );
    let running = json!({"description": "Open Baidu", "status": "running", "result": null,
        "success": null, "error": null, "attachments": []});
    let data = |n: usize| messages[n].2.clone();
    let at = |n: usize| data(n)["at"].clone();
    let position = |n: usize| data(n)["position"].clone();
    assert_eq!(
        data(0),
        json!({"type": "plan", "plan_id": plan_id, "seq": 1, "position": position(0), "at": at(0),
            "op": "init", "plan_status": "idle", "index": 1, "count": 1, "kind": "created",
            "task_id": null, "agent": null, "summary": data(0)["summary"], "status": "created",
            "plan": {"id": plan_id, "title": "Search Baidu", "goal": "Search Baidu", "language": "en",
                "status": "idle", "done": 0, "total": 2}})
    );
    assert_eq!(
        (&data(1)["status"], &data(1)["step"]),
        (&json!("started"), &running)
    );
    let tool = data(2);
    assert_eq!(
        (&tool["name"], &tool["args"], &tool["result"], &tool["step"]),
        (
            &json!("browser_navigate"),
            &json!({"url": "https://www.baidu.com"}),
            &json!({"success": true}),
            &running
        )
    );
    assert_eq!(
        (&data(3)["message"], &data(3)["step"]),
        (&json!("Baidu is open"), &running)
    );
    assert_eq!(
        (&data(4)["error"], &data(4)["step"]),
        (&json!("A captcha was shown"), &running)
    );
    assert_eq!(
        (
            &data(5)["status"],
            &data(5)["step"]["result"],
            &data(5)["step"]["success"]
        ),
        (&json!("completed"), &json!("opened"), &json!(true))
    );
    assert_eq!(
        (&data(7)["index"], &data(7)["count"]),
        (&json!(1), &json!(2))
    );
    assert_eq!(
        (
            &data(8)["status"],
            &data(8)["plan"]["status"],
            &data(8)["plan"]["done"],
            &data(8)["index"]
        ),
        (
            &json!("completed"),
            &json!("completed"),
            &json!(2),
            &json!(2)
        )
    );

    // The live stream carried the same payloads.
    let live: Vec<Value> = take_messages(&mut live, 9)
        .into_iter()
        .map(|m| m.2)
        .collect();
    let streamed: Vec<Value> = messages.iter().map(|m| m.2.clone()).collect();
    assert_eq!(live, streamed);
    // Resumed after 3, and in the middle of change 8: the same payloads again.
    let mut resumed = EventStream::open(&server.addr, &path, &[("Last-Event-ID", "3")]);
    let again = take_messages(&mut resumed, 6);
    assert_eq!(again, messages[3..]);
    let mut resumed = EventStream::open(&server.addr, &path, &[("Last-Event-ID", "8.1")]);
    assert_eq!(take_messages(&mut resumed, 1), messages[8..]);
    let bad = server.request("GET", &path, &[("Last-Event-ID", "8.x")], b"");
    assert_eq!(
        (bad.status, bad.code()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
}

/// `planc serve` keeps its memory in small pages: no transparent huge
/// pages, which held a server with a 100,000-task plan at 160–190 MB under
/// paged reads against 60–80 MB without (docs/performance.md, "Memory of a
/// 100,000-task plan") — unless `MIMALLOC_ALLOW_THP` is set.
#[cfg(target_os = "linux")]
#[test]
fn serve_keeps_its_memory_out_of_transparent_huge_pages() {
    let dir = tempdir();
    let url = store_url(dir.path());
    let thp = |server: &Server| {
        let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
            .expect("the server's status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("THP_enabled:"))
            .map(|value| value.trim().to_owned())
    };
    let server = Server::start(&["--store", &url]);
    assert_eq!(thp(&server).as_deref(), Some("0"));
    drop(server);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_planc"));
    command.env("MIMALLOC_ALLOW_THP", "1");
    let server = Server::start_in(command, &["--store", &url]);
    assert_eq!(thp(&server).as_deref(), Some("1"));
}
