//! Where the writer's time goes, for measuring (`PLANC_POSTGRES_PHASES=FILE`:
//! each writer appends its running totals to FILE once a second). Off, it
//! costs one relaxed load a phase.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// A phase of a batch's transaction, or a count.
#[derive(Clone, Copy)]
pub(super) enum Phase {
    /// `BEGIN`, the plans' locks (mostly waiting for them) and their
    /// row versions.
    Lock,
    /// Kept runners brought up to the rows.
    BringUp,
    /// Changes computed again.
    Recompute,
    /// The write statement.
    Write,
    /// `COMMIT` (the WAL flush).
    Commit,
    /// Settling and answering the batch's changes.
    Answer,
    /// Batches, changes, changes computed again (counts, not times).
    Batches,
    Changes,
    Moved,
    /// Changes taken into a batch while it waited for its locks.
    Gathered,
}

const NAMES: [&str; 10] = [
    "lock",
    "bring_up",
    "recompute",
    "write",
    "commit",
    "answer",
    "batches",
    "changes",
    "moved",
    "gathered",
];

static TOTALS: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];
static ON: OnceLock<Option<Mutex<(std::fs::File, Instant)>>> = OnceLock::new();

fn sink() -> Option<&'static Mutex<(std::fs::File, Instant)>> {
    ON.get_or_init(|| {
        let path = std::env::var_os("PLANC_POSTGRES_PHASES")?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        Some(Mutex::new((file, Instant::now())))
    })
    .as_ref()
}

/// Whether phases are measured.
pub(super) fn on() -> bool {
    sink().is_some()
}

/// Adds `since`'s elapsed microseconds to `phase`.
pub(super) fn took(phase: Phase, since: Instant) {
    if on() {
        let micros = since.elapsed().as_micros() as u64;
        TOTALS[phase as usize].fetch_add(micros, Ordering::Relaxed);
    }
}

/// Adds `n` to count `phase`.
pub(super) fn count(phase: Phase, n: u64) {
    if on() {
        TOTALS[phase as usize].fetch_add(n, Ordering::Relaxed);
    }
}

/// Appends the totals to the file when a second has passed since the last.
pub(super) fn report() {
    let Some(sink) = sink() else {
        return;
    };
    let Ok(mut sink) = sink.lock() else {
        return;
    };
    if sink.1.elapsed().as_secs() < 1 {
        return;
    }
    sink.1 = Instant::now();
    let mut line = format!("{} {}", std::process::id(), crate::runner::time::now_unix());
    for (name, total) in NAMES.iter().zip(&TOTALS) {
        line.push_str(&format!(" {name}={}", total.load(Ordering::Relaxed)));
    }
    line.push('\n');
    let _ = sink.0.write_all(line.as_bytes());
}
