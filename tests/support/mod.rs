//! What the integration tests share: one builder, [`Test`], that runs the
//! real `planc` binary (in the spirit of casey/just's `Test`: every test
//! reads like a usage example), either in the repository root
//! (`Test::new(["check", "examples/x.plan"])`, paths print as `examples/…`)
//! or in a fresh temporary directory of its own (`Test::temp()`, then
//! `.file(…)` and `.planc(&[…])` as often as needed); temporary directories
//! (`tempfile`); and the helpers for child processes.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod mcp;
pub mod venv;
pub mod wheel;

/// The repository root: tests run there so paths print as `examples/…`.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The path of a file in the repository.
pub fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The `planc` binary under test.
pub fn planc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_planc"))
}

/// A fresh temporary directory (`planc-test-TAG-…`), removed when dropped.
pub fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("planc-test-{tag}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// One run of `planc`, or a directory to run it in again and again.
pub struct Test {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    stdin_file: Option<PathBuf>,
    dir: PathBuf,
    /// The temporary directory `dir` is, when the test made one.
    temp: Option<tempfile::TempDir>,
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The standard output as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

impl Test {
    /// `planc ARGS…`, run in the repository root.
    pub fn new<I, S>(args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Test {
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            stdin: None,
            stdin_file: None,
            dir: root(),
            temp: None,
        }
    }

    /// A fresh temporary directory to run `planc` in ([`Test::planc`]).
    pub fn temp() -> Test {
        let temp = temp_dir("run");
        Test {
            dir: temp.path().to_owned(),
            temp: Some(temp),
            ..Test::new::<[&str; 0], &str>([])
        }
    }

    /// Feeds `input` on standard input.
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(input.into());
        self
    }

    /// Opens `path` as standard input (`planc check - </dev/zero`).
    pub fn stdin_file(mut self, path: &Path) -> Test {
        self.stdin_file = Some(path.to_owned());
        self
    }

    /// Runs in `dir` instead of the repository root.
    pub fn current_dir(mut self, dir: &Path) -> Test {
        self.dir = dir.to_owned();
        self
    }

    /// The path of `name` in the directory planc runs in.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The directory planc runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a file into the directory.
    pub fn file(self, name: &str, text: &str) -> Test {
        std::fs::write(self.path(name), text).expect("write a test file");
        self
    }

    /// Runs the command and returns what it printed.
    pub fn run(self) -> Output {
        self.output(&self.args, self.stdin.as_deref())
    }

    /// Runs and asserts the exit code.
    pub fn expect_code(self, code: i32) -> Output {
        let output = self.run();
        assert_eq!(
            output.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            output.stdout, output.stderr
        );
        output
    }

    /// Runs `planc ARGS` in the directory (the builder's own arguments and
    /// input aside).
    pub fn planc<S: AsRef<str>>(&self, args: &[S]) -> Output {
        self.output(args, Some(&[]))
    }

    /// Runs `planc ARGS` with `stdin` as standard input.
    pub fn planc_with_stdin<S: AsRef<str>>(&self, args: &[S], stdin: &str) -> Output {
        self.output(args, Some(stdin.as_bytes()))
    }

    fn output<S: AsRef<str>>(&self, args: &[S], stdin: Option<&[u8]>) -> Output {
        let mut child = planc()
            .args(args.iter().map(AsRef::as_ref))
            .current_dir(&self.dir)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("COLUMNS")
            .stdin(match (stdin, &self.stdin_file) {
                (Some(_), _) => Stdio::piped(),
                (None, Some(path)) => Stdio::from(std::fs::File::open(path).expect("stdin file")),
                (None, None) => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("planc starts");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            // A write error means planc stopped reading: its output says why.
            let _ = pipe.write_all(input);
        }
        let output = child.wait_with_output().expect("planc finishes");
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
    /// Runs `planc ARGS`, asserting its exit code (the message shows its output).
    pub fn expect(&self, args: &[&str], code: i32) -> Output {
        let run = self.planc(args);
        assert_eq!(
            run.code,
            code,
            "planc {}:\n{}\n{}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
        run
    }

    /// Runs `planc run --json ARGS…` and returns the envelope; asserts the exit code.
    pub fn op(&self, args: &[&str], code: i32) -> Value {
        self.expect(&[&["run", "--json"][..], args].concat(), code)
            .json()
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

/// The files of a directory with an extension, sorted by name.
pub fn files(dir: &str, extensions: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("directory exists")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let ext = path.extension()?.to_str()?;
            let name = path.file_name()?.to_str()?;
            extensions.contains(&ext).then(|| format!("{dir}/{name}"))
        })
        .collect();
    files.sort();
    files
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

/// The processor time (user and system) process `pid` has used so far, from
/// `/proc` (`None` where there is none). A time budget counted in it holds
/// on a loaded machine, where a wall-clock budget fails a fast case.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may
    // hold anything: state is the first, utime the 12th, stime the 13th.
    let fields: Vec<&str> = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    (per_second > 0).then(|| Duration::from_millis(ticks * 1000 / per_second))
}

/// The runs [`processor_time`] measures in one test binary take turns.
static MEASURED: Mutex<()> = Mutex::new(());

/// Runs `work` in this process and returns what it returns with the
/// processor time the process used meanwhile (the wall clock where `/proc`
/// has none). The measured runs of a test binary take turns, so the time is
/// the work's own, on all its threads, plus the little the other tests do
/// meanwhile outside their measured runs (writing their inputs).
pub fn processor_time<T>(work: impl FnOnce() -> T) -> (T, Duration) {
    let _turn = MEASURED.lock().unwrap_or_else(PoisonError::into_inner);
    let pid = std::process::id();
    let started = Instant::now();
    let before = cpu_time(pid);
    let value = work();
    let used = match (before, cpu_time(pid)) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => started.elapsed(),
    };
    (value, used)
}
