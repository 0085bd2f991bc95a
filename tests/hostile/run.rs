//! Running one hostile case in a child process, under a time budget and a
//! memory cap, and judging what it printed.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use planc::generate::hostile::{is_terminal_control, FORGED_LINE};

use crate::support::cpu_time;

/// Planted in files outside the project and in the children's environment
/// (so `/proc/self/environ` holds it): no output may ever contain it.
pub const SECRET: &str = "PLANC-HOSTILE-SECRET-5b1d9e";

/// Planted in decoys inside the project named like the files outside it
/// (`lib.plan` for `../../lib.plan`): shown, it means planc read a file
/// other than the one named.
pub const DECOY: &str = "PLANC-HOSTILE-DECOY-c4e2";

/// What `/etc/passwd` starts with, which no output may quote either.
const PASSWD: &str = "root:x:0:0";

/// The environment variable that makes this test binary, run again, one
/// library case (see `library_case_entry` in `main.rs`).
pub const LIBRARY_CASE: &str = "PLANC_HOSTILE_LIBRARY_CASE";

/// The time budget of a case of `bytes` input: generous but far below a
/// hang. A release build gets 10 s plus 1.5 s per MiB; a debug build (what
/// CI runs, where the library case compiles a 1 MiB plan several times
/// over) 20 s plus 10 s per MiB — still a fraction of the minutes the
/// quadratic shapes took. It is counted in the child's processor time, so a
/// busy machine does not make a slow case of a fast one; a child that uses
/// no processor time (blocked on a read) is stopped at [`WALL_FACTOR`] times
/// the budget in wall-clock time.
pub fn budget(bytes: usize) -> Duration {
    let (base, per_mib) = if cfg!(debug_assertions) {
        (20_000, 10_000)
    } else {
        (10_000, 1_500)
    };
    Duration::from_millis(base + ((bytes as u64 * per_mib) >> 20))
}

/// How many times its budget a child may run by the wall clock, however
/// little processor time it uses: the guard for a child that blocks.
pub const WALL_FACTOR: u32 = 8;

/// Waits for `process`, started at `started`, and kills it once it has used
/// `budget` of processor time or [`WALL_FACTOR`] times it by the wall clock:
/// its exit status (`None` when killed) and the processor time it used.
fn wait_within(
    process: &mut std::process::Child,
    started: Instant,
    budget: Duration,
) -> Result<(Option<std::process::ExitStatus>, Duration), String> {
    let pid = process.id();
    let mut used = Duration::ZERO;
    loop {
        if let Some(status) = process.try_wait().map_err(|e| e.to_string())? {
            return Ok((Some(status), used));
        }
        let wall = started.elapsed();
        used = cpu_time(pid).unwrap_or(wall);
        if used > budget || wall > budget * WALL_FACTOR {
            let _ = process.kill();
            let _ = process.wait();
            return Ok((None, used));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The address-space cap of a child given `bytes` of input: 64 times the
/// input plus 256 MiB (threads' stacks and the allocator's reservations).
pub fn memory_cap(bytes: usize) -> u64 {
    64 * bytes as u64 + (256 << 20)
}

/// Where a child's standard input comes from.
pub enum Stdin<'a> {
    Null,
    File(&'a Path),
}

/// How a child's standard output is judged.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stdout {
    /// Read by people: no raw terminal controls, no forged lines.
    Human,
    /// A JSON array, always (`--format json`).
    JsonArray,
    /// A JSON value when it prints anything (`--json`, `build`).
    Json,
    /// One JSON value a line (`run --json watch`).
    JsonLines,
    /// A file format (a plan document, a graph, a diff): only the secret
    /// is looked for.
    Data,
}

/// One child run.
pub struct Child<'a> {
    pub command: Command,
    pub stdin: Stdin<'a>,
    /// The size of the input, for the budget and the memory cap.
    pub bytes: usize,
    pub stdout: Stdout,
    /// Exit codes allowed (0, 1 and 2 unless narrowed).
    pub codes: &'a [i32],
}

/// The `planc` binary with `args`, in `dir`, without colour.
pub fn planc<I, S>(dir: &Path, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::new(env!("CARGO_BIN_EXE_planc"));
    // A short environment holding the secret: `/proc/self/environ` is then
    // a short line, which a diagnostic would quote.
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("NO_COLOR", "1")
        .env("PLANC_HOSTILE_SECRET", SECRET);
    command
}

/// This test binary again, running the library on one case: `spec` is
/// `plan:PATH`, `json:PATH` or `state:PATH`.
pub fn library(dir: &Path, spec: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command
        .args([
            "library_case_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(dir)
        .env_clear()
        .env(LIBRARY_CASE, spec)
        .env("PLANC_HOSTILE_SECRET", SECRET)
        .env("RUST_BACKTRACE", "0")
        // The stack of the CLI's main thread, so the library is judged on
        // the stack the binary has (libtest's threads get 2 MiB).
        .env("RUST_MIN_STACK", (8 << 20).to_string());
    command
}

/// At most this much of each output is kept (a flood is itself reported).
const OUTPUT_LIMIT: usize = 64 << 20;

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut flooded = false;
        let mut buffer = [0u8; 1 << 16];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) if kept.len() + n <= OUTPUT_LIMIT => kept.extend_from_slice(&buffer[..n]),
                Ok(_) => flooded = true,
            }
        }
        (kept, flooded)
    })
}

