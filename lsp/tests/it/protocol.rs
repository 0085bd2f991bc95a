//! One test per language-server feature, over the real protocol: JSON-RPC
//! with Content-Length framing to an in-process server.

use crate::common::{at, find, range, TestClient, DEMO, URI};
use serde_json::{json, Value};

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON prints")
}

#[tokio::test]
async fn initialize_announces_every_feature() {
    let mut client = TestClient::spawn();
    let result = client
        .result("initialize", json!({ "capabilities": {} }))
        .await;
    insta::assert_snapshot!("initialize", pretty(&result));
}

#[tokio::test]
async fn diagnostics_on_open_have_codes_severities_and_related_locations() {
    let mut client = TestClient::start().await;
    let broken = DEMO
        .replace("assignee qa", "assignee qs")
        .replace("after build", "after biuld, publish")
        .replace("role qa", "role qa\n    role dev");
    let published = client.open(&broken).await;
    insta::assert_snapshot!("diagnostics_open", pretty(&published));
}

#[tokio::test]
async fn a_syntax_error_reads_as_on_the_command_line() {
    let mut client = TestClient::start().await;
    let published = client
        .open("plan p {\n    goal \"g\"\n    param n int = 3\n}\n")
        .await;
    let first = &published["diagnostics"][0];
    assert_eq!(first["code"], "planc::syntax");
    assert_eq!(first["range"], range((2, 12), (2, 15)));
    assert_eq!(
        first["message"],
        "expected `:` and a type after the parameter's name `n`, found `int`\n\
         expected a type annotation `: TYPE`\n\
         help: write the type after a `:`, as in `param n: int = 3`; the types are `string`, `int`, `float` and `bool`"
    );
}

#[tokio::test]
async fn diagnostics_follow_incremental_changes() {
    let mut client = TestClient::start().await;
    let published = client.open(DEMO).await;
    assert_eq!(published["diagnostics"], json!([]));
    // Type a typo into `assignee dev` of `publish`: `dev` → `deev`.
    let (line, col) = find(DEMO, "assignee dev\n        description", 10);
    client.edit(2, (line, col), (line, col), "e").await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 2);
    assert_eq!(
        published["diagnostics"],
        json!([{
            "range": range((line, col - 1), (line, col + 3)),
            "severity": 1,
            "code": "planc::unknown_role",
            "source": "planc",
            "message": "no role named `deev`\ndid you mean `dev`?\nhelp: declare it in the plan: `role deev \"what this role does\"`",
        }])
    );
    // Undo it: the diagnostics clear.
    client.edit(3, (line, col), (line, col + 1), "").await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 3);
    assert_eq!(published["diagnostics"], json!([]));
}

#[tokio::test]
async fn quick_changes_end_with_the_diagnostics_of_the_last_text() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    // Type `qs` over `qa` in `assignee qa` one keystroke at a time, without
    // waiting: the last diagnostics published are those of the last text.
    let (line, col) = find(DEMO, "assignee qa", 9);
    client.edit(2, (line, col), (line, col + 2), "").await;
    client.edit(3, (line, col), (line, col), "q").await;
    client.edit(4, (line, col + 1), (line, col + 1), "s").await;
    let published = loop {
        let published = client.diagnostics().await;
        if published["version"] == 4 {
            break published;
        }
        assert!(published["version"].as_i64() < Some(4), "{published}");
    };
    let codes: Vec<&str> = published["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["planc::unused", "planc::unknown_role"]);
    let hover = client.result("textDocument/hover", at(line, col + 1)).await;
    assert_eq!(hover, Value::Null, "`qs` names no role");
}

#[tokio::test]
async fn positions_count_utf16_units_after_chinese_and_astral_characters() {
    let mut client = TestClient::start().await;
    // `{verson}` follows "发布 𝄞 " on line 3: 4 spaces, `title "`, 2 CJK
    // characters (1 unit each), a space, 𝄞 (2 units), a space, `{`.
    let text = DEMO.replace("发布 𝄞 {version}", "发布 𝄞 {verson}");
    let published = client.open(&text).await;
    let diagnostic = &published["diagnostics"][0];
    assert_eq!(diagnostic["code"], "planc::unknown_param");
    assert_eq!(diagnostic["range"], range((3, 18), (3, 24)));
    // And back: a rename at that UTF-16 position finds the name.
    let hover = client.result("textDocument/hover", at(10, 41)).await;
    assert_eq!(
        hover["range"],
        range((10, 40), (10, 43)),
        "`dev` after 编译 𝄞"
    );
}

