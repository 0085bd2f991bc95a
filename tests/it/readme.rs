//! README.md stays true: its first lines are the two commands a newcomer
//! needs, every `cargo install` it shows is `--locked`, the contributors'
//! commands name tests and modules that exist, and the first example and the
//! command lines under "Use", "Run a plan" and "Agents" run as written, in
//! order, on a fresh copy of the repository (its tracked files) with the
//! `planc` under test on the PATH standing for the install step.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// The lines of the ```sh blocks under the heading `## NAME` (up to the next
/// `## `), without blank lines.
fn commands(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section {heading}"));
    let section = &readme[start + 1..];
    let section = &section[3..];
    let end = section.find("\n## ").unwrap_or(section.len());
    let mut lines = Vec::new();
    let mut in_block = false;
    for line in section[..end].lines() {
        match line.trim_end() {
            "```sh" if !in_block => in_block = true,
            "```" if in_block => in_block = false,
            line if in_block && !line.trim().is_empty() => lines.push(line.to_owned()),
            _ => {}
        }
    }
    assert!(!lines.is_empty(), "README.md: no command under {heading}");
    lines
}

#[test]
fn the_first_lines_run_an_example_and_all_the_tests() {
    let readme = readme();
    let first_block: Vec<&str> = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a first sh block")
        .lines()
        .collect();
    assert_eq!(first_block.len(), 2, "{first_block:?}");
    assert!(
        first_block[0].starts_with("cargo run -- build examples/"),
        "{first_block:?}"
    );
    assert!(
        first_block[1].starts_with("bash .ci/run "),
        "{first_block:?}"
    );
    // The block comes before any section.
    assert!(readme.find("```sh").unwrap() < readme.find("\n## ").unwrap());
    // Every install, wherever the README shows one, takes the tested versions.
    for (at, _) in readme.match_indices("cargo install") {
        let line = readme[at..].lines().next().unwrap_or("");
        assert!(line.contains(" --locked "), "README.md: {line}");
    }
}

/// The contributors' commands name tests and modules that exist.
#[test]
fn the_contributing_commands_name_what_exists() {
    let readme = readme();
    let lines = commands(&readme, "Contributing");
    assert!(lines.iter().any(|l| l.starts_with("cargo test --lib ")));
    for line in &lines {
        let words: Vec<&str> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        for (i, pair) in words.windows(2).enumerate() {
            match pair {
                ["--test", name] => {
                    let package = if words.contains(&"planc-lsp") {
                        "lsp/"
                    } else {
                        ""
                    };
                    let file = root().join(format!("{package}tests/{name}.rs"));
                    let dir = root().join(format!("{package}tests/{name}/"));
                    assert!(
                        file.is_file() || dir.join("main.rs").is_file(),
                        "README.md: {line}"
                    );
                    // `--test it MODULE::…`: a test file of that binary.
                    if let Some((module, _)) = words.get(i + 2).and_then(|w| w.split_once("::")) {
                        assert!(
                            dir.join(format!("{module}.rs")).is_file(),
                            "README.md: {line}"
                        );
                    }
                }
                ["--lib", filter] if filter.ends_with("::") => {
                    let module = filter.trim_end_matches("::").replace("::", "/");
                    let src = root().join("src");
                    assert!(
                        src.join(format!("{module}.rs")).is_file() || src.join(&module).is_dir(),
                        "README.md: {line}"
                    );
                }
                _ => {}
            }
        }
    }
}

/// Commands that serve or follow until stopped: each must start and print
/// before it is stopped.
const LONG_RUNNING: [&str; 1] = ["planc run watch "];

/// What a host says to `planc mcp`: the handshake and a request for the tools.
const MCP_SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
);

/// Runs `line` with bash in `dir`; fails the test, saying which line, unless
/// it succeeds (or, for a long-running command, prints something). An MCP
/// server gets a host's first requests and must answer them.
fn run_line(line: &str, dir: &Path, path: &str) {
    let out = dir.join(".readme-stdout");
    let err = dir.join(".readme-stderr");
    let input = dir.join(".readme-stdin");
    let mcp = line.starts_with("planc mcp ");
    std::fs::write(&input, if mcp { MCP_SESSION } else { "" }).unwrap();
    let mut child = Command::new("bash")
        .args(["-eo", "pipefail", "-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("bash runs");
    let long_running = LONG_RUNNING.iter().any(|c| line.starts_with(c));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        let printed = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0) > 0;
        if long_running && printed {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("README.md: `{line}` did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&out).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    if let Some(status) = status {
        assert!(
            status.success() && !long_running,
            "README.md: `{line}` ({status}):\n{stdout}\n{stderr}"
        );
    }
    if mcp {
        assert!(
            stdout.contains(r#""id":2"#) && stdout.contains("startNextTask"),
            "README.md: `{line}` lists no tools:\n{stdout}\n{stderr}"
        );
    }
}

#[test]
fn the_readme_commands_run_in_order_on_a_fresh_copy() {
    let readme = readme();
    let copy = tempfile::tempdir().unwrap();
    // A fresh clone's files: what git tracks, as it is on disk.
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("git runs");
    assert!(listed.status.success(), "git ls-files failed");
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let from = root().join(name);
        if !from.is_file() {
            continue; // deleted, not yet committed
        }
        let to = copy.path().join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_planc")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The first lines: `cargo run -- ARGS` is `planc ARGS` once built.
    let first = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|block| block.lines().next())
        .expect("a first command");
    let first = first.split('#').next().unwrap_or("").trim();
    let first = first.replace("cargo run -- ", "planc ");
    run_line(&first, copy.path(), &path);
    for section in ["Use", "Run a plan", "Agents"] {
        for line in commands(&readme, section) {
            assert!(line.starts_with("planc "), "README.md: `{line}` runs planc");
            run_line(&line, copy.path(), &path);
        }
    }
    // What the lines made is there.
    for made in ["plan.json", "jd.json", "jd.json.events.jsonl"] {
        assert!(copy.path().join(made).is_file(), "{made}");
    }
}
