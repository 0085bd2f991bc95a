//! `planc tools` against the OpenAI and Anthropic Python SDKs' own types:
//! runs tests/tools_sdk/test_tools.py in a virtual environment under the
//! target directory (made once, reused while tests/tools_sdk/requirements.txt
//! is unchanged).

use crate::support;

#[test]
fn the_sdks_accept_the_tool_definitions() {
    let venv = support::venv::venv("tools-sdk-venv", "tests/tools_sdk/requirements.txt");
    support::venv::unittest(
        &venv.join("bin/python"),
        &["tests/tools_sdk/test_tools.py"],
        &[("PLANC_BIN", env!("CARGO_BIN_EXE_planc"))],
        7,
        String::new,
    );
}
