//! `planc serve`'s MCP endpoint against the official Python MCP SDK's
//! streamable HTTP client: runs tests/mcp/test_serve.py (a plan_id needed
//! only with many plans and checked, the agent from the session or the
//! `X-Planc-Agent` header, dialects by `?dialect=` or `X-Planc-Dialect`, the
//! Plan Tool plan created through its own tool, each plan a resource, the
//! prompt naming its plan) against a server on a fresh store. The virtual
//! environment is tests/it/mcp_python.rs's (tests/mcp/requirements.txt). Skipped, saying so, where python3 is
//! missing — except with `CI=true`, where it fails instead.

#![cfg(unix)]

use std::process::Command;

use crate::serve_support::{skip, store_url, Server};
use crate::support::venv;

#[test]
fn python_mcp_sdk_drives_planc_serve_over_streamable_http() {
    if Command::new("python3").arg("--version").output().is_err() {
        skip("python3");
        return;
    }
    let python = venv::venv("mcp-venv", "tests/mcp/requirements.txt").join("bin/python");
    let store = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&["--store", &store_url(store.path())]);
    let url = format!("http://{}", server.addr);
    venv::unittest(
        &python,
        &["tests/mcp/test_serve.py"],
        &[("PLANC_SERVE_URL", &url)],
        7,
        || format!("\nserver:\n{}", server.stderr.lock().unwrap()),
    );
}
