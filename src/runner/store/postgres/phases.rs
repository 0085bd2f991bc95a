//! Where the writer's time goes, for measuring (`PLANC_POSTGRES_PHASES=FILE`:
//! each writer appends its process's running totals to FILE once a second),
//! and how the kept runners are brought up to the rows (by whom, how many
//! task rows read and how many of them the runner held already). Off, it
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
    /// The write statement and `COMMIT` (the WAL flush), sent together.
    Write,
    /// Settling and answering the batch's changes.
    Answer,
    /// Batches, changes, changes computed again (counts, not times).
    Batches,
    Changes,
    Moved,
    /// Changes taken into a batch while it waited for its locks.
    Gathered,
    /// Waiting for a moved plan's in-process slot before its bring-up, in
    /// the writer (a caller holding it: a refused change checking the row).
    SlotWait,
    /// Kept runners brought up to the rows: by the writer (under the
    /// plan's lock), by a change found its runner stale before computing
    /// it, by a query or read finding the row moved (counts).
    UpWriter,
    UpAhead,
    UpRead,
    /// Of those, the ones that read the whole plan.
    UpWhole,
    /// Task rows read by bring-ups that read only what changed; of them,
    /// those the runner held already as read (the read not used), and
    /// those read because a change not committed had touched them.
    RowsRead,
    RowsSame,
    RowsLost,
    /// Bring-ups that read only what changed and found no task row.
    UpEmpty,
    /// Changes refused (or changing nothing) on the kept runner, the
    /// time their check of the row's version took (holding the slot), and
    /// how many stood (the row was the version they were computed on).
    Refused,
    RefusedCheck,
    RefusedStood,
}

const NAMES: [&str; 21] = [
    "lock",
    "bring_up",
    "recompute",
    "write",
    "answer",
    "batches",
    "changes",
    "moved",
    "gathered",
    "slot_wait",
    "up_writer",
    "up_ahead",
    "up_read",
    "up_whole",
    "rows_read",
    "rows_same",
    "rows_lost",
    "up_empty",
    "refused",
    "refused_check",
    "refused_stood",
];

static TOTALS: [AtomicU64; 21] = [const { AtomicU64::new(0) }; 21];
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