/// Runs `child` and returns what it printed (standard output, then
/// standard error), or `Err` with what went wrong: over budget, killed,
/// panicked, an unexpected exit code, output that is not what it should
/// be, raw controls, a forged line, the secret.
pub fn check(mut child: Child<'_>) -> Result<String, String> {
    let cap = memory_cap(child.bytes);
    let budget = budget(child.bytes);
    let stdin = match child.stdin {
        Stdin::Null => Stdio::null(),
        Stdin::File(path) => Stdio::from(std::fs::File::open(path).map_err(|e| e.to_string())?),
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        child.command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut process = child
        .command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    let stdout = drain(process.stdout.take().expect("piped"));
    let stderr = drain(process.stderr.take().expect("piped"));
    let (status, used) = wait_within(&mut process, started, budget)?;
    let elapsed = started.elapsed();
    let (stdout, out_flooded) = stdout.join().unwrap_or_default();
    let (stderr, err_flooded) = stderr.join().unwrap_or_default();
    let stdout = String::from_utf8_lossy(&stdout);
    let stderr = String::from_utf8_lossy(&stderr);
    let tail = |text: &str| {
        let start = text.len().saturating_sub(600);
        let mut start = start;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        format!("{:?}", &text[start..])
    };
    let context = || format!("stderr ends {}", tail(&stderr));

    let Some(status) = status else {
        return Err(format!(
            "hang: still running after {used:.1?} of processor time and {elapsed:.1?} in all (the budget: {budget:?} of processor time, {:?} in all); {}",
            budget * WALL_FACTOR,
            context()
        ));
    };
    if let Some(signal) = status.signal() {
        let why = if stderr.contains("overflowed its stack") {
            "a stack overflow".to_owned()
        } else if stderr.contains("memory allocation of") {
            format!("the {} MiB memory cap", cap >> 20)
        } else {
            "a crash".to_owned()
        };
        return Err(format!(
            "killed by signal {signal} ({why}) after {elapsed:?}; {}",
            context()
        ));
    }
    // The library child's own checks of machine output.
    if let Some(at) = stderr.find("hostile check: ") {
        let message = stderr[at..].lines().next().unwrap_or_default();
        return Err(format!("library output: {message}"));
    }
    if stderr.contains("panicked at") || stdout.contains("panicked at") {
        return Err(format!("panicked; {}", context()));
    }
    let code = status.code().unwrap_or(-1);
    let allowed: &[i32] = if child.codes.is_empty() {
        &[0, 1, 2]
    } else {
        child.codes
    };
    if !allowed.contains(&code) {
        return Err(format!(
            "exit code {code}, expected one of {allowed:?}; {}",
            context()
        ));
    }
    if out_flooded || err_flooded {
        return Err(format!("printed more than {} MiB", OUTPUT_LIMIT >> 20));
    }
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        if text.contains(SECRET) {
            return Err(format!(
                "{name} shows the content of a file outside the project (the planted secret)"
            ));
        }
        if text.contains(DECOY) {
            return Err(format!(
                "{name} shows a decoy: planc read another file than the one named"
            ));
        }
        if text.contains(PASSWD) {
            return Err(format!("{name} quotes /etc/passwd"));
        }
    }
    human(&stderr).map_err(|e| format!("stderr {e}"))?;
    match child.stdout {
        Stdout::Human => human(&stdout).map_err(|e| format!("stdout {e}"))?,
        Stdout::JsonArray => match serde_json::from_str::<serde_json::Value>(&stdout) {
            Ok(serde_json::Value::Array(_)) => {}
            _ => {
                return Err(format!(
                    "--format json printed no JSON array: stdout starts {:?}",
                    &stdout[..stdout.len().min(200)]
                ))
            }
        },
        Stdout::Json if !stdout.trim().is_empty() => {
            if serde_json::from_str::<serde_json::Value>(&stdout).is_err() {
                return Err(format!(
                    "printed something that is not JSON: stdout starts {:?}",
                    &stdout[..stdout.len().min(200)]
                ));
            }
        }
        Stdout::JsonLines => {
            if let Some(line) = stdout
                .lines()
                .find(|line| serde_json::from_str::<serde_json::Value>(line).is_err())
            {
                return Err(format!(
                    "printed a line that is not JSON: {:?}",
                    &line[..line.len().min(200)]
                ));
            }
        }
        Stdout::Json | Stdout::Data => {}
    }
    Ok(format!("{stdout}{stderr}"))
}