#[tokio::test]
async fn hover_shows_a_task_with_its_step_assignee_dependencies_and_dependents() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let (line, col) = find(DEMO, "test \"测试\"", 1);
    let hover = client.result("textDocument/hover", at(line, col)).await;
    assert_eq!(
        hover,
        json!({
            "contents": {
                "kind": "markdown",
                "value": "**task** `test` in step `build`\n\n测试\n\n- assignee: `qa`\n- after: `compile`\n- before: `publish`\n",
            },
            "range": range((line, col - 1), (line, col + 3)),
        })
    );
    let (line, col) = find(DEMO, "{version}\" {", 2);
    let hover = client.result("textDocument/hover", at(line, col)).await;
    assert_eq!(
        hover["contents"]["value"],
        "**parameter** `version`\n\n```plan\nparam version: string = \"1.0\"\n```\n\n- value: `1.0`\n"
    );
    let nothing = client.result("textDocument/hover", at(0, 3)).await;
    assert_eq!(nothing, Value::Null);
}

#[tokio::test]
async fn definition_jumps_from_a_reference_to_its_declaration() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let (line, col) = find(DEMO, "build\n        assignee", 2);
    let definition = client
        .result("textDocument/definition", at(line, col))
        .await;
    assert_eq!(
        definition,
        json!({ "uri": URI, "range": range((8, 9), (8, 14)) })
    );
}

