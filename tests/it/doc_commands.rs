//! Every command in the repository's Markdown runs, as written (the
//! convention is docs/README.md's):
//!
//! - A fence `sh`, `bash` or `shell` holds commands; each block runs as one
//!   bash script (`set -e -o pipefail`), so every line must succeed. A fence
//!   `console` holds `$ ` prompts: the lines after one are what it prints,
//!   compared with what it printed (`...` alone on a line stands for any
//!   lines, `…` in a line for any text); a prompt without output must succeed.
//! - The blocks of one file run in order, in one fresh copy of the
//!   repository's tracked files, with the `planc` under test first on PATH
//!   (`cargo run --` stands for it too); the files run in parallel.
//! - `planc serve …` runs in the background until its block ends or the next
//!   server starts, once it listens and answers HTTP; `planc mcp …` gets a
//!   host's first requests on standard input and must list its tools; a
//!   command that follows until stopped (`planc run watch` without
//!   `--no-follow`, `curl -N`) must print, then is stopped.
//! - `<!-- not run: REASON -->` on the line before a fence skips its block,
//!   `<!-- not run "PREFIX": REASON -->` the lines that start with PREFIX; a
//!   marker without a reason, or whose PREFIX matches no line, fails.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::doc_scripts::{script, Script};
use crate::markdown::{options, tracked_files, Lines};
use crate::support;

/// One shell or console block of a Markdown file.
#[derive(Debug)]
pub(crate) struct Block {
    /// The line of its opening fence.
    pub(crate) line: usize,
    /// `console` (prompts and output) or not (commands only).
    pub(crate) console: bool,
    /// Its lines, each with its line in the file.
    pub(crate) lines: Vec<(usize, String)>,
    /// Why the whole block is not run, if it is not.
    pub(crate) not_run: Option<String>,
    /// The lines not run: a prefix and why.
    pub(crate) skip: Vec<(String, String)>,
}

/// The fences whose blocks hold commands.
const SHELLS: [&str; 4] = ["sh", "bash", "shell", "console"];

/// The `<!-- not run … -->` markers on the lines right above line `fence`:
/// (prefix or none, reason), or a fault.
fn markers(source: &[&str], fence: usize) -> Result<Vec<(Option<String>, String)>, String> {
    let mut found = Vec::new();
    let mut at = fence - 1; // 1-based line above the fence
    while at >= 1 {
        let line = source[at - 1].trim();
        let Some(inner) = line
            .strip_prefix("<!--")
            .and_then(|l| l.strip_suffix("-->"))
        else {
            break;
        };
        let Some(rest) = inner.trim().strip_prefix("not run") else {
            break;
        };
        let (prefix, reason) = match rest.strip_prefix(" \"") {
            Some(quoted) => match quoted.split_once("\":") {
                Some((prefix, reason)) => (Some(prefix.to_owned()), reason),
                None => {
                    return Err(format!(
                        "{at}: a `not run \"PREFIX\": REASON` marker without its `\":`"
                    ))
                }
            },
            None => (None, rest.strip_prefix(':').unwrap_or("")),
        };
        if reason.trim().is_empty() {
            return Err(format!("{at}: a `not run` marker says no reason"));
        }
        found.push((prefix, reason.trim().to_owned()));
        at -= 1;
    }
    Ok(found)
}

