//! What changed: events (Plan-Act's PlanEvent / TaskEvent kinds) and the
//! record of one change that the event log holds, one JSON line each.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{PlanStatus, TaskDoc};

/// The kind of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The state file was created (`planc run init`).
    Created,
    /// A task went to `in_progress`.
    Started,
    /// A task was completed.
    Completed,
    /// A task failed for good.
    Failed,
    /// A task failed and went back to `pending` to be retried.
    Retried,
    /// A task was skipped.
    Skipped,
    /// A task was added.
    Added,
    /// A pending task was changed.
    Updated,
    /// A pending task was removed.
    Removed,
    /// The plan was paused.
    Paused,
    /// The plan was resumed.
    Resumed,
    /// The pending remainder of the plan was replaced.
    Replanned,
    /// Every task was set back to pending.
    Reset,
    /// An agent message was observed (`planc run observe`).
    Iteration,
    /// A holder's lease ran out: the task went back to `pending`.
    LeaseExpired,
    /// A holder renewed its lease (`heartbeat`).
    LeaseRenewed,
    /// A task another agent held was taken over (`takeover: true`,
    /// `--takeover`); `data` names the previous and the new holder.
    TaskTakenOver,
    /// Every task is completed or skipped.
    PlanCompleted,
    /// Nothing can run and a required task failed.
    PlanFailed,
    /// An agent logged a tool call (`logEvent`, `planc run log --kind tool`).
    Tool,
    /// An agent logged a message.
    Message,
    /// An agent logged an error.
    Error,
}

impl EventKind {
    /// The kind as spelt in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Created => "created",
            EventKind::Started => "started",
            EventKind::Completed => "completed",
            EventKind::Failed => "failed",
            EventKind::Retried => "retried",
            EventKind::Skipped => "skipped",
            EventKind::Added => "added",
            EventKind::Updated => "updated",
            EventKind::Removed => "removed",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Replanned => "replanned",
            EventKind::Reset => "reset",
            EventKind::Iteration => "iteration",
            EventKind::LeaseExpired => "lease_expired",
            EventKind::LeaseRenewed => "lease_renewed",
            EventKind::TaskTakenOver => "task_taken_over",
            EventKind::PlanCompleted => "plan_completed",
            EventKind::PlanFailed => "plan_failed",
            EventKind::Tool => "tool",
            EventKind::Message => "message",
            EventKind::Error => "error",
        }
    }
}

/// One thing that changed: about a task (`task_id` set) or the whole plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The task it happened to; none for plan events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<u32>,
    /// The same in a sentence.
    pub message: String,
    /// The agent that made the change (for `lease_expired`: the holder
    /// whose lease ran out); none for a caller without an identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// What an agent logged (`tool`, `message` and `error` events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// The task as the change left it (Plan-Act's StepEvent carries its
    /// step); for `removed`, as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Box<TaskDoc>>,
    /// The plan's header as the change left it, on plan events (Plan-Act's
    /// PlanEvent carries its plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanHeader>,
}

/// The plan an event is about: who it is and where it stands (the tasks
/// are the task events').
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanHeader {
    /// `meta.id`.
    pub id: String,
    /// `meta.title`.
    pub title: Option<String>,
    /// `meta.goal`.
    pub goal: String,
    /// `meta.language`.
    pub language: String,
    /// The plan's status after the change.
    pub status: PlanStatus,
    /// Tasks completed or skipped.
    pub done: usize,
    /// Tasks in the plan.
    pub total: usize,
}

impl Event {
    /// An event about task `id`.
    pub fn task(kind: EventKind, id: u32, message: impl Into<String>) -> Event {
        Event {
            kind,
            task_id: Some(id),
            message: message.into(),
            agent: None,
            data: None,
            task: None,
            plan: None,
        }
    }

    /// An event about the whole plan.
    pub fn plan(kind: EventKind, message: impl Into<String>) -> Event {
        Event {
            kind,
            task_id: None,
            message: message.into(),
            agent: None,
            data: None,
            task: None,
            plan: None,
        }
    }
}

/// One change, as one line of the event log (`STATE.events.jsonl`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogRecord {
    /// The state's revision after the change.
    pub revision: u64,
    /// When, RFC 3339 UTC.
    pub at: String,
    /// The operation (`completeTask`, `observe`, `init`).
    pub op: String,
    /// The plan status after the change.
    pub plan_status: PlanStatus,
    /// What changed, in order (usually one event).
    pub events: Vec<Event>,
}
