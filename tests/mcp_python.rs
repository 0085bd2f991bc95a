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

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A Python with the MCP SDK: `PLANC_MCP_PYTHON`, or a venv made on first use.
fn python() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("PLANC_MCP_PYTHON") {
        return Ok(python.into());
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv.join("bin").join("python");
    let requirements = repo("tests/mcp/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements).map_err(|e| e.to_string())?;
    let stamp = venv.join("planc-requirements.txt");
    if python.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(python);
    }
    run(Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv))?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements))?;
    std::fs::write(&stamp, wanted).map_err(|e| e.to_string())?;
    Ok(python)
}

#[test]
fn python_mcp_sdk_drives_planc_mcp() {
    let python = python().unwrap_or_else(|e| panic!("cannot set up the Python MCP SDK: {e}"));
    let output = Command::new(&python)
        .args([
            "-m",
            "unittest",
            "-v",
            "tests/mcp/test_mcp.py",
            "tests/mcp/test_dialects.py",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PLANC_BIN", env!("CARGO_BIN_EXE_planc"))
        .output()
        .expect("python runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "the Python MCP tests failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.contains("Ran 15 tests"), "{stderr}");
}
