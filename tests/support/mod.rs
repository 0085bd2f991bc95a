//! A tiny builder for driving the real `planc` binary in a temporary
//! directory (in the spirit of casey/just's `Test`).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub mod venv;

/// A temporary directory to run `planc` in.
pub struct Test {
    dir: tempfile::TempDir,
}

/// What one `planc` run did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The standard output as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

pub fn planc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_planc"))
}

impl Test {
    pub fn new() -> Test {
        Test {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file into the directory.
    pub fn file(self, name: &str, text: &str) -> Test {
        std::fs::write(self.path(name), text).expect("write a test file");
        self
    }

    /// Runs `planc ARGS` in the directory.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, "")
    }

    /// Runs `planc ARGS` with `stdin` as standard input.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = planc()
            .args(args)
            .current_dir(self.dir())
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("planc starts");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let Output {
            status,
            stdout,
            stderr,
        } = child.wait_with_output().unwrap();
        Run {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }
    }

    /// Runs `planc run --json ARGS…` and returns the envelope; asserts the exit code.
    pub fn op(&self, args: &[&str], code: i32) -> Value {
        let mut all = vec!["run", "--json"];
        all.extend_from_slice(args);
        let run = self.run(&all);
        assert_eq!(
            run.code,
            code,
            "planc {}:\n{}\n{}",
            all.join(" "),
            run.stdout,
            run.stderr
        );
        run.json()
    }

    /// Runs an operation that must succeed; its `data`.
    pub fn ok(&self, args: &[&str]) -> Value {
        let envelope = self.op(args, 0);
        assert_eq!(envelope["success"], true);
        envelope["data"].clone()
    }

    /// Runs an operation that must fail; its error code.
    pub fn err(&self, args: &[&str]) -> String {
        let envelope = self.op(args, 1);
        assert_eq!(envelope["success"], false);
        envelope["error"]["code"].as_str().unwrap().to_owned()
    }

    /// The state file, parsed.
    pub fn state(&self, name: &str) -> Value {
        let text = std::fs::read_to_string(self.path(name)).expect("the state file");
        serde_json::from_str(&text).expect("the state file is JSON")
    }

    /// The event log beside state `name` (`s.json` → `s.json.events.jsonl`), parsed line by line.
    pub fn events(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(&format!("{name}.events.jsonl")))
            .expect("the event log")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each log line is JSON"))
            .collect()
    }
}

/// `[(id, status)]` of a state's tasks, in plan order.
pub fn tasks(state: &Value) -> Vec<(u64, String)> {
    state["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_u64().unwrap(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The path of a file in the repository.
pub fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Waits for a line starting with `prefix` on a child's standard error.
pub fn wait_for_line(stderr: &mut impl std::io::BufRead, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no `{prefix}` line"
        );
        if line.starts_with(prefix) {
            return line;
        }
    }
}

/// Kills a child stopped by a test that fails before letting it go on.
pub struct KillOnPanic(pub u32);

impl Drop for KillOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            signal(self.0, "KILL");
        }
    }
}

/// Sends signal `name` (`KILL`, `CONT`, …) to `pid`.
pub fn signal(pid: u32, name: &str) {
    // The shell's own `kill`: no procps needed.
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -{name} {pid}")])
        .status()
        .unwrap();
    assert!(status.success());
}
