//! The diagnostics the server publishes after an edit, compiled from the
//! analysis of the text before it, against those of the same text compiled
//! whole (opened in a second server): the same notification on the wire.
//! Then every edit taken back in one notification, each change's positions
//! in the text the change before it left.

use planc::generate::edits::Splice;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{position, range, TestClient, URI};

const SNIPPETS: &[&str] = &[
    "x",
    "\"",
    "{",
    "}",
    "t1",
    " after t5",
    " after t39",
    "{count}",
    "{nope}",
    "assignee r9",
    "role r9\n",
    "# note\n",
    "\n",
    "task extra \"Extra\"\n",
    "é𝄞",
    "step",
    "}}",
    " ",
];

/// The diagnostics published for `version` of [`URI`] (those of older
/// versions, and the empty ones of a close, are skipped).
async fn published(client: &mut TestClient, version: i32) -> Value {
    loop {
        let published = client.diagnostics().await;
        if published["version"] == version {
            return published;
        }
    }
}

/// Closes [`URI`] and opens `text` as its version `version`: a whole compile.
/// Returns the diagnostics published for it.
async fn open_whole(client: &mut TestClient, text: &str, version: i32) -> Value {
    let document = json!({ "textDocument": { "uri": URI } });
    client.notify("textDocument/didClose", document).await;
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": URI, "languageId": "plan", "version": version, "text": text } }),
        )
        .await;
    published(client, version).await
}

/// A change replacing `start..end` of `text` with `insert`, in protocol
/// positions.
fn change(text: &str, start: usize, end: usize, insert: &str) -> Value {
    json!({ "range": range(position(text, start), position(text, end)), "text": insert })
}

async fn semantic_tokens(client: &mut TestClient) -> Value {
    client
        .result(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(planc::generate::fuzz_cases(64)))]

    #[test]
    fn published_diagnostics_after_an_edit_are_those_of_a_whole_compile(
        edits in proptest::collection::vec((0.0..1.0f64, 0..12usize, 0..SNIPPETS.len() + 1), 1..8),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let mut edited = TestClient::start().await;
            let mut whole = TestClient::start().await;
            let first = planc::generate::plan_source(40, false).replace("Stage 3", "Stage 3 𝄞 é");
            edited.open(&first).await;
            let mut texts = vec![first];
            let mut splices = Vec::new();
            for (at, len, snippet) in edits {
                let text = texts.last().expect("a text");
                let splice = Splice::pick(text, (at * text.len() as f64) as usize, len, SNIPPETS, snippet);
                let version = texts.len() as i32 + 1;
                let changes = json!([change(text, splice.start, splice.end, splice.insert)]);
                edited.change(version, changes).await;
                let next = splice.apply(text);
                let incremental = published(&mut edited, version).await;
                let reference = open_whole(&mut whole, &next, version).await;
                assert_eq!(incremental, reference, "after editing to\n{next}");
                texts.push(next);
                splices.push(splice);
            }
            // Every edit taken back, the last first, in one notification:
            // the text the server compiles is the first text again.
            let undo: Vec<Value> = splices
                .iter()
                .zip(texts.windows(2))
                .rev()
                .map(|(splice, pair)| {
                    let end = splice.start + splice.insert.len();
                    change(&pair[1], splice.start, end, &pair[0][splice.start..splice.end])
                })
                .collect();
            let version = texts.len() as i32 + 1;
            edited.change(version, Value::Array(undo)).await;
            let incremental = published(&mut edited, version).await;
            let reference = open_whole(&mut whole, &texts[0], version).await;
            assert_eq!(incremental, reference, "after taking every edit back");
            // Where every token stands tells a wrong text apart even where
            // both texts have no diagnostics.
            assert_eq!(semantic_tokens(&mut edited).await, semantic_tokens(&mut whole).await);
        });
    }
}
