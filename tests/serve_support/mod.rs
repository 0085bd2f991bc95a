//! Starting the real `planc serve` on a free port, and a small HTTP/1.1
//! client over `std::net` (with chunked decoding, for SSE).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// A running `planc serve`.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// What it wrote to standard error so far.
    pub stderr: Arc<Mutex<String>>,
    /// The thread that reads standard error: it ends once the server has.
    reader: Option<std::thread::JoinHandle<()>>,
}

/// The repository's path of `path`.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The store of a test directory: a SQLite file (`planc serve`'s default
/// kind), or with `PLANC_TEST_STORE=dir` a directory of JSON states.
pub fn store_url(dir: &Path) -> String {
    match std::env::var("PLANC_TEST_STORE").as_deref() {
        Ok("dir") => format!("dir:{}", dir.join("plans").display()),
        _ => format!("sqlite:{}", dir.join("plans.db").display()),
    }
}

impl Server {
    /// Starts `planc serve --listen 127.0.0.1:0 ARGS…` and waits until it listens.
    pub fn start(args: &[&str]) -> Server {
        Server::start_in(Command::new(env!("CARGO_BIN_EXE_planc")), args)
    }

    /// Starts `COMMAND serve --listen 127.0.0.1:0 ARGS…` (`COMMAND` runs
    /// planc, in a wrapper of the test's choice) and waits until it listens.
    pub fn start_in(mut command: Command, args: &[&str]) -> Server {
        let mut child = command
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("PLANC_TOKEN")
            .env_remove("PLANC_STORE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("planc serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let seen = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let log = Arc::clone(&seen);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                    let _ = tx.send(addr);
                }
                log.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_str(&format!("{line}\n"));
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("planc serve did not start:\n{}", seen.lock().unwrap());
            }
        };
        Server {
            child,
            addr,
            stderr: seen,
            reader: Some(reader),
        }
    }

    /// One request.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Response {
        request(&self.addr, method, path, headers, body)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], b"")
    }

    pub fn post(&self, path: &str, body: &str) -> Response {
        self.request("POST", path, &[], body.as_bytes())
    }

    /// Creates plan `id` from a `.plan` file of the repository.
    pub fn create(&self, id: &str, plan: &str) -> Response {
        let source = std::fs::read(repo(plan)).expect("the plan");
        let response = self.request("POST", &format!("/api/plans?id={id}"), &[], &source);
        assert_eq!(response.status, 201, "{}", response.text());
        response
    }

    /// Runs an operation on plan `id` (`POST /api/plans/ID/ops/OP`).
    pub fn op(&self, id: &str, op: &str, args: Value) -> Response {
        self.post(&format!("/api/plans/{id}/ops/{op}"), &args.to_string())
    }

    /// Sends SIGTERM and waits: the exit code (`stderr` then holds all it
    /// wrote).
    pub fn terminate(mut self) -> Option<i32> {
        // SAFETY: a plain kill(2) of our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let status = self.child.wait().expect("planc serve exits");
        // Everything it wrote is in `stderr` once the reader has seen the
        // end of the pipe.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        status.code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The error code of an error envelope.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("no error code: {}", self.text()))
            .to_owned()
    }
}

