//! `planc serve` under hostile clients: half-sent requests time out, a
//! stalled body idles out, the connection cap makes the rest wait, MCP
//! sessions are capped and expire, and `/metrics` shows it all.

#![cfg(unix)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::serve_support::{request, store_url, McpSession, Server};

/// The value of metric `name` (a line `name VALUE`).
pub fn metric(server: &Server, name: &str) -> u64 {
    let text = server.get("/metrics").text();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no metric {name} in\n{text}"))
}

/// A connection that sent half a request head and stopped.
fn half_open(addr: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .write_all(format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .expect("write");
    stream
}

/// Whether the server has closed `stream` (it reads the end, or an error)
/// within `wait`.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).expect("timeout");
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // hyper may answer 408 before it closes: read on to the end.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

#[test]
fn a_thousand_half_sent_requests_neither_block_a_client_nor_stay_open() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path()), "--header-timeout", "2"]);
    let opening = Instant::now();
    let mut held: Vec<TcpStream> = (0..1000).map(|_| half_open(&server.addr)).collect();
    // Every one of them accepted and waiting for the rest of its head.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut open = metric(&server, "planc_connections_open");
    while open < 1001 {
        assert!(
            Instant::now() < deadline,
            "only {open} connections open after {:?}",
            opening.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
        open = metric(&server, "planc_connections_open");
    }
    eprintln!("1000 held after {:?}", opening.elapsed());

    let asked = Instant::now();
    let health = server.get("/health");
    let took = asked.elapsed();
    assert_eq!(health.status, 200, "{}", health.text());
    assert!(
        took < Duration::from_millis(100),
        "a client waited {took:?}"
    );

    // The header timeout (2 s) closes every one of them.
    let open = held
        .iter_mut()
        .map(|stream| closed_within(stream, Duration::from_secs(3)))
        .filter(|closed| !closed)
        .count();
    assert_eq!(
        open, 0,
        "half-sent requests still open after the header timeout"
    );
    assert!(metric(&server, "planc_connections_timed_out_total") >= 1000);
    assert!(metric(&server, "planc_connections_open") <= 2);
}

#[test]
fn a_stalled_body_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&[
        "--store",
        &store_url(dir.path()),
        "--keep-alive",
        "1",
        "--idle-timeout",
        "2",
    ]);
    let mut stream = TcpStream::connect(&server.addr).expect("connect");
    let head = format!(
        "POST /api/plans HTTP/1.1\r\nHost: {}\r\nContent-Length: 100\r\n\r\nplan",
        server.addr
    );
    stream.write_all(head.as_bytes()).expect("write");
    let started = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(4),
        "closed after {took:?}, not the idle timeout's 2 s"
    );
}

#[test]
fn at_the_connection_cap_a_client_waits_for_a_slot_then_is_served() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&[
        "--store",
        &store_url(dir.path()),
        "--header-timeout",
        "1",
        "--max-connections",
        "8",
    ]);
    assert_eq!(metric(&server, "planc_connections_max"), 8);
    std::thread::sleep(Duration::from_millis(1200));
    let held: Vec<TcpStream> = (0..8).map(|_| half_open(&server.addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    let health = server.get("/health");
    let took = asked.elapsed();
    assert_eq!(health.status, 200, "{}", health.text());
    // Served once the header timeout freed a slot, not before.
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(3),
        "served after {took:?}"
    );
    drop(held);
}

/// The status of a `tools/list` on MCP session `id`, spoken by hand (an
/// ended session gets 404, which `McpSession` would not accept).
fn tools_list_status(server: &Server, id: &str) -> u16 {
    request(
        &server.addr,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", id),
            ("Mcp-Protocol-Version", "2025-06-18"),
        ],
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
    )
    .status
}

#[test]
fn mcp_sessions_past_the_cap_evict_the_one_idle_longest() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path()), "--max-sessions", "3"]);
    let mut first = McpSession::open(&server.addr, "/mcp");
    let second = McpSession::open(&server.addr, "/mcp");
    let third = McpSession::open(&server.addr, "/mcp");
    // The first is used again: the second is now the one idle longest.
    assert!(first.request("tools/list", json!({}))["result"]["tools"].is_array());
    let fourth = McpSession::open(&server.addr, "/mcp");

    assert_eq!(metric(&server, "planc_mcp_sessions_open"), 3);
    assert_eq!(metric(&server, "planc_mcp_sessions_evicted_total"), 1);
    assert_eq!(tools_list_status(&server, second.id()), 404);
    for kept in [first.id(), third.id(), fourth.id()] {
        assert_eq!(tools_list_status(&server, kept), 200);
    }
    // Many more initialize requests: never more than the cap.
    for _ in 0..20 {
        McpSession::open(&server.addr, "/mcp");
    }
    assert_eq!(metric(&server, "planc_mcp_sessions_open"), 3);
    assert_eq!(metric(&server, "planc_mcp_sessions_evicted_total"), 21);
}