#[tokio::test]
async fn references_list_declaration_and_uses() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let params = |include: bool| {
        let mut p = at(6, 10);
        p["context"] = json!({ "includeDeclaration": include });
        p
    };
    let references = client.result("textDocument/references", params(true)).await;
    assert_eq!(
        references,
        json!([
            { "uri": URI, "range": range((6, 9), (6, 12)) },
            { "uri": URI, "range": range((10, 40), (10, 43)) },
            { "uri": URI, "range": range((15, 17), (15, 20)) },
        ])
    );
    let uses = client
        .result("textDocument/references", params(false))
        .await;
    assert_eq!(uses.as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn rename_edits_every_use_and_refuses_clashes_and_keywords() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let prepared = client
        .result("textDocument/prepareRename", at(15, 18))
        .await;
    assert_eq!(
        prepared,
        json!({ "range": range((15, 17), (15, 20)), "placeholder": "dev" })
    );
    let mut params = at(15, 18);
    params["newName"] = json!("开发");
    let edit = client.result("textDocument/rename", params.clone()).await;
    assert_eq!(
        edit,
        json!({ "changes": { URI: [
            { "range": range((6, 9), (6, 12)), "newText": "开发" },
            { "range": range((10, 40), (10, 43)), "newText": "开发" },
            { "range": range((15, 17), (15, 20)), "newText": "开发" },
        ] } })
    );
    params["newName"] = json!("qa");
    let refused = client.request("textDocument/rename", params.clone()).await;
    assert_eq!(
        refused["error"],
        json!({ "code": -32602, "message": "a role named `qa` already exists" })
    );
    params["newName"] = json!("assignee");
    let refused = client.request("textDocument/rename", params.clone()).await;
    assert_eq!(
        refused["error"]["message"],
        "`assignee` is a keyword and cannot be used as a name"
    );
    params["newName"] = json!("two words");
    let refused = client.request("textDocument/rename", params).await;
    assert!(refused["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("`two words` is not a name")));
}

#[tokio::test]
async fn a_plan_of_many_names_answers_a_cut_list_marked_incomplete() {
    let mut text = String::from("plan p {\n    step s {\n");
    for i in 0..1200 {
        text.push_str(&format!("        task t{i} \"t\"\n"));
    }
    text.push_str("        task last \"l\" {\n            after t11\n        }\n    }\n}\n");
    let mut client = TestClient::start().await;
    client.open(&text).await;
    let (line, col) = find(&text, "after t11", 9);
    let answer = client
        .result("textDocument/completion", at(line, col))
        .await;
    assert_eq!(answer["isIncomplete"], true, "{answer}");
    let labels: Vec<&str> = answer["items"]
        .as_array()
        .expect("a completion list")
        .iter()
        .filter_map(|item| item["label"].as_str())
        .collect();
    // The names whose letters hold `t11` in order (t11, t101, t110 …), in
    // the plan's order, never more than the cap.
    assert!(labels.len() <= 1000, "{}", labels.len());
    assert_eq!(labels[..3], ["t11", "t101", "t110"]);
    assert!(labels.iter().all(|l| l.starts_with('t') && l.contains('1')));
    assert!(!labels.contains(&"t25"));
}

#[tokio::test]
async fn completion_offers_names_roles_params_and_keywords_by_context() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let labels = |response: &Value| -> Vec<String> {
        response
            .as_array()
            .expect("a list of items")
            .iter()
            .map(|item| item["label"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    // After `after build, ` in `publish`.
    let (line, col) = find(DEMO, "after build", 11);
    client.edit(2, (line, col), (line, col), ", te").await;
    let items = client
        .result("textDocument/completion", at(line, col + 4))
        .await;
    assert_eq!(labels(&items), ["build", "compile", "test"]);
    assert_eq!(
        items[2],
        json!({
            "label": "test",
            "kind": 3,
            "detail": "task",
            "textEdit": { "range": range((line, col + 2), (line, col + 4)), "newText": "test" },
        })
    );
    // Roles after `assignee`.
    let (line, col) = find(DEMO, "assignee dev\n        description", 9);
    let items = client
        .result("textDocument/completion", at(line, col))
        .await;
    assert_eq!(labels(&items), ["dev", "qa"]);
    // Parameters inside `{` in a string.
    let (line, col) = find(DEMO, "Publish {version}", 9);
    let items = client
        .result("textDocument/completion", at(line, col + 2))
        .await;
    assert_eq!(labels(&items), ["version"]);
    // Keywords of a task body, on a new line in `publish`.
    let (line, _) = find(DEMO, "        description \"\"\"", 0);
    client.edit(3, (line, 0), (line, 0), "        \n").await;
    let items = client.result("textDocument/completion", at(line, 8)).await;
    assert_eq!(
        labels(&items),
        [
            "after",
            "assignee",
            "reasoning",
            "description",
            "retry",
            "optional",
            "priority"
        ]
    );
}

#[tokio::test]
async fn document_symbols_outline_plan_steps_and_tasks() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let symbols = client
        .result(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    insta::assert_snapshot!("document_symbols", pretty(&symbols));
}

#[tokio::test]
async fn semantic_tokens_classify_every_token() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let tokens = client
        .result(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    // Decode the delta encoding so the snapshot reads as the file does.
    let types = [
        "keyword",
        "comment",
        "string",
        "number",
        "type",
        "namespace",
        "macro",
        "parameter",
        "class",
        "struct",
        "function",
    ];
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let lines: Vec<&str> = DEMO.lines().collect();
    let (mut line, mut col) = (0u64, 0u64);
    let mut decoded = String::new();
    for token in data.chunks(5) {
        if token[0] > 0 {
            line += token[0];
            col = token[1];
        } else {
            col += token[1];
        }
        let units: Vec<u16> = lines[line as usize].encode_utf16().collect();
        let text = String::from_utf16_lossy(&units[col as usize..(col + token[2]) as usize]);
        let modifier = if token[4] == 1 { " (declaration)" } else { "" };
        decoded.push_str(&format!(
            "{line}:{col} {}{modifier} {text}\n",
            types[token[3] as usize]
        ));
    }
    insta::assert_snapshot!("semantic_tokens", decoded);
}

#[tokio::test]
async fn semantic_tokens_of_a_range_are_the_whole_files_on_those_lines() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let uri = json!({ "uri": URI });
    // Each token as (line, column, length, type, modifiers).
    let decode = |tokens: &Value| -> Vec<[u64; 5]> {
        let data: Vec<u64> = tokens["data"]
            .as_array()
            .expect("data")
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        let (mut line, mut col) = (0, 0);
        data.chunks(5)
            .map(|t| {
                (line, col) = if t[0] > 0 {
                    (line + t[0], t[1])
                } else {
                    (line, col + t[1])
                };
                [line, col, t[2], t[3], t[4]]
            })
            .collect()
    };
    let full = client
        .result(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": uri }),
        )
        .await;
    let lines = DEMO.lines().count() as u32;
    for (from, to) in [
        (0, 3),
        (4, 9),
        (lines / 2, lines / 2 + 2),
        (lines - 3, lines),
    ] {
        let range = client
            .result(
                "textDocument/semanticTokens/range",
                json!({ "textDocument": uri, "range": range((from, 0), (to, 0)) }),
            )
            .await;
        let on_lines = |tokens: &[[u64; 5]]| -> Vec<[u64; 5]> {
            let lines = u64::from(from)..u64::from(to);
            tokens
                .iter()
                .filter(|t| lines.contains(&t[0]))
                .copied()
                .collect()
        };
        let (full, got) = (decode(&full), decode(&range));
        assert!(!on_lines(&full).is_empty(), "lines {from}..{to}");
        assert_eq!(on_lines(&got), on_lines(&full), "lines {from}..{to}");
        // A run of the whole file's: a string of many lines that the range
        // cuts comes whole, as the protocol allows.
        assert!(
            full.windows(got.len()).any(|w| w == got.as_slice()),
            "lines {from}..{to}: {got:?}"
        );
    }
}

/// The numbers of a semantic tokens answer (`data`), or of `previous`
/// with a delta answer's edits applied (`edits`, each on the numbers as
/// they were, applied from the last).
fn tokens_after(previous: &[u64], answer: &Value) -> Vec<u64> {
    let numbers = |data: &Value| -> Vec<u64> {
        data.as_array()
            .map(|d| d.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default()
    };
    if answer.get("data").is_some() {
        return numbers(&answer["data"]);
    }
    let mut tokens = previous.to_vec();
    let mut edits: Vec<&Value> = answer["edits"].as_array().expect("edits").iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e["start"].as_u64()));
    for edit in edits {
        let start = edit["start"].as_u64().expect("start") as usize;
        let deleted = edit["deleteCount"].as_u64().expect("deleteCount") as usize;
        tokens.splice(start..start + deleted, numbers(&edit["data"]));
    }
    tokens
}

/// A `semanticTokens/full` answer for the demo document.
async fn full_tokens(client: &mut TestClient) -> Value {
    client
        .result(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await
}

#[tokio::test]
async fn semantic_tokens_delta_applied_to_the_last_answer_gives_a_fresh_full_answer() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let document = json!({ "uri": URI });
    let mut last = full_tokens(&mut client).await;
    let mut numbers = tokens_after(&[], &last);
    // Unchanged: nothing to change.
    let delta = client
        .result(
            "textDocument/semanticTokens/full/delta",
            json!({ "textDocument": document, "previousResultId": last["resultId"] }),
        )
        .await;
    assert_eq!(delta["edits"], json!([]), "{delta}");
    assert_ne!(delta["resultId"], last["resultId"]);
    last = delta;
    // A rename that leaves a reference dangling, and taken back; a line
    // added and removed; a letter in a string of wide characters; a task
    // typed and its name referred to.
    let (line, col) = find(DEMO, "step build", "step build".len() as u32);
    let (task, _) = find(DEMO, "        task test", 0);
    let (wide, wide_col) = find(DEMO, "编译", 1);
    let edits = [
        ((line, col), (line, col), "s"),
        ((line, col), (line, col + 1), ""),
        (
            (task, 0),
            (task, 0),
            "        task extra \"Extra\" { after compile }\n",
        ),
        ((wide, wide_col), (wide, wide_col), "x"),
        ((task, 0), (task + 1, 0), ""),
        ((wide, wide_col), (wide, wide_col + 1), ""),
    ];
    for (version, (start, end, text)) in (2..).zip(edits) {
        client.edit(version, start, end, text).await;
        let delta = client
            .result(
                "textDocument/semanticTokens/full/delta",
                json!({ "textDocument": document, "previousResultId": last["resultId"] }),
            )
            .await;
        assert!(delta.get("edits").is_some(), "{delta}");
        let applied = tokens_after(&numbers, &delta);
        let fresh = full_tokens(&mut client).await;
        assert_eq!(
            applied,
            tokens_after(&[], &fresh),
            "after edit {version}: {delta}"
        );
        numbers = applied;
        last = fresh;
    }
    // An id that is not the last answer's: the tokens whole.
    let whole = client
        .result(
            "textDocument/semanticTokens/full/delta",
            json!({ "textDocument": document, "previousResultId": "not-an-id" }),
        )
        .await;
    assert_eq!(tokens_after(&[], &whole), numbers, "{whole}");
}

#[tokio::test]
async fn folding_ranges_cover_bodies_strings_and_comment_blocks() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    let folds = client
        .result(
            "textDocument/foldingRange",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    assert_eq!(
        folds,
        json!([
            { "startLine": 0, "endLine": 1, "kind": "comment" },
            { "startLine": 2, "endLine": 19 },
            { "startLine": 8, "endLine": 11 },
            { "startLine": 13, "endLine": 18 },
            { "startLine": 16, "endLine": 18 },
        ])
    );
}

#[tokio::test]
async fn formatting_matches_planc_fmt() {
    let mut client = TestClient::start().await;
    let messy = "plan p {goal \"g\"\ntask a \"A\" {after b}\ntask b \"B\"}\n";
    client.open(messy).await;
    let edits = client
        .result(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": URI }, "options": { "tabSize": 4, "insertSpaces": true } }),
        )
        .await;
    // Formatted: "plan p {\n    goal \"g\"\n    task a \"A\" { after b }\n    task b \"B\"\n}\n",
    // by edits of what changes only (tests/it/formatting.rs has more).
    assert_eq!(
        edits,
        json!([
            { "range": range((0, 8), (0, 8)), "newText": "\n    " },
            { "range": range((1, 0), (1, 0)), "newText": "    " },
            { "range": range((1, 12), (1, 12)), "newText": " " },
            { "range": range((1, 19), (1, 19)), "newText": " " },
            { "range": range((2, 0), (2, 0)), "newText": "    " },
            { "range": range((2, 10), (2, 10)), "newText": "\n" },
        ])
    );
}

#[tokio::test]
async fn code_action_applies_the_did_you_mean_fix() {
    let mut client = TestClient::start().await;
    let text = DEMO.replace("after build", "after buld");
    let published = client.open(&text).await;
    let diagnostic = published["diagnostics"][0].clone();
    let (line, col) = find(&text, "buld", 0);
    let actions = client
        .result(
            "textDocument/codeAction",
            json!({
                "textDocument": { "uri": URI },
                "range": range((line, col + 1), (line, col + 1)),
                "context": { "diagnostics": [diagnostic.clone()] },
            }),
        )
        .await;
    assert_eq!(
        actions,
        json!([{
            "title": "Change `buld` to `build`",
            "kind": "quickfix",
            "diagnostics": [diagnostic],
            "edit": { "changes": { URI: [
                { "range": range((line, col), (line, col + 4)), "newText": "build" }
            ] } },
            "isPreferred": true,
        }])
    );
}

#[tokio::test]
async fn closing_a_document_clears_its_diagnostics() {
    let mut client = TestClient::start().await;
    client.open("plan p {}").await;
    client
        .notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    let published = client.diagnostics().await;
    assert_eq!(published, json!({ "uri": URI, "diagnostics": [] }));
    let hover = client.result("textDocument/hover", at(0, 6)).await;
    assert_eq!(hover, Value::Null);
}

#[tokio::test]
async fn definitions_and_diagnostics_reach_into_imported_files() {
    let dir = std::env::temp_dir().join(format!("planc-lsp-imports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("lib.plan"),
        "role writer \"Writes\"\ntemplate t() {\n    task a \"A\" { assignee writr }\n}\n",
    )
    .expect("write");
    let plan = "import \"lib.plan\"\nplan p {\n    goal \"g\"\n    task b \"B\" { assignee writer }\n    use t() as one\n}\n";
    let path = dir.join("p.plan");
    let uri = format!("file://{}", path.display());
    let lib_uri = format!("file://{}", dir.join("lib.plan").display());
    let mut client = TestClient::start().await;
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "plan", "version": 1, "text": plan } }),
        )
        .await;
    let published = client.diagnostics().await;
    // The unknown role is inside lib.plan: shown at the import, saying where.
    assert_eq!(published["uri"], json!(uri));
    let diagnostic = &published["diagnostics"][0];
    assert_eq!(diagnostic["range"], range((0, 0), (0, 17)));
    let message = diagnostic["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with(&format!(
            "{}:3: no role named `writr`",
            dir.join("lib.plan").display()
        )),
        "{message}"
    );
    assert_eq!(
        diagnostic["relatedInformation"][0]["location"]["uri"],
        json!(lib_uri)
    );

    let (line, col) = find(plan, "writer", 1);
    let location = client
        .result(
            "textDocument/definition",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": col } }),
        )
        .await;
    assert_eq!(
        location,
        json!({ "uri": lib_uri, "range": range((0, 5), (0, 11)) })
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn large_texts_opened_replaced_and_pasted_are_the_documents_texts() {
    // Texts of 64 KiB or more pass beside tower-lsp-server's reader
    // (`large_texts`): each one here must be the document's text, as the
    // diagnostics' places show.
    let plan = planc::generate::plan_source(1000, false);
    assert!(plan.len() >= 64 * 1024, "{} bytes", plan.len());
    let wrong = |text: &str, task: &str| {
        let at = text.find(&format!("task {task} ")).expect("the task");
        let assignee = at + text[at..].find("assignee r").expect("an assignee");
        format!(
            "{}assignee nobody{}",
            &text[..assignee],
            &text[assignee + "assignee r0".len()..]
        )
    };
    let only_nobody = |published: &Value, text: &str, version: i32| {
        assert_eq!(published["version"], version);
        let diagnostics = published["diagnostics"].as_array().expect("a list");
        assert_eq!(diagnostics.len(), 1, "{published}");
        let (line, character) = find(text, "nobody", 0);
        assert_eq!(
            diagnostics[0]["range"]["start"],
            json!({ "line": line, "character": character }),
            "{published}"
        );
        assert!(
            diagnostics[0]["message"]
                .as_str()
                .is_some_and(|m| m.contains("nobody")),
            "{published}"
        );
    };
    let mut client = TestClient::start().await;
    let opened = wrong(&plan, "t999");
    let published = client.open(&opened).await;
    only_nobody(&published, &opened, 1);
    // Replaced whole, by another large text.
    let replaced = wrong(&plan, "t3");
    client.replace_all(2, &replaced).await;
    only_nobody(&client.diagnostics().await, &replaced, 2);
    // A large paste at its start: the mistake moves down as many lines.
    let comments = "# A line of comment pasted in, to move the rest down.\n".repeat(1500);
    assert!(comments.len() >= 64 * 1024, "{} bytes", comments.len());
    client.edit(3, (0, 0), (0, 0), &comments).await;
    let pasted = format!("{comments}{replaced}");
    only_nobody(&client.diagnostics().await, &pasted, 3);
    // A small edit to it: the server holds the large texts, not stand-ins.
    let start = find(&pasted, "nobody", 0);
    client
        .edit(4, start, (start.0, start.1 + "nobody".len() as u32), "r1")
        .await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 4);
    assert_eq!(published["diagnostics"], json!([]), "{published}");
}

#[tokio::test]
async fn the_server_keeps_its_memory_in_small_pages() {
    // Transparent huge pages made mimalloc give memory back only in whole
    // 2 MiB ranges (`memory::small_pages_only`, docs/performance.md, "The
    // server's memory beyond what it holds"): the server turns them off
    // for itself, unless `MIMALLOC_ALLOW_THP` is set.
    let mut client = TestClient::start().await;
    client.open("plan p { goal \"g\" }\n").await;
    let pid = client.pid().expect("the server runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    // A kernel that does not show the flag leaves nothing to check.
    if let Some(line) = status.lines().find(|l| l.starts_with("THP_enabled:")) {
        assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    }
}