/// The shell and console blocks of one Markdown text, with their markers.
pub(crate) fn blocks(text: &str) -> Result<Vec<Block>, Vec<String>> {
    let lines = Lines::new(text);
    let source: Vec<&str> = text.lines().collect();
    let (mut blocks, mut faults) = (Vec::new(), Vec::new());
    let mut current: Option<Block> = None;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let language = info.split([' ', ',', '{']).next().unwrap_or("");
                let line = lines.of(range.start);
                let marks = match markers(&source, line) {
                    Ok(marks) => marks,
                    Err(fault) => {
                        faults.push(fault);
                        continue;
                    }
                };
                if !SHELLS.contains(&language) {
                    if !marks.is_empty() {
                        faults.push(format!(
                            "{line}: a `not run` marker before a fence that is not a shell's"
                        ));
                    }
                    continue;
                }
                let mut block = Block {
                    line,
                    console: language == "console",
                    lines: Vec::new(),
                    not_run: None,
                    skip: Vec::new(),
                };
                for (prefix, reason) in marks {
                    match prefix {
                        Some(prefix) => block.skip.push((prefix, reason)),
                        None => block.not_run = Some(reason),
                    }
                }
                current = Some(block);
            }
            Event::Text(content) => {
                if let Some(block) = current.as_mut() {
                    let first = block.line + 1 + block.lines.len();
                    for (i, line) in content.lines().enumerate() {
                        block.lines.push((first + i, line.to_owned()));
                    }
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    for block in &blocks {
        for (prefix, _) in &block.skip {
            let command = |line: &str| line.trim_start_matches("$ ").starts_with(prefix.as_str());
            if !block.lines.iter().any(|(_, line)| command(line)) {
                faults.push(format!(
                    "{}: the marker `not run \"{prefix}\"` matches no line of the block",
                    block.line
                ));
            }
        }
    }
    if faults.is_empty() {
        Ok(blocks)
    } else {
        Err(faults)
    }
}

/// Copies the repository's tracked files into `to`: a fresh clone's files.
fn copy_repository(files: &[String], to: &Path) {
    for name in files {
        let target = to.join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(support::root().join(name), &target).unwrap();
    }
}

/// What a host says to `planc mcp` first: the handshake and `tools/list`.
const MCP_SESSION: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"docs","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
);

/// Blocks that start a server take turns: the default port is one.
static SERVERS: Mutex<()> = Mutex::new(());

/// Kills the process group `pid` leads (the block's bash and what it ran).
fn kill_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

