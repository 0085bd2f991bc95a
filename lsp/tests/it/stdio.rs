//! The `planc-lsp` binary speaks the protocol over standard input and output.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn read_message(reader: &mut impl BufRead) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).expect("a header") > 0,
            "server closed"
        );
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().expect("a length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("a body");
    serde_json::from_slice(&body).expect("JSON")
}

#[test]
fn the_binary_initializes_publishes_diagnostics_and_exits() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_planc-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("planc-lsp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let uri = "file:///tmp/x.plan";
    let send = |stdin: &mut std::process::ChildStdin, message: Value| {
        stdin.write_all(&frame(&message)).expect("write");
        stdin.flush().expect("flush");
    };
    // A client waits for the answer to `initialize` before anything else.
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    );
    let initialized = read_message(&mut stdout);
    assert_eq!(initialized["result"]["serverInfo"]["name"], "planc-lsp");
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    );
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": uri, "languageId": "plan", "version": 1, "text": "plan p {\n    task a \"A\" { after b }\n}\n" } } }),
    );
    let published = read_message(&mut stdout);
    assert_eq!(published["method"], "textDocument/publishDiagnostics");
    let codes: Vec<&str> = published["params"]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["planc::missing_goal", "planc::unknown_ref"]);
    stdin
        .write_all(&frame(
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }),
        ))
        .expect("write");
    stdin.flush().expect("flush");
    assert_eq!(read_message(&mut stdout)["id"], 2);
    stdin
        .write_all(&frame(&json!({ "jsonrpc": "2.0", "method": "exit" })))
        .expect("write");
    drop(stdin);
    let status = child.wait().expect("planc-lsp exits");
    assert!(status.success());
}

#[test]
fn the_binary_prints_its_version_and_help() {
    let output = Command::new(env!("CARGO_BIN_EXE_planc-lsp"))
        .arg("--version")
        .output()
        .expect("planc-lsp runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("planc-lsp {}\n", env!("CARGO_PKG_VERSION"))
    );
    let output = Command::new(env!("CARGO_BIN_EXE_planc-lsp"))
        .arg("--help")
        .output()
        .expect("planc-lsp runs");
    assert!(String::from_utf8_lossy(&output.stdout).contains("Usage: planc lsp"));
}

#[test]
fn a_long_dependency_cycle_is_published_as_a_diagnostic() {
    // 25,000 tasks in one cycle: the walk that named it once overflowed
    // the stack and the server aborted on `didOpen` (#37).
    let text = planc::generate::hostile::long_cycle(25_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_planc-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("planc-lsp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |message: Value| {
        stdin.write_all(&frame(&message)).expect("write");
        stdin.flush().expect("flush");
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    );
    assert_eq!(read_message(&mut stdout)["id"], 1);
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    send(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": "file:///tmp/cyc.plan", "languageId": "plan", "version": 1, "text": text } } }),
    );
    let published = read_message(&mut stdout);
    assert_eq!(published["method"], "textDocument/publishDiagnostics");
    let codes: Vec<&str> = published["params"]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, ["planc::cycle"]);
    send(json!({ "jsonrpc": "2.0", "id": 2, "method": "shutdown" }));
    assert_eq!(read_message(&mut stdout)["id"], 2);
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    drop(stdin);
    let status = child.wait().expect("planc-lsp exits");
    assert!(status.success());
}
