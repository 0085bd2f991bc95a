//! A bounded fuzz run over `planc serve`: random requests (methods, routes,
//! plan ids, operations, JSON of random shape and size) to every route and
//! random calls of every MCP tool. No answer is a 5xx, every JSON route
//! answers the envelope (or JSON-RPC on `/mcp`), and the server stays up.
//!
//! CI runs it for `PLANC_FUZZ_SECONDS` (default 6); `scripts/fuzz-serve
//! SECONDS` runs it longer.

use std::time::{Duration, Instant};

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

use crate::serve_support::{store_url, McpSession, Server};

/// How long the run lasts.
fn budget() -> Duration {
    let seconds = std::env::var("PLANC_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    Duration::from_secs(seconds)
}

/// Argument names the tools take, and some they do not.
const KEYS: [&str; 16] = [
    "task_id",
    "agent",
    "result",
    "name",
    "steps",
    "plan_id",
    "takeover",
    "lease",
    "kind",
    "data",
    "message",
    "dependencies",
    "status",
    "title",
    "source",
    "id",
];

/// JSON of random shape: strings up to 64 KiB, nesting up to 6 deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::from),
        (0usize..65_536).prop_map(|n| Value::from("x".repeat(n))),
    ];
    leaf.prop_recursive(6, 96, 8, |inner| {
        let key = prop_oneof![
            proptest::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
            "\\PC{0,8}",
        ];
        prop_oneof![
            vec(inner.clone(), 0..8).prop_map(Value::Array),
            btree_map(key, inner, 0..8).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A plan id: one that exists, or random text (percent-encoded on the way).
fn plan_id() -> impl Strategy<Value = String> {
    prop_oneof![Just("jd".to_owned()), "\\PC{0,12}"]
}

/// A request: method, path (with query), body.
fn http_request() -> impl Strategy<Value = (String, String, Vec<u8>)> {
    let method = proptest::sample::select(vec!["GET", "POST", "DELETE", "PUT", "PATCH"]);
    let op = prop_oneof![
        proptest::sample::select(planc::runner::Op::NAMES.to_vec()).prop_map(str::to_owned),
        "[a-zA-Z%]{0,12}",
    ];
    let encode = |s: String| {
        percent_encoding::utf8_percent_encode(&s, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let path = prop_oneof![
        Just("/api/plans".to_owned()),
        plan_id().prop_map(move |id| format!("/api/plans?id={}&force=true", encode(id))),
        plan_id().prop_map(move |id| format!("/api/plans/{}", encode(id))),
        (plan_id(), op).prop_map(move |(id, op)| format!("/api/plans/{}/ops/{op}", encode(id))),
        Just("/health".to_owned()),
        Just("/mcp".to_owned()),
        Just("/api/schema/events.json".to_owned()),
        Just("/".to_owned()),
        "/[a-z%/.]{0,16}",
    ];
    let body = prop_oneof![
        json_value().prop_map(|v| v.to_string().into_bytes()),
        vec(any::<u8>(), 0..256),
        Just(b"plan p { goal \"g\" task a \"a\" }".to_vec()),
    ];
    (method, path, body).prop_map(|(m, p, b)| (m.to_owned(), p, b))
}

/// Whether `answer` is the envelope: success with data, or an error with a
/// code and a message.
fn is_envelope(answer: &Value) -> bool {
    match answer["success"].as_bool() {
        Some(true) => answer.get("data").is_some(),
        Some(false) => {
            answer["error"]["code"].is_string() && answer["error"]["message"].is_string()
        }
        None => false,
    }
}

#[test]
fn random_requests_and_tool_calls_never_break_the_server() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(dir.path()), "--rate-limit", "0"]);
    server.create("jd", "examples/jd_keyboard.plan");
    let tools: Vec<String> = planc::runner::Op::NAMES
        .iter()
        .map(|s| (*s).to_owned())
        .chain(["observe".to_owned(), "no_such_tool".to_owned()])
        .collect();
    let mut session = McpSession::open(&server.addr, "/mcp");
    // CI runs the same cases each time; a longer run (scripts/fuzz-serve)
    // new ones.
    let mut runner = match std::env::var_os("PLANC_FUZZ_SECONDS") {
        Some(_) => TestRunner::default(),
        None => TestRunner::deterministic(),
    };
    let requests = http_request();
    let calls = (proptest::sample::select(tools), json_value());
    let (start, mut sent) = (Instant::now(), 0u64);
    while start.elapsed() < budget() {
        let (method, path, body) = requests.new_tree(&mut runner).unwrap().current();
        // The event streams never end; they are not fuzzed here.
        if method == "GET" && path.ends_with("events") {
            continue;
        }
        let answer = server.request(&method, &path, &[], &body);
        let case = format!("{method} {path} {}", String::from_utf8_lossy(&body));
        assert!(
            answer.status < 500,
            "{case}: {} {}",
            answer.status,
            answer.text()
        );
        let is_json = answer
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"));
        if path != "/" && path != "/api/schema/events.json" {
            let value: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
            assert!(
                is_json && is_envelope(&value),
                "{case}: {} {}",
                answer.status,
                answer.text()
            );
        }
        let (tool, arguments) = calls.new_tree(&mut runner).unwrap().current();
        let mut arguments = match arguments {
            Value::Object(map) => Value::Object(map),
            other => json!({"value": other}),
        };
        // Every other call on the plan that exists, so the calls reach it.
        if sent % 4 == 0 {
            arguments["plan_id"] = json!("jd");
        }
        let answer = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            answer.get("result").is_some() || answer["error"]["code"].is_i64(),
            "tools/call {tool} {arguments}: {answer}"
        );
        sent += 2;
    }
    assert_eq!(server.get("/health").status, 200, "the server is up");
    eprintln!("serve fuzz: {sent} requests in {:?}", start.elapsed());
}