fn send(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> TcpStream {
    send_body(addr, method, path, headers, body, false)
}

/// Sends a request; its body `chunked` (no Content-Length) or not.
fn send_body(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    chunked: bool,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if chunked {
        head.push_str("Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).expect("write");
        // The server may answer (and close) before the whole body: from the
        // first refused write on, the answer is what is left to read.
        for chunk in body.chunks(512) {
            let sent = stream
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .and_then(|()| stream.write_all(chunk))
                .and_then(|()| stream.write_all(b"\r\n"));
            if sent.is_err() {
                return stream;
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n");
        return stream;
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("write");
    // A server that refuses the body by its length answers (and closes)
    // without reading it: a refused write leaves the answer to read.
    let _ = stream.write_all(body);
    stream
}

fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    (status, headers)
}

fn chunked(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"))
}

/// One request, the whole response.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    response(send(addr, method, path, headers, body))
}

/// One request with a chunked body (no Content-Length), the whole response.
pub fn request_chunked(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    response(send_body(addr, method, path, headers, body, true))
}

/// The whole response on `stream`.
fn response(stream: TcpStream) -> Response {
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader);
    let mut body = Vec::new();
    if chunked(&headers) {
        Chunked {
            inner: reader,
            left: 0,
            done: false,
        }
        .read_to_end(&mut body)
        .expect("body");
    } else {
        reader.read_to_end(&mut body).expect("body");
    }
    Response {
        status,
        headers,
        body,
    }
}

/// A chunked body as a reader.
pub struct Chunked<R> {
    inner: R,
    left: usize,
    done: bool,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        if self.left == 0 {
            let mut line = String::new();
            if self.inner.read_line(&mut line)? == 0 {
                self.done = true;
                return Ok(0);
            }
            if line.trim().is_empty() {
                line.clear();
                self.inner.read_line(&mut line)?;
            }
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(|e| std::io::Error::other(format!("chunk size {line:?}: {e}")))?;
            if size == 0 {
                self.done = true;
                return Ok(0);
            }
            self.left = size;
        }
        let n = buf.len().min(self.left);
        let n = self.inner.read(&mut buf[..n])?;
        self.left -= n;
        Ok(n)
    }
}

/// One SSE message.
#[derive(Debug, Clone, PartialEq)]
pub struct SseMessage {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// An open event stream.
pub struct EventStream {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    lines: Box<dyn BufRead + Send>,
    /// Comment lines seen (keep-alives).
    pub comments: Vec<String>,
}

impl EventStream {
    pub fn open(addr: &str, path: &str, headers: &[(&str, &str)]) -> EventStream {
        let stream = send(addr, "GET", path, headers, b"");
        let mut reader = BufReader::new(stream);
        let (status, headers) = read_head(&mut reader);
        let lines: Box<dyn BufRead + Send> = if chunked(&headers) {
            Box::new(BufReader::new(Chunked {
                inner: reader,
                left: 0,
                done: false,
            }))
        } else {
            Box::new(reader)
        };
        EventStream {
            status,
            headers,
            lines,
            comments: Vec::new(),
        }
    }

    /// The next message (keep-alive comments are recorded and skipped);
    /// `None` when the stream ends.
    pub fn next(&mut self) -> Option<SseMessage> {
        let mut message = SseMessage {
            id: None,
            event: None,
            data: String::new(),
        };
        let mut any = false;
        loop {
            let mut line = String::new();
            match self.lines.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if any {
                    return Some(message);
                }
                continue;
            }
            if let Some(comment) = line.strip_prefix(':') {
                self.comments.push(comment.trim().to_owned());
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => message.id = Some(value.to_owned()),
                "event" => message.event = Some(value.to_owned()),
                "data" => {
                    if !message.data.is_empty() {
                        message.data.push('\n');
                    }
                    message.data.push_str(value);
                }
                _ => {}
            }
            any = true;
        }
    }

    /// The next message's data as JSON.
    pub fn next_json(&mut self) -> (SseMessage, Value) {
        let message = self.next().expect("an event");
        let value = serde_json::from_str(&message.data).expect("JSON data");
        (message, value)
    }
}

/// Whether a test may skip for lack of a tool: never on CI.
pub fn skip(what: &str) -> bool {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is missing, and CI=true: this test must run on CI (.ci/run installs it)");
    }
    eprintln!("skipped: {what} is missing (.ci/run installs it)");
    true
}

/// An MCP session on `planc serve`'s `/mcp` over the streamable HTTP
/// transport, spoken by hand: JSON-RPC requests POSTed with the session's
/// `Mcp-Session-Id`, each answer read from the SSE (or JSON) response.
pub struct McpSession {
    addr: String,
    path: String,
    session: String,
    next_id: u64,
    /// Headers sent with every request (`Authorization`).
    headers: Vec<(String, String)>,
}

