//! Two `planc serve` processes on one PostgreSQL database (a throwaway
//! cluster under a temporary directory, as tests/it/plan_store.rs's): a plan
//! created through one is changed through the other's JSON API and its
//! `/mcp`; both servers' event streams (every plan's and the plan's) deliver
//! every change, in order, and follow the plan when it is started over
//! through the other server; SIGTERM stops each cleanly (exit 0). Skipped,
//! saying so, where PostgreSQL is not installed.

#![cfg(unix)]

use crate::serve_support::{streams_follow_a_plan_started_over, EventStream, McpSession, Server};
use crate::store_support::Cluster;
use serde_json::{json, Value};

/// The (seq, op, first event's kind, its agent) of the next message.
fn next_change(stream: &mut EventStream) -> (u64, String, String, Value) {
    let (message, data) = stream.next_json();
    assert_eq!(data["plan_id"], "jd", "{data}");
    let seq = data["seq"].as_u64().expect("a seq");
    if message.event.as_deref() != Some("plan") {
        assert_eq!(message.event.as_deref(), Some("step"), "{data}");
    }
    (
        seq,
        data["op"].as_str().unwrap_or_default().to_owned(),
        data["kind"].as_str().unwrap_or_default().to_owned(),
        data["agent"].clone(),
    )
}

#[test]
fn two_servers_on_one_postgres_share_plans_and_stream_every_change() {
    let Some(cluster) = Cluster::shared() else {
        return;
    };
    let url = cluster.database();
    let one = Server::start(&["--store", &url]);
    let two = Server::start(&["--store", &url]);

    // Every plan's stream on both servers, from now on.
    let mut feeds = [
        EventStream::open(&one.addr, "/api/events?after=now", &[]),
        EventStream::open(&two.addr, "/api/events?after=now", &[]),
    ];
    for feed in &feeds {
        assert_eq!(feed.status, 200);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));

    // Created through one, seen by two.
    one.create("jd", "examples/jd_keyboard.plan");
    let listed = two.get("/api/plans").json();
    assert_eq!(listed["data"]["plans"][0]["plan_id"], "jd", "{listed}");
    let mut plan_streams = [
        EventStream::open(&one.addr, "/api/plans/jd/events", &[]),
        EventStream::open(&two.addr, "/api/plans/jd/events", &[]),
    ];

    // A change through two's JSON API…
    let started = two.op("jd", "startNextTask", json!({"agent": "ann"}));
    assert_eq!(started.status, 200, "{}", started.text());
    assert_eq!(started.json()["data"]["task"]["id"], 1);
    // …and one through its MCP endpoint.
    let mut mcp = McpSession::open(&two.addr, "/mcp");
    let (content, is_error) = mcp.call(
        "completeTask",
        json!({"plan_id": "jd", "agent": "ann", "task_id": 1, "result": "wired"}),
    );
    assert!(!is_error, "{content}");

    // One sees both changes.
    let plan = one.get("/api/plans/jd").json();
    assert_eq!(plan["data"]["state"]["revision"], 3, "{plan}");
    let task = &plan["data"]["tasks"][0];
    assert_eq!(
        (&task["id"], &task["status"], &task["result"]),
        (&json!(1), &json!("completed"), &json!("wired")),
        "{plan}"
    );

    // Every stream on both servers delivers the three changes, in order.
    let expected = [
        (1, "init".to_owned(), "created".to_owned(), Value::Null),
        (2, "startNextTask".into(), "started".into(), json!("ann")),
        (3, "completeTask".into(), "completed".into(), json!("ann")),
    ];
    for stream in feeds.iter_mut().chain(plan_streams.iter_mut()) {
        let seen: Vec<_> = (0..3).map(|_| next_change(stream)).collect();
        assert_eq!(seen, expected);
    }

    // SIGTERM: each stops cleanly, its streams end.
    for server in [one, two] {
        let stderr = std::sync::Arc::clone(&server.stderr);
        assert_eq!(server.terminate(), Some(0), "{}", stderr.lock().unwrap());
        let stderr = stderr.lock().unwrap();
        assert!(stderr.contains("planc serve: stopped"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    for stream in feeds.iter_mut().chain(plan_streams.iter_mut()) {
        assert_eq!(stream.next(), None);
    }
}

/// A plan started over (forced, then deleted and created again) through
/// one server: the streams open on the other deliver every event of each
/// new plan, in order, none twice.
#[test]
fn streams_on_another_server_follow_a_plan_started_over() {
    let Some(cluster) = Cluster::shared() else {
        return;
    };
    let url = cluster.database();
    let one = Server::start(&["--store", &url]);
    let two = Server::start(&["--store", &url, "--keep-alive", "3600"]);
    streams_follow_a_plan_started_over(&one, &two);
}
