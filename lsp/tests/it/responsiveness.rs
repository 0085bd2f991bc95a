//! Requests are answered while a large file compiles: the compile runs off
//! the thread that reads messages, and no request waits for it unless it
//! needs its result. Asserted by the order of the server's messages, not by
//! the clock.

use crate::common::{self, at, find, TestClient, DEMO, URI};
use serde_json::{json, Value};

const LARGE: &str = "file:///work/large.plan";

/// A plan large enough that compiling it takes far longer than answering a
/// request about a small one.
fn large_plan() -> String {
    planc::generate::plan_source(100_000, false)
}

/// Reads messages until the responses to every id in `ids` have arrived;
/// returns everything read, in order.
async fn read_until_answered(client: &mut TestClient, ids: &[i64]) -> Vec<Value> {
    let mut read = Vec::new();
    let mut answered = 0;
    while answered < ids.len() {
        let message = client.next_message().await;
        if message["id"].as_i64().is_some_and(|id| ids.contains(&id)) {
            answered += 1;
        }
        read.push(message);
    }
    read
}

/// A message in a word or three: `response N`, or a notification's method,
/// document and version.
fn describe(message: &Value) -> String {
    match message["id"].as_i64() {
        Some(id) => format!("response {id}"),
        None => format!(
            "{} {} v{}",
            message["method"].as_str().unwrap_or("?"),
            message["params"]["uri"].as_str().unwrap_or("?"),
            message["params"]["version"]
        ),
    }
}

/// The next diagnostics published for `uri`.
async fn diagnostics_for(client: &mut TestClient, uri: &str) -> Value {
    loop {
        let published = client.diagnostics().await;
        if published["uri"] == uri {
            return published;
        }
    }
}

#[tokio::test]
async fn a_small_document_is_served_while_a_large_one_compiles() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": LARGE, "languageId": "plan", "version": 1, "text": large_plan() } }),
        )
        .await;
    let (line, col) = find(DEMO, "test \"测试\"", 1);
    let hover = client
        .start_request("textDocument/hover", at(line, col))
        .await;
    let (line, col) = find(DEMO, "assignee dev\n        description", 9);
    let completion = client
        .start_request("textDocument/completion", at(line, col))
        .await;
    let outline = client
        .start_request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    let read = read_until_answered(&mut client, &[hover, completion, outline]).await;
    // Answered, and before the large file's diagnostics.
    let order: Vec<String> = read.iter().map(describe).collect();
    assert_eq!(order.len(), 3, "{order:?}");
    let result = |id: i64| {
        read.iter()
            .find(|m| m["id"] == id)
            .map(|m| m["result"].clone())
            .unwrap_or_default()
    };
    assert!(result(hover)["contents"]["value"]
        .as_str()
        .is_some_and(|v| v.starts_with("**task** `test`")));
    let labels: Vec<Value> = result(completion)
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item["label"].clone())
        .collect();
    assert_eq!(labels, [json!("dev"), json!("qa")]);
    assert_eq!(result(outline)[0]["name"], "release");
    // Then the large file's diagnostics come (it checks clean).
    let published = diagnostics_for(&mut client, LARGE).await;
    assert_eq!(published["version"], 1);
    assert_eq!(published["diagnostics"], json!([]));
}

#[tokio::test]
async fn hover_in_a_large_document_is_answered_from_its_last_analysis_while_it_compiles_again() {
    let mut client = TestClient::start().await;
    let text = large_plan();
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": LARGE, "languageId": "plan", "version": 1, "text": text } }),
        )
        .await;
    assert_eq!(diagnostics_for(&mut client, LARGE).await["version"], 1);
    // Retitle the first task and misspell the last task's assignee, then
    // hover over the first task's name at once: the answer comes from the
    // analysis of version 1, without waiting for version 2 to compile.
    let title = text.find("Do part 0 ").expect("t0's title") + "Do part ".len();
    let last = text.rfind("{ assignee ").expect("an assignee") + "{ assignee ".len();
    let (title, last) = (position(&text, title), position(&text, last));
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": LARGE, "version": 2 },
                "contentChanges": [
                    { "range": common::range(last, (last.0, last.1 + 1)), "text": "x" },
                    { "range": common::range(title, (title.0, title.1 + 1)), "text": "zero" },
                ],
            }),
        )
        .await;
    let (line, col) = position(&text, text.find("task t0 ").expect("task t0") + 6);
    let t0 =
        json!({ "textDocument": { "uri": LARGE }, "position": { "line": line, "character": col } });
    let hover = client.start_request("textDocument/hover", t0.clone()).await;
    let read = read_until_answered(&mut client, &[hover]).await;
    let order: Vec<String> = read.iter().map(describe).collect();
    assert_eq!(order, [format!("response {hover}")]);
    let shown = |hover: &Value| hover["contents"]["value"].as_str().unwrap_or("").to_owned();
    assert!(
        shown(&read[0]["result"]).contains("Do part 0 for the benchmark"),
        "{}",
        read[0]
    );
    // Then the diagnostics of version 2, and of it only.
    let published = diagnostics_for(&mut client, LARGE).await;
    assert_eq!(published["version"], 2);
    let codes: Vec<&str> = published["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["planc::unknown_role"]);
    // And now hover shows version 2.
    let hover = client.result("textDocument/hover", t0).await;
    assert!(
        shown(&hover).contains("Do part zero for the benchmark"),
        "{hover}"
    );
}

#[tokio::test]
async fn a_burst_of_changes_during_a_compile_publishes_only_the_newest_text() {
    let mut client = TestClient::start().await;
    let text = large_plan();
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": LARGE, "languageId": "plan", "version": 1, "text": text } }),
        )
        .await;
    // Type `xyz` after the last assignee, one keystroke at a time, while
    // version 1 compiles.
    let start = text.rfind("{ assignee ").expect("an assignee") + "{ assignee ".len();
    let role: String = text[start..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    let (line, col) = position(&text, start + role.len());
    for (n, typed) in ["x", "y", "z"].into_iter().enumerate() {
        let col = col + n as u32;
        client
            .notify(
                "textDocument/didChange",
                json!({
                    "textDocument": { "uri": LARGE, "version": n + 2 },
                    "contentChanges": [{ "range": common::range((line, col), (line, col)), "text": typed }],
                }),
            )
            .await;
    }
    // A request that needs the newest text waits for the compile of
    // version 4. The text of versions 2 and 3 is never compiled, and version
    // 1 is out of date when its compile ends: only version 4's diagnostics
    // come.
    let folds = client
        .start_request(
            "textDocument/foldingRange",
            json!({ "textDocument": { "uri": LARGE } }),
        )
        .await;
    let mut read = read_until_answered(&mut client, &[folds]).await;
    let is_v4 = |m: &Value| m["params"]["version"] == 4;
    while !read.iter().any(is_v4) {
        read.push(client.next_message().await);
    }
    let order: Vec<String> = read.iter().map(describe).collect();
    let large = format!("textDocument/publishDiagnostics {LARGE}");
    assert_eq!(
        order
            .iter()
            .filter(|m| m.starts_with("textDocument/"))
            .collect::<Vec<_>>(),
        [&format!("{large} v4")],
        "{order:?}"
    );
    let published = &read.iter().find(|m| is_v4(m)).expect("version 4")["params"];
    assert_eq!(
        published["diagnostics"][0]["message"]
            .as_str()
            .and_then(|m| m.lines().next()),
        Some(format!("no role named `{role}xyz`").as_str())
    );
}

/// The (line, UTF-16 column) of a byte offset in ASCII text.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..offset].matches('\n').count() as u32;
    (line, (offset - line_start) as u32)
}
