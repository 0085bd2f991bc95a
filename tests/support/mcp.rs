//! The one MCP client of the tests: `planc mcp` spoken to over its standard
//! streams, one JSON-RPC line at a time (no SDK, no network).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};

use serde_json::{json, Value};

/// A running `planc mcp` after the handshake.
pub struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpClient {
    /// Starts `planc mcp ARGS` in `dir` and completes the handshake (the
    /// server must name itself `planc` and speak the client's version).
    pub fn connect(dir: &Path, args: &[&str]) -> McpClient {
        let mut child = super::planc()
            .arg("mcp")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("planc mcp starts");
        let mut client = McpClient {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("stdout is piped")),
            child,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "planc", "{init}");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    /// Sends one message (a notification, or a request whose answer is not read).
    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("the client is open");
        writeln!(stdin, "{message}").expect("the server reads");
        stdin.flush().expect("the server reads");
    }

    /// Sends a request and returns the response with its id (notifications
    /// the server sends meanwhile are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).expect("the server writes");
            assert!(read > 0, "the server closed its output");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Calls `tool`; asserts the call was no protocol error and returns the
    /// tool's result (`isError`, `structuredContent`, `content`).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "a protocol error: {response}"
        );
        response["result"].clone()
    }

    /// Calls `tool`; asserts it succeeded and returns the envelope's `data`.
    pub fn data(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        result["structuredContent"]["data"].clone()
    }

    /// Closes the server's input and waits for it to exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("planc mcp exits")
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        // A test that failed midway leaves no server behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
