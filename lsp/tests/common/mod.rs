//! A test client that speaks JSON-RPC, with Content-Length framing, to the
//! `planc-lsp` binary over its standard input and output.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The URI test documents are opened under.
pub const URI: &str = "file:///work/demo.plan";

/// How long any one answer may take before the test fails (the server hung
/// or died): a hang guard, generous because a 100,000-task file compiles in
/// a debug build on a busy machine before some answers.
const PATIENCE: Duration = Duration::from_secs(60);

/// A running server and the client end of its pipes.
pub struct TestClient {
    child: Child,
    /// `None` once closed.
    writer: Option<ChildStdin>,
    reader: BufReader<ChildStdout>,
    next_id: i64,
    /// Notifications read while waiting for something else.
    notifications: VecDeque<Value>,
}

impl TestClient {
    /// Starts a server and completes the `initialize` handshake.
    pub async fn start() -> TestClient {
        let mut client = TestClient::spawn();
        let result = client
            .request("initialize", json!({ "capabilities": {} }))
            .await;
        assert!(
            result.get("result").is_some(),
            "initialize failed: {result}"
        );
        client.notify("initialized", json!({})).await;
        client
    }

    /// Starts a server without initializing it.
    pub fn spawn() -> TestClient {
        let mut child = Command::new(env!("CARGO_BIN_EXE_planc-lsp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("planc-lsp starts");
        let writer = child.stdin.take().expect("a standard input");
        let reader = BufReader::new(child.stdout.take().expect("a standard output"));
        TestClient {
            child,
            writer: Some(writer),
            reader,
            next_id: 1,
            notifications: VecDeque::new(),
        }
    }

    /// Sends any message, framed.
    pub async fn send(&mut self, message: Value) {
        self.send_together(&[message]).await;
    }

    /// Sends messages in one write, so that they are all waiting to be read
    /// before the server reads the first.
    pub async fn send_together(&mut self, messages: &[Value]) {
        let mut frame = String::new();
        for message in messages {
            let body = message.to_string();
            frame.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        let writer = self.writer.as_mut().expect("standard input is open");
        writer
            .write_all(frame.as_bytes())
            .await
            .expect("the server reads");
        writer.flush().await.expect("the server reads");
    }

    /// Sends `body` framed with its `Content-Length`, as it is (it need not
    /// be JSON, nor UTF-8).
    pub async fn send_body(&mut self, body: &[u8]) {
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body);
        self.send_bytes(&frame).await;
    }

    /// Writes `bytes` to the server as they are, framing and all.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let writer = self.writer.as_mut().expect("standard input is open");
        writer.write_all(bytes).await.expect("the server reads");
        writer.flush().await.expect("the server reads");
    }

    /// Closes the server's standard input.
    pub fn close_input(&mut self) {
        self.writer = None;
    }

    /// The server's exit status, failing if it is still running after
    /// [`PATIENCE`].
    pub async fn exit_status(&mut self) -> ExitStatus {
        tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("the server's status")
    }

    /// Everything the server writes from now until it closes its output.
    pub async fn rest_of_output(&mut self) -> String {
        let mut rest = String::new();
        tokio::time::timeout(PATIENCE, self.reader.read_to_string(&mut rest))
            .await
            .expect("the server closes its output in time")
            .expect("the server's output");
        rest
    }

    /// The next message from the server, in the order it was sent (queued
    /// notifications first).
    pub async fn next_message(&mut self) -> Value {
        match self.notifications.pop_front() {
            Some(message) => message,
            None => self.receive().await,
        }
    }

    async fn receive(&mut self) -> Value {
        let body = self.receive_bytes().await;
        serde_json::from_slice::<Value>(&body).expect("JSON")
    }

    /// The body of the next message from the server, not parsed.
    async fn receive_bytes(&mut self) -> Vec<u8> {
        let read = async {
            let mut length = None;
            loop {
                let mut line = String::new();
                let n = self
                    .reader
                    .read_line(&mut line)
                    .await
                    .expect("a header line");
                assert!(n > 0, "the server closed the connection");
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = Some(value.parse::<usize>().expect("a length"));
                }
            }
            let mut body = vec![0; length.expect("a Content-Length header")];
            self.reader.read_exact(&mut body).await.expect("a body");
            body
        };
        tokio::time::timeout(PATIENCE, read)
            .await
            .expect("the server answers in time")
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params).await;
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push_back(message);
        }
    }

    /// Sends a request and returns the body of its response as read, not
    /// parsed (only its `id` and `method` are read, to tell it from the
    /// notifications before it, which are queued parsed): for benchmarks,
    /// which time the server, not the client's parse of a large answer.
    pub async fn request_unparsed(&mut self, method: &str, params: Value) -> Vec<u8> {
        #[derive(serde::Deserialize)]
        struct Head {
            id: Option<i64>,
            method: Option<serde::de::IgnoredAny>,
        }
        let id = self.start_request(method, params).await;
        loop {
            let body = self.receive_bytes().await;
            let head: Head = serde_json::from_slice(&body).expect("JSON");
            if head.id == Some(id) && head.method.is_none() {
                return body;
            }
            self.notifications
                .push_back(serde_json::from_slice(&body).expect("JSON"));
        }
    }

    /// Sends a request without waiting for its response; returns its id.
    pub async fn start_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// Sends a request and returns its `result`, failing on an error.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// The next `publishDiagnostics` for `uri` (earlier ones for it are skipped
    /// only if a later one is already queued).
    pub async fn diagnostics(&mut self) -> Value {
        loop {
            let message = match self.notifications.pop_front() {
                Some(message) => message,
                None => self.receive().await,
            };
            if message["method"] == "textDocument/publishDiagnostics" {
                return message["params"].clone();
            }
        }
    }

    /// Opens `text` as [`URI`] and returns the diagnostics published for it.
    pub async fn open(&mut self, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": URI, "languageId": "plan", "version": 1, "text": text } }),
        )
        .await;
        self.diagnostics().await
    }

    /// Sends `changes` (a list of `TextDocumentContentChangeEvent`s) to
    /// the document, as version `version`.
    pub async fn change(&mut self, version: i32, changes: Value) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": URI, "version": version },
                "contentChanges": changes,
            }),
        )
        .await;
    }

    /// Replaces `start..end` (line, UTF-16 column) with `text`, as version `version`.
    pub async fn edit(&mut self, version: i32, start: (u32, u32), end: (u32, u32), text: &str) {
        let changes = json!([{ "range": range(start, end), "text": text }]);
        self.change(version, changes).await;
    }

    /// Replaces the whole text, as version `version`.
    pub async fn replace_all(&mut self, version: i32, text: &str) {
        self.change(version, json!([{ "text": text }])).await;
    }

    /// The server's process id (for benchmarks that read its memory).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Opens `text` as `uri` and returns the diagnostics published for it.
    pub async fn open_as(&mut self, uri: &str, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "plan", "version": 1, "text": text } }),
        )
        .await;
        self.diagnostics().await
    }

    /// Replaces `start..end` (line, UTF-16 column) of the document `uri`
    /// with `text`, as version `version`.
    pub async fn edit_in(
        &mut self,
        uri: &str,
        version: i32,
        start: (u32, u32),
        end: (u32, u32),
        text: &str,
    ) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "range": range(start, end), "text": text }],
            }),
        )
        .await;
    }

    /// Drops the notifications queued so far.
    pub fn forget_notifications(&mut self) {
        self.notifications.clear();
    }
}