#[test]
fn an_idle_mcp_session_expires() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path()), "--session-idle", "1"]);
    let session = McpSession::open(&server.addr, "/mcp");
    assert_eq!(metric(&server, "planc_mcp_sessions_open"), 1);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(tools_list_status(&server, session.id()), 404);
    assert_eq!(metric(&server, "planc_mcp_sessions_open"), 0);
    assert_eq!(metric(&server, "planc_mcp_sessions_expired_total"), 1);
    assert_eq!(metric(&server, "planc_mcp_sessions_evicted_total"), 0);
}

/// Every text field of the operations, one past its limit, over the JSON
/// API: `INVALID_ARGUMENT` naming the field, its length and its limit, and
/// the plan unchanged.
#[test]
fn every_text_field_has_a_limit_over_the_ops_api() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    server.create("jd", "examples/jd_keyboard.plan");
    let long = |n: usize| "x".repeat(n);
    let cases = [
        ("addTask", json!({"name": long(1025)}), "name", 1024),
        (
            "addTask",
            json!({"name": "n", "description": long(16385)}),
            "description",
            16384,
        ),
        (
            "addTask",
            json!({"name": "n", "reasoning": long(16385)}),
            "reasoning",
            16384,
        ),
        (
            "addTask",
            json!({"name": "n", "assignee": long(201)}),
            "assignee",
            200,
        ),
        (
            "addTask",
            json!({"name": "n", "dependencies": [long(129)]}),
            "dependencies",
            128,
        ),
        (
            "updateTask",
            json!({"task_id": 2, "name": long(1025)}),
            "name",
            1024,
        ),
        (
            "updateTask",
            json!({"task_id": 2, "updates": {"description": long(16385)}}),
            "description",
            16384,
        ),
        ("replan", json!({"steps": [long(1025)]}), "name", 1024),
        (
            "replan",
            json!({"steps": [{"name": "n", "key": long(129)}]}),
            "key",
            128,
        ),
        (
            "completeTask",
            json!({"task_id": 1, "result": long(65537)}),
            "result",
            65536,
        ),
        (
            "failTask",
            json!({"task_id": 1, "error_message": long(65537)}),
            "error_message",
            65536,
        ),
        (
            "skipTask",
            json!({"task_id": 1, "reason": long(16385)}),
            "reason",
            16384,
        ),
        ("startTask", json!({"task_id": long(129)}), "task_id", 128),
        (
            "getTaskList",
            json!({"assignee": long(201)}),
            "assignee",
            200,
        ),
    ];
    for (op, args, field, max) in cases {
        let refused = server.op("jd", op, args);
        assert_eq!(
            (refused.status, refused.code()),
            (400, "INVALID_ARGUMENT".to_owned()),
            "{op} {field}"
        );
        let details = &refused.json()["error"]["details"];
        assert_eq!(details["field"], field, "{op}: {}", refused.text());
        assert_eq!(details["bytes"], max + 1, "{op}");
        assert_eq!(details["max"], max, "{op}");
    }
    // The agent's name, from the header.
    let agent = long(201);
    let refused = server.request(
        "POST",
        "/api/plans/jd/ops/startNextTask",
        &[("X-Planc-Agent", agent.as_str())],
        b"{}",
    );
    assert_eq!(refused.code(), "INVALID_ARGUMENT", "{}", refused.text());
    let doc = server.get("/api/plans/jd").json()["data"].clone();
    assert_eq!(
        doc["state"]["revision"], 1,
        "a refused text changed the plan"
    );

    // A new plan's texts meet the same limits.
    let created = server.post(
        "/api/plans?id=big",
        &json!({"planc": 1, "meta": {"id": "big", "goal": "g"}, "tasks": [
            {"id": 1, "name": "fine", "status": "pending", "dependencies": []},
            {"id": 2, "name": "n", "status": "pending", "dependencies": [], "result": long(65537)},
        ]})
        .to_string(),
    );
    assert_eq!(created.status, 400, "{}", created.text());
    assert_eq!(
        created.json()["error"]["details"],
        json!({"field": "result", "bytes": 65537, "max": 65536, "task_id": 2})
    );
    let source = format!("plan big {{ goal \"g\" task t \"{}\" }}\n", long(1025));
    let created = server.post("/api/plans?id=big", &source);
    assert_eq!(
        created.json()["error"]["details"]["field"],
        "name",
        "{}",
        created.text()
    );
    assert_eq!(server.get("/api/plans/big").status, 404);

    // At the limit: accepted.
    let done = server.op(
        "jd",
        "completeTask",
        json!({"task_id": 1, "result": long(65536)}),
    );
    assert_eq!(done.status, 200, "{}", done.text());
}

#[test]
fn a_text_past_its_limit_is_refused_over_mcp_too() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path())]);
    server.create("jd", "examples/jd_keyboard.plan");
    let mut session = McpSession::open(&server.addr, "/mcp");
    let (error, is_error) = session.call(
        "addTask",
        json!({"plan_id": "jd", "name": "x".repeat(1025)}),
    );
    assert!(is_error, "{error}");
    assert_eq!(error["error"]["code"], "INVALID_ARGUMENT", "{error}");
    assert_eq!(
        error["error"]["details"],
        json!({"field": "name", "bytes": 1025, "max": 1024})
    );
}

