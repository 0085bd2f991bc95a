//! How the peers' task statuses map to planc's, both ways (docs/interop.md).
//!
//! A table's rows are (peer status, planc status). Reading, a peer status
//! takes the first row with its name; writing, a planc status the first row
//! with its name, so a row may serve one direction only.

use crate::document::{TaskDoc, TaskStatus};

/// A peer's status and the planc status it stands for.
pub type StatusTable = &'static [(&'static str, &'static str)];

pub const PLAN_TOOL_STATUSES: StatusTable = &[
    ("ready", "pending"),
    ("inprogress", "in_progress"),
    ("completed", "completed"),
    ("error", "failed"),
    ("skipped", "skipped"),
];
pub const LINEAR_STATUSES: StatusTable = &[
    ("pending", "pending"),
    ("running", "in_progress"),
    ("completed", "completed"),
    ("failed", "failed"),
    // Read the first row of a peer status, written the first row of a planc one.
    ("completed", "skipped"),
];
/// task-master's statuses. `cancelled` is done with (it satisfies its
/// dependents, as task-master's `TERMINAL_COMPLETE_STATUSES` says);
/// `review` (done, not accepted yet), `deferred` and `blocked` are pending
/// tasks set aside: see [`SET_ASIDE_STATUSES`].
pub const TASKMASTER_STATUSES: StatusTable = &[
    ("pending", "pending"),
    ("in-progress", "in_progress"),
    ("done", "completed"),
    ("cancelled", "skipped"),
    ("blocked", "pending"),
    ("review", "pending"),
    ("deferred", "pending"),
    ("blocked", "failed"),
];

/// The peers' words for a pending task that no one should take up by
/// itself: task-master's `deferred` (postponed), `blocked` (waits for
/// something outside the plan) and `review` (done, waiting for a person to
/// accept it). Kept in a task's `extra.status`; such a task is *set aside*:
/// `startNextTask` passes it by and its dependents wait, as task-master's
/// `next` does. Starting, completing or skipping it by its id takes it up,
/// and the word goes.
pub const SET_ASIDE_STATUSES: [&str; 3] = ["deferred", "blocked", "review"];

/// Whether `task` is pending but set aside (see [`SET_ASIDE_STATUSES`]).
pub fn set_aside(task: &TaskDoc) -> bool {
    task.status == TaskStatus::Pending
        && task
            .extra
            .get("status")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|word| SET_ASIDE_STATUSES.contains(&word))
}
pub const OPENMANUS_STATUSES: StatusTable = &[
    ("not_started", "pending"),
    ("in_progress", "in_progress"),
    ("completed", "completed"),
    ("blocked", "failed"),
    ("completed", "skipped"),
];
pub const CODEX_STATUSES: StatusTable = &[
    ("pending", "pending"),
    ("in_progress", "in_progress"),
    ("completed", "completed"),
    ("pending", "failed"),
    ("completed", "skipped"),
];

/// A peer's statuses, each once, in the table's order (a status may stand in
/// two rows: one to read, one to write).
pub fn peer_statuses(table: StatusTable) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::with_capacity(table.len());
    for (name, _) in table {
        if !names.contains(name) {
            names.push(name);
        }
    }
    names
}

/// The status a peer writes for a planc status (the first row that maps to it).
pub fn peer_status(table: StatusTable, planc: &str) -> Option<&'static str> {
    table.iter().find(|(_, p)| *p == planc).map(|(s, _)| *s)
}
