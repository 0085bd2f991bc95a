//! `textDocument/formatting` over the protocol: the edits the server sends,
//! applied as an editor applies them (all at once, each range in the text
//! before them), give exactly what `planc fmt` prints, and are no larger
//! than what changes.

use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common::{range, TestClient, DEMO, URI};

/// The formatting edits the server answers for `text`, opened as [`URI`].
async fn formatting(text: &str) -> Value {
    let mut client = TestClient::start().await;
    client.open(text).await;
    request_formatting(&mut client).await
}

/// The formatting edits the server answers for [`URI`] as it is.
async fn request_formatting(client: &mut TestClient) -> Value {
    client
        .result(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 4, "insertSpaces": true } }),
        )
        .await
}

/// The byte offset of a protocol position (line, UTF-16 column) in `text`;
/// the position must be in the text, on a character boundary.
fn offset(text: &str, position: &Value) -> usize {
    let line = position["line"].as_u64().expect("a line") as usize;
    let character = position["character"].as_u64().expect("a character") as usize;
    let line_start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    assert!(line == 0 || line_start > 0, "line {line} is in the text");
    let mut units = 0;
    for (i, c) in text[line_start..].char_indices() {
        if units == character {
            return line_start + i;
        }
        assert!(c != '\n', "column {character} is on line {line}");
        units += c.len_utf16();
        assert!(units <= character, "column {character} splits a character");
    }
    assert_eq!(units, character, "column {character} is on line {line}");
    text.len()
}