/// How to run planc with `dir` read-only: `chmod` where that binds this
/// process (not root), else a read-only bind mount of `dir` in a mount
/// namespace of planc's own (`unshare -m`; root ignores file modes); `None`
/// where neither can be had.
fn read_only_planc(dir: &std::path::Path) -> Option<Box<dyn Fn() -> Command>> {
    use std::os::unix::fs::PermissionsExt;
    let planc = env!("CARGO_BIN_EXE_planc");
    // SAFETY: geteuid(2) reads the process's effective user id.
    if unsafe { libc::geteuid() } != 0 {
        for entry in std::fs::read_dir(dir).expect("the store's directory") {
            let path = entry.expect("an entry").path();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        return Some(Box::new(move || Command::new(planc)));
    }
    let dir = dir.display().to_string();
    let wrapped = move || {
        let mut command = Command::new("unshare");
        command.args([
            "-m",
            "sh",
            "-c",
            r#"mount --bind -o ro "$0" "$0" && exec "$@""#,
            &dir,
            planc,
        ]);
        command
    };
    let probe = wrapped().arg("--version").output();
    probe
        .is_ok_and(|out| out.status.success())
        .then(|| Box::new(wrapped) as Box<dyn Fn() -> Command>)
}

#[test]
fn a_sqlite_store_on_read_only_media_is_read_and_refuses_changes() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let dir = root.path().join("store");
    std::fs::create_dir(&dir).expect("mkdir");
    let url = format!("sqlite:{}", dir.join("plans.db").display());
    let init = Command::new(env!("CARGO_BIN_EXE_planc"))
        .args(["run", "init"])
        .arg(crate::serve_support::repo("examples/jd_keyboard.plan"))
        .args(["--store", &url, "--plan-id", "jd"])
        .output()
        .expect("planc runs");
    assert!(init.status.success(), "{init:?}");
    let files_before = std::fs::read_dir(&dir).expect("ls").count();
    let Some(planc) = read_only_planc(&dir) else {
        eprintln!("skipped: running as root without `unshare -m` and `mount`, the directory cannot be made read-only");
        return;
    };

    let status = planc()
        .args(["run", "status", "--store", &url, "--plan-id", "jd"])
        .output()
        .expect("planc runs");
    assert!(status.status.success(), "{status:?}");
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("0/5 done"),
        "{status:?}"
    );

    let next = planc()
        .args([
            "run",
            "next",
            "--store",
            &url,
            "--plan-id",
            "jd",
            "--agent",
            "a",
        ])
        .output()
        .expect("planc runs");
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(!next.status.success());
    assert!(
        stderr.contains("error[STATE_IO]") && stderr.contains("it is read-only"),
        "{stderr}"
    );

    let server = Server::start_in(planc(), &["--store", &url]);
    let plan = server.get("/api/plans/jd");
    assert_eq!(plan.status, 200, "{}", plan.text());
    assert_eq!(plan.json()["data"]["tasks"][0]["status"], "pending");
    let refused = server.op("jd", "startNextTask", json!({}));
    assert_eq!(refused.code(), "STATE_IO", "{}", refused.text());
    assert_eq!(refused.json()["error"]["details"]["read_only"], true);
    drop(server);
    assert_eq!(std::fs::read_dir(&dir).expect("ls").count(), files_before);
}

/// `observe` adds `[Step]` lines through `addTask`: a step line past a
/// name's limit is not added, and its result says so.
#[test]
fn a_step_line_past_the_name_limit_is_reported_not_added() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("s.json");
    let message = format!("[Step] {}\n[Step] short one\n", "y".repeat(1100));
    let answer = observe(&state, &message);
    assert_eq!(
        answer["data"]["actions"][0],
        "addTask ignored: `name` is 1100 bytes; it may be at most 1024 bytes"
    );
    assert_eq!(answer["data"]["current_task"]["name"], "short one");
}

#[test]
fn a_long_step_line_among_many_is_reported_and_the_others_are_chained_past_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("s.json");
    let message = format!("[Step] first\n[Step] {}\n[Step] third\n", "y".repeat(1100));
    let answer = observe(&state, &message);
    let actions = answer["data"]["actions"].as_array().expect("actions");
    assert!(
        actions.contains(&serde_json::json!(
            "addTask ignored: `name` is 1100 bytes; it may be at most 1024 bytes"
        )),
        "{actions:?}"
    );
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state).expect("the state")).expect("JSON");
    let tasks = saved["tasks"].as_array().expect("tasks");
    let names: Vec<&str> = tasks.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["first", "third"]);
    assert_eq!(
        tasks[1]["dependencies"],
        serde_json::json!([tasks[0]["id"]])
    );
}

/// `planc run observe STATE --json --message MESSAGE`: its JSON answer.
fn observe(state: &std::path::Path, message: &str) -> serde_json::Value {
    let observed = Command::new(env!("CARGO_BIN_EXE_planc"))
        .args(["run", "observe"])
        .arg(state)
        .args(["--json", "--message", message])
        .output()
        .expect("planc runs");
    assert!(observed.status.success(), "{observed:?}");
    serde_json::from_slice(&observed.stdout).expect("a JSON answer")
}
