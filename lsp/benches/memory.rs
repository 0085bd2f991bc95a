//! The memory of the `planc-lsp` binary holding a large plan, over the real
//! protocol: a plan from `planc::generate` (the keystroke benchmark's) is
//! opened, then edited many times — a letter in a task's title, in the name
//! of a task others wait for (a rename), in a reference, a quote left
//! unclosed, and a new task typed at the start of a step and deleted again
//! letter by letter — each edit taken back, every one waited for until its
//! diagnostics are published. The server's resident memory (`VmRSS`) and
//! its peak (`VmHWM`) are read from `/proc/<pid>/status` after the open and
//! at checkpoints over the edits.
//!
//! Run with `cargo bench -p planc-lsp --bench memory` (release build; the
//! default is 100,000 tasks and 10,000 edits); `-- 10000` picks the sizes,
//! `PLANC_BENCH_EDITS=1000` the number of edits. Linux only (`/proc`).
//! With `PLANC_BENCH_TOKENS=1` the client also asks for the semantic tokens
//! as an editor does: whole after the open, then after each edit the change
//! since its last answer (`semanticTokens/full/delta`), so the server keeps
//! them.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../tests/common/mod.rs"]
mod common;

// Only its `sizes` and `memory_round` are used here.
#[allow(dead_code)]
mod support;

use std::time::{Duration, Instant};

use common::{find, TestClient};

/// One edit sent to the server: `start..end` (line, UTF-16 column)
/// replaced by `inserted`.
#[derive(Clone)]
struct Edit {
    start: (u32, u32),
    end: (u32, u32),
    inserted: String,
}

/// A letter typed after the first occurrence of `after`, and taken back.
fn typed_and_taken_back(text: &str, after: &str, typed: &str) -> [Edit; 2] {
    let (line, col) = find(text, after, after.len() as u32);
    [
        Edit {
            start: (line, col),
            end: (line, col),
            inserted: typed.to_owned(),
        },
        Edit {
            start: (line, col),
            end: (line, col + 1),
            inserted: String::new(),
        },
    ]
}

/// `typed` (ASCII) typed after the first occurrence of `after` letter by
/// letter, then deleted letter by letter.
fn typed_and_deleted(text: &str, after: &str, typed: &str) -> Vec<Edit> {
    let (mut line, mut col) = find(text, after, after.len() as u32);
    let mut spans = Vec::new();
    for c in typed.chars() {
        let start = (line, col);
        if c == '\n' {
            (line, col) = (line + 1, 0);
        } else {
            col += 1;
        }
        spans.push((start, (line, col), c.to_string()));
    }
    let typing = spans.iter().map(|(start, _, c)| Edit {
        start: *start,
        end: *start,
        inserted: c.clone(),
    });
    let deleting = spans.iter().rev().map(|(start, end, _)| Edit {
        start: *start,
        end: *end,
        inserted: String::new(),
    });
    typing.chain(deleting).collect()
}

/// One round of the mixed edits, each taken back: the text after a round
/// is the text before it.
fn round(text: &str, tasks: usize) -> Vec<Edit> {
    let [letters @ .., (line_after, line)] = support::memory_round(text, tasks);
    let mut edits = Vec::new();
    for (after, typed) in letters {
        edits.extend(typed_and_taken_back(text, &after, &typed));
    }
    edits.extend(typed_and_deleted(text, &line_after, &line));
    edits
}

/// The resident memory and its peak, in KiB, of process `pid`.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a memory field")
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The memory after the server settled: the analysis a compile replaced
/// is freed after its diagnostics are published.
async fn settled_memory(pid: u32) -> (u64, u64) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    memory(pid)
}

/// The memory after a pause of [`PAUSE`] (from the last publish): by then
/// an idle document with enough changes since its last whole compile has
/// been compiled whole again (the server's `compaction`, after one second
/// idle, half a second's compile at 100,000 tasks).
async fn paused_memory(pid: u32) -> (u64, u64) {
    tokio::time::sleep(PAUSE - Duration::from_millis(500)).await;
    memory(pid)
}