impl McpSession {
    /// `initialize` and `notifications/initialized` on `path` (`/mcp…`).
    pub fn open(addr: &str, path: &str) -> McpSession {
        McpSession::open_with(addr, path, &[])
    }

    /// [`McpSession::open`] sending `headers` with every request.
    pub fn open_with(addr: &str, path: &str, headers: &[(&str, &str)]) -> McpSession {
        let mut session = McpSession {
            addr: addr.to_owned(),
            path: path.to_owned(),
            session: String::new(),
            next_id: 1,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        };
        let (response, answer) = session.exchange(
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "planc-tests", "version": "0"},
            }),
        );
        assert!(answer.get("result").is_some(), "initialize: {answer}");
        session.session = response
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("no Mcp-Session-Id: {response:?}"))
            .to_owned();
        let notified = session.post(&serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/initialized",
        }));
        assert_eq!(notified.status, 202, "{}", notified.text());
        session
    }

    fn post(&self, message: &Value) -> Response {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if !self.session.is_empty() {
            headers.push(("Mcp-Session-Id", self.session.as_str()));
        }
        headers.extend(self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        request(
            &self.addr,
            "POST",
            &self.path,
            &headers,
            message.to_string().as_bytes(),
        )
    }

    fn exchange(&mut self, method: &str, params: Value) -> (Response, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let response = self.post(&serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": params,
        }));
        assert_eq!(response.status, 200, "{method}: {}", response.text());
        let text = response.text();
        let answer = std::iter::once(text.as_str())
            .chain(text.lines().filter_map(|line| line.strip_prefix("data:")))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("{method}: no answer to request {id} in {text}"));
        (response, answer)
    }

    /// The session's `Mcp-Session-Id`.
    pub fn id(&self) -> &str {
        &self.session
    }

    /// One request: the JSON-RPC answer (`result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.exchange(method, params).1
    }

    /// `tools/call`: the result's structured content, and whether it is an
    /// error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> (Value, bool) {
        let answer = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": arguments}),
        );
        let result = &answer["result"];
        assert!(result.is_object(), "{tool}: {answer}");
        (
            result["structuredContent"].clone(),
            result["isError"].as_bool().unwrap_or(false),
        )
    }
}

/// The (id, plan id, seq, op) of a stream's next message.
pub fn next_change(stream: &mut EventStream) -> (u64, String, u64, String) {
    let (message, data) = stream.next_json();
    let id = message.id.as_deref().and_then(|id| id.parse().ok());
    (
        id.unwrap_or_else(|| panic!("no numeric id: {message:?}")),
        data["plan_id"].as_str().unwrap_or_default().to_owned(),
        data["seq"].as_u64().unwrap_or_default(),
        data["op"].as_str().unwrap_or_default().to_owned(),
    )
}

/// What the plan of [`streams_follow_a_plan_started_over`] does once it is
/// started over: forced (its creation and two changes), then deleted and
/// created again (its creation and a change).
fn new_events() -> Vec<(u64, String)> {
    [
        (1, "init"),
        (2, "startNextTask"),
        (3, "completeTask"),
        (1, "init"),
        (2, "pausePlan"),
    ]
    .into_iter()
    .map(|(seq, op)| (seq, op.to_owned()))
    .collect()
}

/// Reads `expected`'s (seq, op)s from plan `jd`'s stream `name`, each with
/// its seq as its id.
fn expect_plan_changes(stream: &mut EventStream, name: &str, expected: &[(u64, String)]) {
    let seen: Vec<(u64, String)> = (0..expected.len())
        .map(|_| next_change(stream))
        .map(|(id, plan_id, seq, op)| {
            assert_eq!((id, plan_id.as_str()), (seq, "jd"), "{name}");
            (seq, op)
        })
        .collect();
    assert_eq!(seen, expected, "{name} stream");
}