/// `text` with `edits` applied as the protocol says: every range is in the
/// text before the edits, and no two overlap. Checks that the server sends
/// them in text order.
fn apply(text: &str, edits: &Value) -> String {
    let mut out = String::new();
    let mut at = 0;
    for edit in edits.as_array().expect("a list of edits") {
        let start = offset(text, &edit["range"]["start"]);
        let end = offset(text, &edit["range"]["end"]);
        assert!(
            at <= start && start <= end,
            "edits in order, apart: {edits:#}"
        );
        out.push_str(&text[at..start]);
        out.push_str(edit["newText"].as_str().expect("a new text"));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Formats `text` over the protocol, checks that the edits give what
/// `planc fmt` prints, and returns them.
async fn formatted_by_edits(text: &str) -> Value {
    let edits = formatting(text).await;
    let wanted = planc::fmt::format(text).expect("the text parses");
    assert_eq!(apply(text, &edits), wanted, "edits: {edits:#}");
    edits
}

#[tokio::test]
async fn a_formatted_document_needs_no_edits() {
    assert_eq!(formatting(DEMO).await, json!([]));
    assert_eq!(formatting("").await, json!([]));
}

#[tokio::test]
async fn a_document_with_syntax_errors_is_left_as_it_is() {
    assert_eq!(
        formatting("plan p {\n  task a \"A\" {\n").await,
        Value::Null
    );
}

#[tokio::test]
async fn one_changed_line_is_one_small_edit() {
    let text = DEMO.replace(
        "        task test \"测试\" { assignee qa }",
        "      task test \"测试\" {assignee qa}",
    );
    let edits = formatted_by_edits(&text).await;
    let line = 11;
    assert_eq!(
        edits,
        json!([
            { "range": range((line, 6), (line, 6)), "newText": "  " },
            { "range": range((line, 22), (line, 22)), "newText": " " },
            { "range": range((line, 33), (line, 33)), "newText": " " },
        ])
    );
}

#[tokio::test]
async fn edits_in_text_of_any_width_give_the_formatted_text() {
    // Chinese, an astral character (two UTF-16 units) and an emoji before
    // and inside the edits.
    let text = "plan 计划 {\ntitle \"发布 𝄞 😀\" goal \"目标 🚀\"\n  task 任务 \"编译 𝄞\" {after 测试}\n        task 测试 \"😀😀\"\n}\n";
    let edits = formatted_by_edits(text).await;
    assert_eq!(
        edits,
        json!([
            { "range": range((1, 0), (1, 0)), "newText": "    " },
            { "range": range((1, 16), (1, 16)), "newText": "\n   " },
            { "range": range((2, 2), (2, 2)), "newText": "  " },
            { "range": range((2, 19), (2, 19)), "newText": " " },
            { "range": range((2, 27), (2, 27)), "newText": " " },
            { "range": range((3, 0), (3, 4)), "newText": "" },
        ])
    );
}

#[tokio::test]
async fn edits_at_the_start_and_the_end_of_the_document() {
    let text = "\n\n   # A plan.\nplan p {\n    goal \"g\"\n}\n\n\n";
    let edits = formatted_by_edits(text).await;
    assert_eq!(
        edits,
        json!([
            { "range": range((0, 0), (2, 3)), "newText": "" },
            { "range": range((6, 0), (8, 0)), "newText": "" },
        ])
    );
    // No line end after the last line: one is added.
    let edits = formatted_by_edits("plan p {\n    goal \"g\"\n}").await;
    assert_eq!(
        edits,
        json!([{ "range": range((2, 1), (2, 1)), "newText": "\n" }])
    );
}

#[tokio::test]
async fn crlf_line_ends_lose_their_cr_and_nothing_else_changes() {
    let text = "# 计划 😀\r\nplan p {\r\n    goal \"g\"\r\n    task a \"A\"\r\n}\r\n";
    let edits = formatted_by_edits(text).await;
    let cr = |line: u32, col: u32| json!({ "range": range((line, col), (line, col + 1)), "newText": "" });
    assert_eq!(
        edits,
        json!([cr(0, 7), cr(1, 8), cr(2, 12), cr(3, 14), cr(4, 1)])
    );
}

#[tokio::test]
async fn a_large_messy_document_is_formatted_by_its_edits() {
    let mut text = String::from("plan big {\ngoal \"g\"\n");
    for i in 0..100u32 {
        text.push_str(&format!(
            "  task t{i} \"任务 {i} 😀\" {{after t{}}}\r\n",
            i.saturating_sub(1)
        ));
    }
    text = text.replace("task t0 \"任务 0 😀\" {after t0}", "task t0 \"任务 0 😀\"");
    text.push_str("}\n");
    let edits = formatted_by_edits(&text).await;
    // Small edits inside lines: the `goal` line indented, and each task
    // line indented, `{ after … }` spaced and its `\r` dropped (but the
    // first task's, which has no braces).
    let edits = edits.as_array().expect("a list");
    assert_eq!(edits.len(), 1 + 2 + 99 * 4);
    for edit in edits {
        assert_eq!(
            edit["range"]["start"]["line"], edit["range"]["end"]["line"],
            "{edit}"
        );
        assert!(
            edit["newText"].as_str().is_some_and(|t| t.len() <= 4),
            "{edit}"
        );
    }
}

/// The plans the property below re-indents: Chinese and astral characters,
/// comments, `"""` strings, steps and parameters.
const PLANS: &[&str] = &[
    DEMO,
    include_str!("../../../examples/jd_keyboard.plan"),
    include_str!("../../../examples/research_report.plan"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_plan_re_indented_with_any_line_ends_is_formatted_by_its_edits(
        plan in 0..PLANS.len(),
        lines in proptest::collection::vec((0..9usize, any::<bool>()), 200),
    ) {
        let messy: String = PLANS[plan]
            .split_inclusive('\n')
            .zip(lines.iter().cycle())
            .map(|(line, &(indent, crlf))| {
                let body = line.trim_start_matches(' ').trim_end_matches('\n');
                let end = if !line.ends_with('\n') { "" } else if crlf { "\r\n" } else { "\n" };
                format!("{}{body}{end}", " ".repeat(indent))
            })
            .collect();
        prop_assume!(planc::fmt::format(&messy).is_ok());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            formatted_by_edits(&messy).await;
        });
    }
}
