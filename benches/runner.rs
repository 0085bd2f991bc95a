//! Runner benchmarks (docs/performance.md): driving a whole plan through the library is
//! O(tasks + edges) — compare 10k with 100k tasks — and one CLI operation on
//! a 1,000-task state takes milliseconds; `observe` is linear in a message's
//! `[Step]` lines.
//!
//! Run: `cargo bench --bench runner` (figures in docs/performance.md).

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::path::PathBuf;
use std::process::Command;

use divan::Bencher;
use planc::document::PlanDocument;
use planc::runner::results::Started;
use planc::runner::{Caller, CompleteArgs, Op, OpResult, Runner, StartNextArgs, TaskRef};
use serde_json::json;

fn main() {
    divan::main();
}

/// A plan of `n` tasks where task `i` waits for tasks `i - 1` and `i / 2`
/// (about two edges per task, long chains and wide fan-out).
fn plan(n: usize) -> PlanDocument {
    let tasks: Vec<_> = (1..=n as u32)
        .map(|id| {
            let mut deps = Vec::new();
            if id > 1 {
                deps.push(id - 1);
            }
            if id / 2 >= 1 && id / 2 != id - 1 {
                deps.push(id / 2);
            }
            json!({"id": id, "name": format!("task {id}"), "status": "pending", "dependencies": deps})
        })
        .collect();
    serde_json::from_value(json!({
        "format": "planc/1",
        "meta": {"id": "bench", "title": null, "goal": "benchmark", "language": "en"},
        "state": {"status": "idle", "current_task_id": null, "revision": 0},
        "tasks": tasks,
    }))
    .expect("a valid plan document")
}

/// Index the plan, then start and complete every task, one at a time.
#[divan::bench(args = [10_000, 100_000], sample_count = 5)]
fn drive_whole_plan(bencher: Bencher<'_, '_>, n: usize) {
    let doc = plan(n);
    bencher.with_inputs(|| doc.clone()).bench_values(|doc| {
        let mut runner = Runner::new(doc).expect("a consistent plan");
        let next = Op::StartNextTask(StartNextArgs::default());
        loop {
            let started = runner.apply(&next).expect("start");
            let OpResult::Started(Started {
                task: Some(task), ..
            }) = started.data
            else {
                break;
            };
            let id = task.id;
            let complete = Op::CompleteTask(CompleteArgs {
                task_id: Some(TaskRef::Id(id)),
                result: None,
                attachments: None,
            });
            runner.apply(&complete).expect("complete");
        }
        assert_eq!(runner.document().state.revision, 2 * n as u64);
        runner
    });
}

/// One `observe` of a message of `n` `[Step]` lines into an empty plan:
/// linear in `n` (compare 2,500 with 10,000, the most a message may
/// declare); it was quadratic (#37).
#[divan::bench(args = [2_500, 5_000, 10_000], sample_count = 5)]
fn observe_steps(bencher: Bencher<'_, '_>, n: usize) {
    let message: String = (0..n).map(|i| format!("[Step] step {i}\n")).collect();
    let doc = plan(0);
    bencher.with_inputs(|| doc.clone()).bench_values(|doc| {
        let mut runner = Runner::new(doc).expect("a consistent plan");
        planc::runner::observe(&mut runner, &message, &Caller::default()).expect("observed");
        assert_eq!(runner.document().tasks.len(), n);
        runner
    });
}

/// A 1,000-task state file in a temporary directory.
fn state_1000() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, plan(1_000).to_json()).expect("write the plan");
    let state = dir.path().join("state.json");
    let status = Command::new(env!("CARGO_BIN_EXE_planc"))
        .args(["run", "init"])
        .arg(&plan_path)
        .arg("-o")
        .arg(&state)
        .output()
        .expect("planc runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    (dir, state)
}

/// `planc run status` on a 1,000-task state: a read.
#[divan::bench(sample_count = 30)]
fn cli_status_1000(bencher: Bencher<'_, '_>) {
    let (_dir, state) = state_1000();
    bencher.bench(|| {
        let out = Command::new(env!("CARGO_BIN_EXE_planc"))
            .args(["run", "status"])
            .arg(&state)
            .output()
            .unwrap();
        assert!(out.status.success());
    });
}

/// `planc run next` then `complete` on a 1,000-task state: each a locked,
/// synced, atomic write plus a log record.
#[divan::bench(sample_count = 30)]
fn cli_next_1000(bencher: Bencher<'_, '_>) {
    let (_dir, state) = state_1000();
    bencher.bench(|| {
        let out = Command::new(env!("CARGO_BIN_EXE_planc"))
            .args(["run", "next"])
            .arg(&state)
            .output()
            .unwrap();
        assert!(out.status.success());
        let out = Command::new(env!("CARGO_BIN_EXE_planc"))
            .args(["run", "complete"])
            .arg(&state)
            .output()
            .unwrap();
        assert!(out.status.success());
    });
}
