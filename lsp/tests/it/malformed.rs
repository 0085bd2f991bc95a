//! A malformed message is answered with a JSON-RPC error and the session
//! goes on; only broken framing ends it.

use crate::common::{find, TestClient, DEMO, URI};
use serde_json::{json, Value};

/// A hover on `compile` in [`DEMO`]: the server still answers.
async fn assert_still_answers(client: &mut TestClient) {
    let (line, col) = find(DEMO, "compile", 2);
    let hover = client
        .result(
            "textDocument/hover",
            json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": col } }),
        )
        .await;
    assert!(hover["contents"].is_object(), "a hover: {hover}");
}

fn error(code: i64, message: &str, id: Value) -> Value {
    json!({ "jsonrpc": "2.0", "error": { "code": code, "message": message }, "id": id })
}

#[tokio::test]
async fn each_malformed_message_is_answered_and_the_session_goes_on() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{}{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let cases: Vec<(&str, Vec<u8>, Option<Value>)> = vec![
        (
            "a JSON string",
            br#""hello""#.to_vec(),
            Some(error(
                -32600,
                "Invalid Request: a message is a JSON object",
                Value::Null,
            )),
        ),
        (
            "a batch",
            br#"[{"jsonrpc":"2.0","id":7,"method":"shutdown"}]"#.to_vec(),
            Some(error(
                -32600,
                "Invalid Request: a batch (an array of messages) is not supported",
                Value::Null,
            )),
        ),
        (
            "an object id",
            br#"{"jsonrpc":"2.0","id":{"n":1},"method":"textDocument/hover","params":{}}"#.to_vec(),
            Some(error(
                -32600,
                "Invalid Request: the id is not a number, a string or null",
                Value::Null,
            )),
        ),
        (
            "10,000-deep nesting",
            deep.into_bytes(),
            Some(error(
                -32600,
                "Invalid Request: arrays and objects nest more than 100 deep",
                json!(8),
            )),
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"textDocument/hover\",\"params\":\"\xff\"}"
                .to_vec(),
            Some(error(
                -32700,
                "Parse error: the message is not valid UTF-8",
                Value::Null,
            )),
        ),
        (
            "cut-off JSON",
            br#"{"jsonrpc":"2.0","id":10,"#.to_vec(),
            Some(error(
                -32700,
                "Parse error: EOF while parsing a value at line 1 column 25",
                Value::Null,
            )),
        ),
        (
            "JSON-RPC 1.0",
            br#"{"jsonrpc":"1.0","id":11,"method":"textDocument/hover"}"#.to_vec(),
            Some(error(
                -32600,
                "Invalid Request: not a JSON-RPC 2.0 request, notification or response \
                 (expected JSON-RPC version \"2.0\")",
                json!(11),
            )),
        ),
        (
            "a notification with malformed params (a notification gets no answer)",
            br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":5}}"#
                .to_vec(),
            None,
        ),
    ];
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    for (kind, body, answer) in cases {
        client.send_body(&body).await;
        if let Some(answer) = answer {
            assert_eq!(client.next_message().await, answer, "{kind}");
        }
        assert_still_answers(&mut client).await;
    }
    // A request with malformed params is tower-lsp-server's to answer.
    let bad_params = client
        .request("textDocument/hover", json!({ "textDocument": 5 }))
        .await;
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    // Diagnostics are still published.
    client
        .replace_all(2, "plan p {\n    task a \"A\" { after b }\n}\n")
        .await;
    let codes: Vec<Value> = client.diagnostics().await["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].clone())
        .collect();
    assert_eq!(
        codes,
        [json!("planc::missing_goal"), json!("planc::unknown_ref")]
    );
}

/// JavaScript's `JSON.stringify` writes a lone surrogate as `"\udbff"`,
/// which serde_json refuses: it is read as U+FFFD, one UTF-16 unit as well,
/// so the client's columns stay right.
#[tokio::test]
async fn a_lone_surrogate_is_read_as_a_replacement_character() {
    let mut client = TestClient::start().await;
    let text =
        r#"plan p {\n    goal \"g\"\n    task a \"A \udbff \udc00 \ud834\udd1e\" { after b }\n}\n"#;
    let open = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{URI}","languageId":"plan","version":1,"text":"{text}"}}}}}}"#
    );
    client.send_body(open.as_bytes()).await;
    let diagnostics = client.diagnostics().await;
    let unknown = &diagnostics["diagnostics"][0];
    assert_eq!(unknown["code"], "planc::unknown_ref", "{diagnostics}");
    // `    task a "A ? ? 𝄞" { after ` is 30 UTF-16 units, as the client counts.
    assert_eq!(
        unknown["range"]["start"],
        json!({ "line": 2, "character": 30 })
    );
    let symbols = client
        .result(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    let task = &symbols[0]["children"][0];
    assert_eq!(task["detail"], "A \u{fffd} \u{fffd} 𝄞", "{symbols}");
}

/// Broken framing ends the session: the error is answered, and the server
/// exits with 1 (no `shutdown` came first), the way it does when the
/// input ends.
#[tokio::test]
async fn broken_framing_ends_the_session_with_exit_code_1() {
    let cases: [(&[u8], &str); 3] = [
        (
            b"Content-Length: many\r\n\r\n{}",
            "Content-Length \"many\" is not a length",
        ),
        (
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
            "a message without a Content-Length header",
        ),
        // Over the 256 MiB a body may have: read past, not kept, so memory
        // does not follow a length the client does not send.
        (
            b"Content-Length: 999999999999\r\n\r\n{\"a\"",
            "the input ended 4 bytes into a 999999999999-byte body",
        ),
    ];
    for (bytes, why) in cases {
        let mut client = TestClient::start().await;
        client.send_bytes(bytes).await;
        if why.starts_with("the input ended") {
            client.close_input();
        }
        let message = format!("Parse error: broken framing ({why}); planc-lsp stops");
        assert_eq!(
            client.next_message().await,
            error(-32700, &message, Value::Null)
        );
        assert_eq!(client.exit_status().await.code(), Some(1));
    }
}
