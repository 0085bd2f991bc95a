//! JSON plan documents in the editor: `*.plan.json` and task-master's
//! `.taskmaster/tasks/tasks.json` get the diagnostics `planc check` gives
//! them, at their places in the JSON; requests about them answer nothing.

use crate::common::{find, range, TestClient};
use planc::line_index::LineIndex;
use planc::span::FileId;
use serde_json::{json, Value};

const TASKS: &str = "file:///work/project/.taskmaster/tasks/tasks.json";
const PLAN: &str = "file:///work/project/release.plan.json";

/// Opens `text` as `uri` and returns the diagnostics published for it.
async fn open(client: &mut TestClient, uri: &str, text: &str) -> Value {
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "json", "version": 1, "text": text } }),
        )
        .await;
    let published = client.diagnostics().await;
    assert_eq!(published["uri"], uri);
    published
}

/// What `planc check` reports for the document (the library call it makes),
/// as (code, first line of the message, range).
fn expected(text: &str, stem: &str) -> Vec<(String, String, Value)> {
    let (_, diagnostics) = planc::document::load_json(text, FileId(0), stem);
    let lines = LineIndex::new(text);
    diagnostics
        .iter()
        .map(|d| {
            let span = d.primary().expect("a label").span;
            let at = |offset| {
                let lc = lines.line_col_utf16(text, offset);
                (lc.line as u32, lc.col as u32)
            };
            (
                d.code.as_str().to_owned(),
                d.message.lines().next().unwrap_or("").to_owned(),
                range(at(span.start()), at(span.end())),
            )
        })
        .collect()
}

fn shown(published: &Value) -> Vec<(String, String, Value)> {
    published["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_owned(),
                d["message"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned(),
                d["range"].clone(),
            )
        })
        .collect()
}

const TASKMASTER: &str = r#"{
  "master": {
    "tasks": [
      { "id": 1, "title": "Write the tests", "description": "First", "status": "pending", "dependencies": [], "priority": "medium", "details": "", "testStrategy": "" },
      { "id": 2, "title": "Fix the bug", "description": "Then", "status": "started", "dependencies": [1, 7], "priority": "high", "details": "", "testStrategy": "" }
    ]
  }
}
"#;

#[tokio::test]
async fn a_taskmaster_file_gets_the_diagnostics_of_planc_check_at_json_positions() {
    let mut client = TestClient::start().await;
    let published = open(&mut client, TASKS, TASKMASTER).await;
    let shown = shown(&published);
    assert_eq!(shown, expected(TASKMASTER, "tasks"));
    assert!(shown.len() >= 2, "{published}");
    // The unknown dependency is marked on the `7`, the unknown status on
    // `"started"`.
    let seven = find(TASKMASTER, "7]", 0);
    assert!(
        shown
            .iter()
            .any(|(_, _, r)| *r == range(seven, (seven.0, seven.1 + 1))),
        "{published}"
    );
    let started = find(TASKMASTER, "\"started\"", 0);
    assert!(
        shown
            .iter()
            .any(|(_, _, r)| *r == range(started, (started.0, started.1 + 9))),
        "{published}"
    );
}

#[tokio::test]
async fn a_plan_json_file_is_checked_and_follows_changes() {
    let mut client = TestClient::start().await;
    let cyclic = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/errors/cycle.json"
    ))
    .expect("the example");
    let published = open(&mut client, PLAN, &cyclic).await;
    assert_eq!(shown(&published), expected(&cyclic, "release.plan"));
    assert!(!shown(&published).is_empty());
    // Break the cycle: task 1 depends on nothing.
    let at = find(&cyclic, "[3]", 1);
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": PLAN, "version": 2 },
                "contentChanges": [{ "range": range(at, (at.0, at.1 + 1)), "text": "" }],
            }),
        )
        .await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 2);
    let fixed = cyclic.replacen("[3]", "[]", 1);
    assert_eq!(shown(&published), expected(&fixed, "release.plan"));
}

#[tokio::test]
async fn a_clean_json_document_has_no_diagnostics_and_plan_requests_answer_nothing() {
    let mut client = TestClient::start().await;
    let clean = TASKMASTER
        .replace("\"started\"", "\"pending\"")
        .replace("[1, 7]", "[1]");
    let published = open(&mut client, TASKS, &clean).await;
    assert_eq!(published["diagnostics"], json!([]));
    let at =
        json!({ "textDocument": { "uri": TASKS }, "position": { "line": 3, "character": 10 } });
    assert_eq!(
        client.result("textDocument/hover", at.clone()).await,
        Value::Null
    );
    assert_eq!(
        client.result("textDocument/completion", at).await,
        Value::Null
    );
    // Formatting never rewrites JSON as a plan.
    let formatting = client
        .result(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": TASKS }, "options": { "tabSize": 4, "insertSpaces": true } }),
        )
        .await;
    assert_eq!(formatting, Value::Null);
}

#[tokio::test]
async fn invalid_json_is_a_syntax_error_where_it_is() {
    let mut client = TestClient::start().await;
    let broken = "{ \"tasks\": [ { \"id\": 1, } ] }";
    let published = open(&mut client, PLAN, broken).await;
    let shown = shown(&published);
    assert_eq!(shown, expected(broken, "release.plan"));
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].0, "planc::syntax");
    assert!(shown[0].1.starts_with("invalid JSON"), "{published}");
}