/// A plan's stream (from the start, and resumed after its last id) and the
/// stream of every plan, open on `watched` while the plan is started over
/// (`force`) through `server` and then deleted and created again: each
/// delivers every event of each new plan, in order, none twice — a plan's
/// stream with the new plan's revisions as ids (from 1 again), every
/// plan's with growing positions. (Start `watched` with a long
/// `--keep-alive`: a missing event then fails the read in 30 s.)
pub fn streams_follow_a_plan_started_over(server: &Server, watched: &Server) {
    let source = std::fs::read(repo("examples/jd_keyboard.plan")).expect("the plan");
    server.create("jd", "examples/jd_keyboard.plan");
    server.op("jd", "startNextTask", serde_json::json!({"agent": "a"}));
    server.op(
        "jd",
        "completeTask",
        serde_json::json!({"agent": "a", "result": "x"}),
    );
    server.op("jd", "pausePlan", serde_json::json!({}));
    let mut plan = EventStream::open(&watched.addr, "/api/plans/jd/events", &[]);
    let mut resumed = EventStream::open(
        &watched.addr,
        "/api/plans/jd/events",
        &[("Last-Event-ID", "4")],
    );
    let mut every = EventStream::open(&watched.addr, "/api/events", &[]);
    let old: Vec<(u64, String)> = [(1, "init"), (2, "startNextTask"), (3, "completeTask")]
        .into_iter()
        .chain([(4, "pausePlan")])
        .map(|(seq, op)| (seq, op.to_owned()))
        .collect();
    for stream in [&mut plan, &mut every] {
        let seen: Vec<(u64, String)> = (0..4)
            .map(|_| next_change(stream))
            .map(|(_, _, seq, op)| (seq, op))
            .collect();
        assert_eq!(seen, old);
    }
    // The resumed stream has caught up (it has nothing to send).
    std::thread::sleep(std::time::Duration::from_millis(300));

    // Started over: its creation and two changes.
    let forced = server.request("POST", "/api/plans?id=jd&force=true", &[], &source);
    assert_eq!(forced.status, 201, "{}", forced.text());
    server.op("jd", "startNextTask", serde_json::json!({"agent": "b"}));
    server.op(
        "jd",
        "completeTask",
        serde_json::json!({"agent": "b", "result": "y"}),
    );
    // Each stream has the started-over plan's events before it is deleted:
    // deleting a plan deletes its events, and another server's listener
    // that has not read them yet by then never does (docs/serve.md).
    let forced_over = &new_events()[..3];
    for (name, stream) in [("the plan's", &mut plan), ("resumed", &mut resumed)] {
        expect_plan_changes(stream, name, forced_over);
    }
    let mut positions = Vec::new();
    let mut every_plan = |count: usize, positions: &mut Vec<u64>| -> Vec<(u64, String)> {
        (0..count)
            .map(|_| next_change(&mut every))
            .map(|(id, _, seq, op)| {
                positions.push(id);
                (seq, op)
            })
            .collect()
    };
    assert_eq!(
        every_plan(3, &mut positions),
        forced_over,
        "every plan's stream"
    );

    // Deleted and created again, and a change.
    let deleted = server.request("DELETE", "/api/plans/jd", &[], b"");
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    server.create("jd", "examples/jd_keyboard.plan");
    server.op("jd", "pausePlan", serde_json::json!({}));

    let created_again = &new_events()[3..];
    for (name, stream) in [("the plan's", &mut plan), ("resumed", &mut resumed)] {
        expect_plan_changes(stream, name, created_again);
    }
    assert_eq!(
        every_plan(created_again.len(), &mut positions),
        created_again,
        "every plan's stream"
    );
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");

    // Nothing more, and the streams go on: the next change comes next.
    server.op("jd", "resumePlan", serde_json::json!({}));
    for stream in [&mut plan, &mut resumed, &mut every] {
        let (_, _, seq, op) = next_change(stream);
        assert_eq!((seq, op.as_str()), (3, "resumePlan"));
    }
}