/// Runs one block's script in `dir`; the faults it shows, each `LINE: what`.
fn run_script(script: &Script, dir: &Path, scratch: &Path) -> Vec<String> {
    use std::os::unix::process::CommandExt;
    let _turn = script
        .serves
        .then(|| SERVERS.lock().unwrap_or_else(|e| e.into_inner()));
    std::fs::write(scratch.join("mcp-session"), MCP_SESSION).unwrap();
    let _ = std::fs::remove_file(scratch.join("failed-at"));
    let bin = Path::new(env!("CARGO_BIN_EXE_planc")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-c", &script.text])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("DOCS_SCRATCH", scratch)
        // `~` in a command is the scratch directory, never the home of
        // whoever runs the tests.
        .env("HOME", scratch)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(scratch.join("stdout")).unwrap())
        .stderr(std::fs::File::create(scratch.join("stderr")).unwrap())
        .process_group(0)
        .spawn()
        .expect("bash runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(120) {
            kill_group(child.id());
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Whatever the block left in the background (servers, followers).
    let jobs = std::fs::read_to_string(scratch.join("jobs")).unwrap_or_default();
    jobs.lines()
        .filter_map(|pid| pid.parse().ok())
        .for_each(kill_group);
    let _ = std::fs::remove_file(scratch.join("jobs"));
    let stdout = std::fs::read_to_string(scratch.join("stdout")).unwrap_or_default();
    let stderr = std::fs::read_to_string(scratch.join("stderr")).unwrap_or_default();
    let failed_at: Option<usize> = std::fs::read_to_string(scratch.join("failed-at"))
        .ok()
        .and_then(|l| l.trim().parse().ok());
    let line = failed_at
        .and_then(|at| script.lines.get(at.saturating_sub(1)).copied())
        .filter(|line| *line > 0)
        .unwrap_or(script.first_line);
    let mut faults = Vec::new();
    match status {
        None => faults.push(format!(
            "{line}: the block did not finish in 120 s\n{stdout}{stderr}"
        )),
        Some(status) if !status.success() => {
            let tail: String = tail(&format!("{stdout}{stderr}"), 40);
            faults.push(format!(
                "{line}: `{}` failed ({status}):\n{tail}",
                script.command_at(line)
            ));
        }
        Some(_) => faults.extend(script.compare_outputs(scratch)),
    }
    faults
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// What running one file's blocks counted and found.
#[derive(Default)]
struct Report {
    run: usize,
    commands: usize,
    not_run: Vec<String>,
    faults: Vec<String>,
    /// Each block run and how long it took.
    times: Vec<(Duration, String)>,
}

/// Runs the blocks of one Markdown file, in order, in a fresh copy.
fn run_file(name: &str, files: &[String]) -> Report {
    let text = std::fs::read_to_string(support::root().join(name)).unwrap();
    let mut report = Report::default();
    let blocks = match blocks(&text) {
        Ok(blocks) => blocks,
        Err(faults) => {
            report.faults = faults.into_iter().map(|f| format!("{name}:{f}")).collect();
            return report;
        }
    };
    let copy = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let mut copied = false;
    for block in &blocks {
        if let Some(reason) = &block.not_run {
            report
                .not_run
                .push(format!("{name}:{} (block): {reason}", block.line));
            continue;
        }
        for (prefix, reason) in &block.skip {
            report.not_run.push(format!(
                "{name}:{} (lines `{prefix}`): {reason}",
                block.line
            ));
        }
        let script = script(block);
        if script.commands == 0 {
            continue;
        }
        if !copied {
            copy_repository(files, copy.path());
            copied = true;
        }
        report.run += 1;
        report.commands += script.commands;
        let started = Instant::now();
        let faults = run_script(&script, copy.path(), scratch.path());
        report
            .times
            .push((started.elapsed(), format!("{name}:{}", block.line)));
        report
            .faults
            .extend(faults.into_iter().map(|f| format!("{name}:{f}")));
    }
    report
}

#[test]
fn every_command_in_the_docs_runs() {
    let started = Instant::now();
    let files = tracked_files();
    let markdown: Vec<String> = files
        .iter()
        .filter(|f| f.ends_with(".md"))
        .cloned()
        .collect();
    let reports: BTreeMap<String, Report> = std::thread::scope(|scope| {
        let running: Vec<_> = markdown
            .iter()
            .map(|name| (name.clone(), scope.spawn(|| run_file(name, &files))))
            .collect();
        running
            .into_iter()
            .map(|(name, handle)| (name, handle.join().unwrap()))
            .collect()
    });
    let (mut run, mut commands, mut not_run, mut faults) = (0, 0, Vec::new(), Vec::new());
    let mut times = Vec::new();
    for report in reports.into_values() {
        run += report.run;
        commands += report.commands;
        not_run.extend(report.not_run);
        faults.extend(report.faults);
        times.extend(report.times);
    }
    times.sort();
    let slowest: Vec<String> = times
        .iter()
        .rev()
        .take(5)
        .map(|(t, b)| format!("{b} {:.1} s", t.as_secs_f64()))
        .collect();
    println!(
        "docs: {run} blocks run ({commands} commands) in {:.1} s (slowest: {}); {} not run:\n{}",
        started.elapsed().as_secs_f64(),
        slowest.join(", "),
        not_run.len(),
        not_run.join("\n")
    );
    assert!(
        faults.is_empty(),
        "{} doc commands fail:\n\n{}",
        faults.len(),
        faults.join("\n\n")
    );
    assert!(
        run >= 10 && commands >= 40,
        "{run} blocks, {commands} commands"
    );
}

/// The runner reports a failing command and an output that differs from the
/// one shown at their lines, and refuses markers without a reason or a match.
#[test]
fn failures_and_markers_are_named_by_their_lines() {
    let text = "# T\n\n```sh\ntrue\nplanc nosuchcommand\n```\n\n```console\n$ echo one\ntwo\n$ planc --version\nplanc …\n```\n";
    let found = blocks(text).unwrap();
    let (dir, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let failed = run_script(&script(&found[0]), dir.path(), scratch.path());
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].starts_with("5: `planc nosuchcommand` failed (exit status: 2)"),
        "{failed:?}"
    );
    let differs = run_script(&script(&found[1]), dir.path(), scratch.path());
    assert_eq!(
        differs,
        ["9: `echo one` printed\none\nwhere the docs show\ntwo"]
    );

    let no_reason = blocks("<!-- not run: -->\n```sh\ntrue\n```\n").unwrap_err();
    assert_eq!(no_reason, ["1: a `not run` marker says no reason"]);
    let no_match = blocks("<!-- not run \"nope\": why -->\n```sh\ntrue\n```\n").unwrap_err();
    assert_eq!(
        no_match,
        ["2: the marker `not run \"nope\"` matches no line of the block"]
    );
}
