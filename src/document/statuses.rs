//! How the peers' task statuses map to planc's, both ways (docs/interop.md).
//!
//! A table's rows are (peer status, planc status). Reading, a peer status
//! takes the first row with its name; writing, a planc status the first row
//! with its name, so a row may serve one direction only.

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
/// task-master's statuses. `review` is work done but not accepted yet;
/// `deferred` and `blocked` wait: planc keeps the word in `extra.status`.
pub const TASKMASTER_STATUSES: StatusTable = &[
    ("pending", "pending"),
    ("in-progress", "in_progress"),
    ("done", "completed"),
    ("cancelled", "skipped"),
    ("blocked", "pending"),
    ("review", "in_progress"),
    ("deferred", "pending"),
    ("blocked", "failed"),
];
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

/// The status a peer writes for a planc status (the first row that maps to it).
pub fn peer_status(table: StatusTable, planc: &str) -> Option<&'static str> {
    table.iter().find(|(_, p)| *p == planc).map(|(s, _)| *s)
}