/// Text read by people holds no raw terminal control and no forged line.
pub fn human(text: &str) -> Result<(), String> {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| is_terminal_control(c)) {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(40)
            .map_or(0, |(i, _)| i);
        let to = text[at..]
            .char_indices()
            .nth(8)
            .map_or(text.len(), |(i, _)| at + i);
        return Err(format!(
            "has a raw terminal control U+{:04X} at byte {at}: {:?}",
            c as u32,
            &text[from..to]
        ));
    }
    if let Some(line) = text
        .lines()
        .find(|line| line.trim_start().starts_with(FORGED_LINE))
    {
        return Err(format!("has a forged line: {line:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::{wait_within, WALL_FACTOR};

    fn start(script: &str) -> (std::process::Child, Instant) {
        let child = Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh starts");
        (child, Instant::now())
    }

    /// A child that computes for ever is stopped by its processor time.
    #[test]
    fn the_guard_stops_a_busy_child_by_its_processor_time() {
        let (mut child, started) = start("while :; do :; done");
        let budget = Duration::from_millis(300);
        let (status, used) = wait_within(&mut child, started, budget).expect("waits");
        assert!(status.is_none(), "the loop ended by itself");
        assert!(used > budget, "stopped after {used:?} of processor time");
    }

    /// A child that blocks uses no processor time: the wall clock stops it.
    #[test]
    fn the_guard_stops_a_blocked_child_by_the_wall_clock() {
        let (mut child, started) = start("sleep 60");
        let budget = Duration::from_millis(100);
        let (status, used) = wait_within(&mut child, started, budget).expect("waits");
        let wall = started.elapsed();
        assert!(status.is_none(), "sleep ended by itself");
        assert!(used < budget, "sleep used {used:?} of processor time");
        assert!(
            wall >= budget * WALL_FACTOR && wall < Duration::from_secs(30),
            "stopped after {wall:?}"
        );
    }

    /// A child that ends within its budget is waited for, not killed.
    #[test]
    fn the_guard_lets_a_quick_child_finish() {
        let (mut child, started) = start("exit 3");
        let (status, _) = wait_within(&mut child, started, Duration::from_secs(10)).expect("waits");
        assert_eq!(status.and_then(|s| s.code()), Some(3));
    }
}