/// The pause after which [`paused_memory`] reads.
const PAUSE: Duration = Duration::from_secs(4);

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let edits: usize = std::env::var("PLANC_BENCH_EDITS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for tasks in support::sizes(&[100_000]) {
        runtime.block_on(measure(tasks, edits));
    }
}

/// Opens the plan of `tasks` tasks, makes `edits` edits, and prints the
/// server's memory after the open and at checkpoints.
async fn measure(tasks: usize, edits: usize) {
    let text = planc::generate::plan_source(tasks, false);
    let bytes = text.len() as f64 / (1024.0 * 1024.0);
    let mut client = TestClient::start().await;
    let pid = client.pid().expect("the server runs");
    let (rss, _) = memory(pid);
    println!(
        "{tasks} tasks: file {bytes:.2} MiB; server before the open {:.1} MiB",
        mib(rss)
    );
    let published = client.open(&text).await;
    assert_eq!(published["diagnostics"], serde_json::json!([]));
    let mut tokens = Tokens::asked().then_some(Tokens(serde_json::Value::Null));
    if let Some(tokens) = &mut tokens {
        tokens.ask(&mut client).await;
    }
    let (opened, opened_peak) = settled_memory(pid).await;
    let (opened_paused, _) = paused_memory(pid).await;
    println!(
        "after the open: VmRSS {:.1} MiB ({:.1}× the file), {:.1} MiB after {} s, VmHWM {:.1} MiB ({:.1}×)",
        mib(opened),
        mib(opened) / bytes,
        mib(opened_paused),
        PAUSE.as_secs(),
        mib(opened_peak),
        mib(opened_peak) / bytes
    );
    println!(
        "| edits | VmRSS | × file | growth since the open | after {} s | × file | VmHWM | × file | seconds |",
        PAUSE.as_secs()
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let round = round(&text, tasks);
    let checkpoints: Vec<usize> = [edits / 10, edits / 4, edits / 2, edits]
        .into_iter()
        .filter(|&n| n > 0)
        .collect();
    let started = Instant::now();
    let mut version = 1;
    let mut made = 0;
    let mut next_checkpoint = 0;
    while next_checkpoint < checkpoints.len() {
        // Whole rounds: the text at a checkpoint is the text opened.
        for edit in &round {
            version += 1;
            client
                .edit(version, edit.start, edit.end, &edit.inserted)
                .await;
            loop {
                let published = client.diagnostics().await;
                if published["version"] == version {
                    break;
                }
            }
            if let Some(tokens) = &mut tokens {
                tokens.ask(&mut client).await;
            }
        }
        made += round.len();
        if made >= checkpoints[next_checkpoint] {
            while next_checkpoint < checkpoints.len() && made >= checkpoints[next_checkpoint] {
                next_checkpoint += 1;
            }
            let seconds = started.elapsed().as_secs_f64();
            let (rss, _) = settled_memory(pid).await;
            let (paused, peak) = paused_memory(pid).await;
            println!(
                "| {made} | {:.1} MiB | {:.1} | {:+.1} MiB | {:.1} MiB | {:.1} | {:.1} MiB | {:.1} | {seconds:.0} |",
                mib(rss),
                mib(rss) / bytes,
                mib(rss) - mib(opened),
                mib(paused),
                mib(paused) / bytes,
                mib(peak),
                mib(peak) / bytes
            );
        }
    }
}

/// The result id of the last semantic tokens answer, when the client asks
/// for them (`PLANC_BENCH_TOKENS=1`).
struct Tokens(serde_json::Value);

impl Tokens {
    fn asked() -> bool {
        std::env::var("PLANC_BENCH_TOKENS").is_ok_and(|v| v == "1")
    }

    /// Asks for the tokens whole the first time, then for the change since
    /// the last answer.
    async fn ask(&mut self, client: &mut TestClient) {
        let document = serde_json::json!({ "uri": common::URI });
        let answer = match &self.0 {
            serde_json::Value::Null => {
                let params = serde_json::json!({ "textDocument": document });
                client
                    .result("textDocument/semanticTokens/full", params)
                    .await
            }
            last => {
                let params =
                    serde_json::json!({ "textDocument": document, "previousResultId": last });
                client
                    .result("textDocument/semanticTokens/full/delta", params)
                    .await
            }
        };
        self.0 = answer["resultId"].clone();
    }
}
