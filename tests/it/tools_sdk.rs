//! `planc tools` against the OpenAI and Anthropic Python SDKs' own types:
//! runs tests/tools_sdk/test_tools.py in a virtual environment under the
//! target directory (made once, reused while tests/tools_sdk/requirements.txt
//! is unchanged).

use crate::support;
use std::process::Command;

#[test]
fn the_sdks_accept_the_tool_definitions() {
    let venv = support::venv::venv("tools-sdk-venv", "tests/tools_sdk/requirements.txt");
    let output = Command::new(venv.join("bin/python"))
        .args(["-m", "unittest", "-v", "tests/tools_sdk/test_tools.py"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PLANC_BIN", env!("CARGO_BIN_EXE_planc"))
        .output()
        .expect("python runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDK checks failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.contains("Ran 7 tests"), "{stderr}");
}
