//! The server stays up on any input: every prefix of every example, and
//! random edits, each followed by requests that must still be answered.

use crate::common::{self, at, position, TestClient, DEMO, URI};
use proptest::prelude::*;
use serde_json::json;

/// Asks for everything at `offset`; each request must get an answer, not an error.
async fn ask_everything(client: &mut TestClient, text: &str, offset: usize) {
    let (line, col) = position(text, offset);
    let document = json!({ "textDocument": { "uri": URI } });
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        client.result(method, at(line, col)).await;
    }
    let mut references = at(line, col);
    references["context"] = json!({ "includeDeclaration": true });
    client.result("textDocument/references", references).await;
    let mut rename = at(line, col);
    rename["newName"] = json!("renamed");
    let response = client.request("textDocument/rename", rename).await;
    assert!(response.get("result").is_some() || response["error"]["code"] == -32602);
    for method in [
        "textDocument/documentSymbol",
        "textDocument/semanticTokens/full",
        "textDocument/foldingRange",
    ] {
        client.result(method, document.clone()).await;
    }
    let mut actions = document.clone();
    actions["range"] = common::range((0, 0), (line, col));
    actions["context"] = json!({ "diagnostics": [] });
    client.result("textDocument/codeAction", actions).await;
    client.forget_notifications();
}

fn example_texts() -> Vec<(String, String)> {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
    let mut texts = vec![("demo".to_owned(), DEMO.to_owned())];
    let mut paths: Vec<_> = std::fs::read_dir(examples)
        .expect("examples/ exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "plan"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a readable example");
        texts.push((path.display().to_string(), text));
    }
    texts
}

#[tokio::test]
async fn every_prefix_of_every_example_is_answered() {
    let mut client = TestClient::start().await;
    client.open("").await;
    let mut version = 1;
    for (name, text) in example_texts() {
        let boundaries: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        for (n, &end) in boundaries.iter().enumerate() {
            version += 1;
            let prefix = &text[..end];
            client.replace_all(version, prefix).await;
            // Completion at the end of the half-typed text, every time;
            // everything else every few characters.
            let (line, col) = position(prefix, end);
            let response = client
                .request("textDocument/completion", at(line, col))
                .await;
            assert!(
                response.get("result").is_some(),
                "{name}: completion failed after {end} bytes: {response}"
            );
            if n % 13 == 0 {
                ask_everything(&mut client, prefix, end / 2).await;
            }
            client.forget_notifications();
        }
    }
}

/// An edit: where (a fraction of the text), how much to delete, what to insert.
fn edit() -> impl Strategy<Value = (f64, usize, String)> {
    let fragment = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("\"".to_owned()),
        Just("\"\"\"".to_owned()),
        Just("task x \"X\" {".to_owned()),
        Just("after ".to_owned()),
        Just(", ".to_owned()),
        Just("{version".to_owned()),
        Just("\n".to_owned()),
        Just("# ".to_owned()),
        Just("𝄞".to_owned()),
        Just("打开".to_owned()),
        Just("\\u{".to_owned()),
        Just("step".to_owned()),
        any::<String>(),
    ];
    (0.0..=1.0f64, 0usize..12, fragment)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(planc::generate::fuzz_cases(48)))]

    #[test]
    fn random_edits_never_bring_the_server_down(edits in proptest::collection::vec(edit(), 1..12)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let mut client = TestClient::start().await;
            client.open(DEMO).await;
            let mut text = DEMO.to_owned();
            for (version, (at_fraction, delete, insert)) in edits.into_iter().enumerate() {
                let mut start = (text.len() as f64 * at_fraction) as usize;
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                let mut end = (start + delete).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                let (from, to) = (position(&text, start), position(&text, end));
                client.edit(version as i32 + 2, from, to, &insert).await;
                text.replace_range(start..end, &insert);
                ask_everything(&mut client, &text, start + insert.len()).await;
            }
            // The server's text is the client's: the outline of a final full
            // replace matches an outline of the same text after the edits.
            let document = json!({ "textDocument": { "uri": URI } });
            let incremental = client.result("textDocument/documentSymbol", document.clone()).await;
            client.replace_all(100, &text).await;
            let full = client.result("textDocument/documentSymbol", document).await;
            assert_eq!(incremental, full);
        });
    }
}

#[tokio::test]
async fn positions_past_the_end_and_unknown_documents_are_answered() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    for (line, col) in [(0, 999), (999, 0), (u32::MAX, u32::MAX), (3, 15)] {
        client.result("textDocument/hover", at(line, col)).await;
        client
            .result("textDocument/completion", at(line, col))
            .await;
    }
    client.edit(2, (999, 0), (u32::MAX, 5), "\n}").await;
    client.diagnostics().await;
    let unknown = json!({ "textDocument": { "uri": "file:///nowhere.plan" }, "position": { "line": 0, "character": 0 } });
    let hover = client.result("textDocument/hover", unknown).await;
    assert_eq!(hover, serde_json::Value::Null);
}
