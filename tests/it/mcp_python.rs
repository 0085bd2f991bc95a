//! `planc mcp` against the official Python MCP SDK: runs tests/mcp/test_mcp.py
//! (tools and schemas, the planManager's JD scenario, tool errors, resource and prompt,
//! two clients at once, parallel agents with identities, leases and retries,
//! the example agent) and tests/mcp/test_dialects.py (one
//! scenario per seed dialect, from the seed's own example, plus the steps system's
//! sessions, transition words and fallback and Plan-Act's events and
//! attachments; every result checked against its tool's output schema) with
//! a virtual environment under the target directory.
//!
//! The environment is made once (`python3 -m venv`, `pip install -r
//! tests/mcp/requirements.txt`) and reused while the requirements are unchanged.
//! `PLANC_MCP_PYTHON=/path/to/python` uses a Python that has them already.

use crate::support::venv::{unittest, venv};
use std::path::PathBuf;

/// A Python with the MCP SDK: `PLANC_MCP_PYTHON`, or the virtual environment
/// `mcp-venv` that tests/it/serve_mcp.rs uses too, made by the same code
/// (tests/support/venv.rs), so the two take turns making it.
fn python() -> PathBuf {
    match std::env::var_os("PLANC_MCP_PYTHON") {
        Some(python) => python.into(),
        None => venv("mcp-venv", "tests/mcp/requirements.txt").join("bin/python"),
    }
}

#[test]
fn python_mcp_sdk_drives_planc_mcp() {
    let report = unittest(
        &python(),
        &["tests/mcp/test_mcp.py", "tests/mcp/test_dialects.py"],
        &[("PLANC_BIN", env!("CARGO_BIN_EXE_planc"))],
        16,
        String::new,
    );
    eprintln!("{report}");
}

/// Seed 002's Plan Tool over stdio holding many plans (a directory, a SQLite
/// store; a state file still holds one and says where to hold many), and
/// seed 004's planner updating its plan with its own JSON:
/// tests/mcp/test_plan_stores.py.
#[test]
fn python_mcp_sdk_drives_plan_stores_over_stdio() {
    unittest(
        &python(),
        &["tests/mcp/test_plan_stores.py"],
        &[("PLANC_BIN", env!("CARGO_BIN_EXE_planc"))],
        5,
        String::new,
    );
}