/// A protocol range from (line, column) pairs.
pub fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({
        "start": { "line": start.0, "character": start.1 },
        "end": { "line": end.0, "character": end.1 },
    })
}

/// Text-document-position parameters for [`URI`].
pub fn at(line: u32, character: u32) -> Value {
    json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": character } })
}

/// The (line, UTF-16 column) of a byte offset of `text` (moved back to a
/// char boundary).
pub fn position(text: &str, mut offset: usize) -> (u32, u32) {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..offset].matches('\n').count() as u32;
    let col: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    (line, col as u32)
}

/// The (line, UTF-16 column) of the first occurrence of `needle` in `text`,
/// plus `shift` characters.
pub fn find(text: &str, needle: &str, shift: u32) -> (u32, u32) {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is in the text"));
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..offset].matches('\n').count() as u32;
    let col: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    (line, col as u32 + shift)
}

/// The demo plan most tests use: Chinese text and an astral character before
/// names on the same line, so UTF-16 columns differ from byte and char columns.
pub const DEMO: &str = r#"# Release plan.
# Shared by the team.
plan release {
    title "发布 𝄞 {version}"
    goal "Ship version {version}"
    param version: string = "1.0"
    role dev "Writes code"
    role qa
    step build "构建" {
        sequential
        task compile "编译 𝄞" { assignee dev }
        task test "测试" { assignee qa }
    }
    task publish "Publish {version}" {
        after build
        assignee dev
        description """
            Push the tag.
        """
    }
}
"#;
