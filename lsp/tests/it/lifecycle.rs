//! `shutdown` and `exit` as clients send them, over the binary's standard
//! streams: `shutdown` with `"params": null` or none at all, and `exit` from
//! clients that keep standard input open or send more after it.

use crate::common::{self, TestClient, DEMO};
use serde_json::{json, Value};

/// A `shutdown` request with id 2, with `params` as given (or none).
fn shutdown(params: Option<Value>) -> Value {
    let mut request = json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" });
    if let Some(params) = params {
        request["params"] = params;
    }
    request
}

fn exit() -> Value {
    json!({ "jsonrpc": "2.0", "method": "exit" })
}

/// Sends `shutdown` and returns the response.
async fn shut_down(client: &mut TestClient, params: Option<Value>) -> Value {
    client.send(shutdown(params)).await;
    loop {
        let message = client.next_message().await;
        if message.get("id").is_some() {
            return message;
        }
    }
}

#[tokio::test]
async fn shutdown_with_null_params_is_answered_with_a_null_result() {
    // Emacs Eglot, IntelliJ's LSP4IJ and Vim's lsp send `"params": null`.
    let mut client = TestClient::start().await;
    let response = shut_down(&mut client, Some(Value::Null)).await;
    assert_eq!(
        response,
        json!({ "jsonrpc": "2.0", "id": 2, "result": null })
    );
}

#[tokio::test]
async fn shutdown_without_params_is_answered_with_a_null_result() {
    let mut client = TestClient::start().await;
    let response = shut_down(&mut client, None).await;
    assert_eq!(
        response,
        json!({ "jsonrpc": "2.0", "id": 2, "result": null })
    );
}

#[tokio::test]
async fn exit_after_shutdown_ends_the_server_with_0_while_input_stays_open() {
    let mut client = TestClient::start().await;
    client.open(DEMO).await;
    shut_down(&mut client, Some(Value::Null)).await;
    client.send(exit()).await;
    // Standard input stays open: the client never closes it.
    assert_eq!(client.exit_status().await.code(), Some(0));
    assert_eq!(client.rest_of_output().await, "");
}

#[tokio::test]
async fn exit_without_shutdown_ends_the_server_with_1() {
    let mut client = TestClient::start().await;
    client.send(exit()).await;
    assert_eq!(client.exit_status().await.code(), Some(1));
}

#[tokio::test]
async fn messages_after_exit_are_not_read_and_do_not_hold_the_server() {
    for (shutdown_first, code) in [(true, 0), (false, 1)] {
        let mut client = TestClient::start().await;
        client.open(DEMO).await;
        if shutdown_first {
            shut_down(&mut client, None).await;
        }
        // All in the pipe before the server reads `exit`.
        client
            .send_together(&[
                exit(),
                json!({ "jsonrpc": "2.0", "id": 7, "method": "textDocument/hover",
                    "params": common::at(10, 41) }),
                json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                    "textDocument": { "uri": common::URI, "version": 2 },
                    "contentChanges": [{ "text": "plan p {}" }] } }),
                exit(),
            ])
            .await;
        assert_eq!(client.exit_status().await.code(), Some(code));
        // Nothing answers the hover or publishes for the change.
        assert_eq!(client.rest_of_output().await, "");
    }
}

#[tokio::test]
async fn closing_input_ends_the_server_with_0_after_shutdown_and_1_without() {
    let mut client = TestClient::start().await;
    shut_down(&mut client, None).await;
    client.close_input();
    assert_eq!(client.exit_status().await.code(), Some(0));

    let mut client = TestClient::start().await;
    client.close_input();
    assert_eq!(client.exit_status().await.code(), Some(1));
}

#[tokio::test]
async fn shutdown_and_exit_do_not_wait_for_a_compile_under_way() {
    let mut client = TestClient::start().await;
    let large = planc::generate::plan_source(100_000, false);
    client
        .notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": "file:///work/large.plan", "languageId": "plan",
                "version": 1, "text": large } }),
        )
        .await;
    // The first message is the answer to `shutdown`: the large file's
    // diagnostics are not ready yet.
    client.send(shutdown(None)).await;
    let answer = client.next_message().await;
    assert_eq!(answer, json!({ "jsonrpc": "2.0", "id": 2, "result": null }));
    client.send(exit()).await;
    assert_eq!(client.exit_status().await.code(), Some(0));
    // Nothing more is written, not even when the compile would have ended.
    assert_eq!(client.rest_of_output().await, "");
}
