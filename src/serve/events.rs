//! The objects of the SSE event streams: seed 004's events (PlanEvent,
//! StepEvent, ToolEvent, MessageEvent, ErrorEvent), one SSE message each,
//! with where the event stands in its plan's history. Each is made from the
//! stored event alone, so a resumed stream carries the same payloads as a
//! live one. The JSON Schema of these types is served at
//! `GET /api/schema/events.json` and shipped as `schema/events.schema.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::PlanStatus;
use crate::mcp::dialect::{plan_act_step, PlanActStep};
use crate::runner::{Event, EventKind, PlanHeader, StoredEvent};

/// Where an event stands: the change it belongs to, and the runner's own
/// words for it. The same on every stream and on every reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// The plan.
    pub plan_id: String,
    /// The plan's revision after the change (from 1 again once the plan is
    /// started over).
    pub seq: u64,
    /// The change's position in the store: never used twice.
    pub position: u64,
    /// When, RFC 3339 UTC.
    pub at: String,
    /// The operation that made the change (`startNextTask`, `logEvent`,
    /// `init`, …).
    pub op: String,
    /// The plan's status after the change.
    pub plan_status: PlanStatus,
    /// This event's place among the change's events, from 1.
    pub index: usize,
    /// How many events the change made.
    pub count: usize,
    /// The runner's kind of event (the event log's: created, started,
    /// completed, failed, retried, skipped, added, updated, removed, paused,
    /// resumed, replanned, reset, iteration, lease_expired, lease_renewed,
    /// plan_completed, plan_failed, tool, message, error).
    pub kind: String,
    /// The task it is about, if any.
    pub task_id: Option<u32>,
    /// The agent that made the change.
    pub agent: Option<String>,
    /// The change in a sentence (the event log's message).
    pub summary: String,
}

/// What happened to the plan (seed 004's PlanStatus, and planc's own).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanEventStatus {
    Created,
    Updated,
    Completed,
    Failed,
    Paused,
    Resumed,
    Reset,
}

/// What happened to a step (seed 004's StepStatus, and planc's own).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepEventStatus {
    Started,
    Completed,
    Failed,
    Retried,
    Skipped,
    Added,
    Updated,
    Removed,
    LeaseExpired,
    LeaseRenewed,
    TakenOver,
}

/// The plan as a plan event carries it: seed 004's `Plan` header (title,
/// language) with planc's id, goal and progress. Its steps come in their
/// own step events (the log keeps what a change touched, not the plan).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanObject {
    /// The plan's id.
    pub id: String,
    /// The title (the goal when it has none).
    pub title: String,
    /// What the plan is for.
    pub goal: String,
    /// The language to answer in (zh, en).
    pub language: String,
    /// The plan's status after the change.
    pub status: PlanStatus,
    /// Steps completed or skipped.
    pub done: usize,
    /// Steps in the plan.
    pub total: usize,
}

/// `PlanEvent`: the plan was created, updated, completed, failed, paused,
/// resumed or reset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanEvent {
    /// Where it stands.
    #[serde(flatten)]
    pub change: Change,
    /// What happened.
    pub status: PlanEventStatus,
    /// The plan after it.
    pub plan: PlanObject,
}

/// `StepEvent`: a step (a task) changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepEvent {
    /// Where it stands.
    #[serde(flatten)]
    pub change: Change,
    /// What happened.
    pub status: StepEventStatus,
    /// The step after it (for `removed`: as it was).
    pub step: PlanActStep,
}

/// `ToolEvent`: an agent's tool call, as it logged it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolEvent {
    /// Where it stands.
    #[serde(flatten)]
    pub change: Change,
    /// The tool's name (`name`, `tool_name` or `function_name` of what was
    /// logged), if it gave one.
    pub name: Option<String>,
    /// Its arguments (`args`, `arguments` or `function_args`).
    pub args: Value,
    /// Its result (`result` or `function_result`).
    pub result: Value,
    /// What was logged, whole.
    pub data: Value,
    /// The step it belongs to, if one was running.
    pub step: Option<PlanActStep>,
}

/// `MessageEvent`: a message (an agent's logged message, or a message
/// `observe` read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageEvent {
    /// Where it stands.
    #[serde(flatten)]
    pub change: Change,
    /// The text.
    pub message: String,
    /// The step it belongs to, if any.
    pub step: Option<PlanActStep>,
}

/// `ErrorEvent`: an error an agent logged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorEvent {
    /// Where it stands.
    #[serde(flatten)]
    pub change: Change,
    /// What went wrong.
    pub error: String,
    /// The step it belongs to, if one was running.
    pub step: Option<PlanActStep>,
}

/// One SSE message's data: seed 004's event, tagged by `type` (which is
/// also the SSE `event:` name).
// Made and written out one at a time: the size of the largest is no cost.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum StreamEvent {
    /// `event: plan`.
    Plan(PlanEvent),
    /// `event: step`.
    Step(StepEvent),
    /// `event: tool`.
    Tool(ToolEvent),
    /// `event: message`.
    Message(MessageEvent),
    /// `event: error`.
    Error(ErrorEvent),
}

impl StreamEvent {
    /// The SSE `event:` name: seed 004's type.
    pub fn name(&self) -> &'static str {
        match self {
            StreamEvent::Plan(_) => "plan",
            StreamEvent::Step(_) => "step",
            StreamEvent::Tool(_) => "tool",
            StreamEvent::Message(_) => "message",
            StreamEvent::Error(_) => "error",
        }
    }
}

/// The JSON Schema of [`StreamEvent`], pretty, with a final newline.
pub fn schema() -> String {
    let schema = schemars::schema_for!(StreamEvent);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The events of one stored change, in order.
pub fn stream_events(stored: &StoredEvent) -> Vec<StreamEvent> {
    let events = &stored.record.events;
    events
        .iter()
        .enumerate()
        .map(|(n, event)| {
            let change = Change {
                plan_id: stored.plan_id.clone(),
                seq: stored.seq,
                position: stored.position,
                at: stored.record.at.clone(),
                op: stored.record.op.clone(),
                plan_status: stored.record.plan_status,
                index: n + 1,
                count: events.len(),
                kind: event.kind.as_str().to_owned(),
                task_id: event.task_id,
                agent: event.agent.clone(),
                summary: event.message.clone(),
            };
            stream_event(change, event, stored)
        })
        .collect()
}

/// One stored event as seed 004's.
fn stream_event(change: Change, event: &Event, stored: &StoredEvent) -> StreamEvent {
    let step = event.task.as_deref().map(plan_act_step);
    let data = event.data.clone().unwrap_or(Value::Null);
    match event.kind {
        EventKind::Tool => {
            let field = |names: &[&str]| {
                names
                    .iter()
                    .find_map(|name| data.get(*name).cloned())
                    .unwrap_or(Value::Null)
            };
            StreamEvent::Tool(ToolEvent {
                name: field(&["name", "tool_name", "function_name"])
                    .as_str()
                    .map(str::to_owned),
                args: field(&["args", "arguments", "function_args"]),
                result: field(&["result", "function_result"]),
                data,
                step,
                change,
            })
        }
        EventKind::Message | EventKind::Iteration => StreamEvent::Message(MessageEvent {
            message: text_of(&data).unwrap_or_else(|| change.summary.clone()),
            step,
            change,
        }),
        EventKind::Error => StreamEvent::Error(ErrorEvent {
            error: text_of(&data).unwrap_or_else(|| change.summary.clone()),
            step,
            change,
        }),
        kind => match (step_status(kind), event.task.as_deref()) {
            (Some(status), Some(task)) if event.task_id.is_some() => StreamEvent::Step(StepEvent {
                status,
                step: plan_act_step(task),
                change,
            }),
            _ => StreamEvent::Plan(PlanEvent {
                status: plan_status(kind, stored.record.plan_status),
                plan: plan_object(event.plan.as_ref(), stored),
                change,
            }),
        },
    }
}

/// A logged message's or error's text: the string, else its JSON.
fn text_of(data: &Value) -> Option<String> {
    match data {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// The step status of a task event's kind.
fn step_status(kind: EventKind) -> Option<StepEventStatus> {
    Some(match kind {
        EventKind::Started => StepEventStatus::Started,
        EventKind::Completed => StepEventStatus::Completed,
        EventKind::Failed => StepEventStatus::Failed,
        EventKind::Retried => StepEventStatus::Retried,
        EventKind::Skipped => StepEventStatus::Skipped,
        EventKind::Added => StepEventStatus::Added,
        EventKind::Updated => StepEventStatus::Updated,
        EventKind::Removed => StepEventStatus::Removed,
        EventKind::LeaseExpired => StepEventStatus::LeaseExpired,
        EventKind::LeaseRenewed => StepEventStatus::LeaseRenewed,
        EventKind::TaskTakenOver => StepEventStatus::TakenOver,
        _ => return None,
    })
}

/// The plan status of a plan event's kind.
fn plan_status(kind: EventKind, after: PlanStatus) -> PlanEventStatus {
    match kind {
        EventKind::Created => PlanEventStatus::Created,
        EventKind::PlanCompleted => PlanEventStatus::Completed,
        EventKind::PlanFailed => PlanEventStatus::Failed,
        EventKind::Paused => PlanEventStatus::Paused,
        EventKind::Resumed => PlanEventStatus::Resumed,
        EventKind::Reset => PlanEventStatus::Reset,
        _ => match after {
            PlanStatus::Completed => PlanEventStatus::Completed,
            PlanStatus::Failed => PlanEventStatus::Failed,
            _ => PlanEventStatus::Updated,
        },
    }
}

/// The plan a plan event carries (its header as the change left it).
fn plan_object(header: Option<&PlanHeader>, stored: &StoredEvent) -> PlanObject {
    match header {
        Some(header) => PlanObject {
            id: header.id.clone(),
            title: header.title.clone().unwrap_or_else(|| header.goal.clone()),
            goal: header.goal.clone(),
            language: header.language.clone(),
            status: header.status,
            done: header.done,
            total: header.total,
        },
        // Older logs have no header: what the change itself says.
        None => PlanObject {
            id: stored.plan_id.clone(),
            title: stored.plan_id.clone(),
            goal: String::new(),
            language: "en".to_owned(),
            status: stored.record.plan_status,
            done: 0,
            total: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{TaskDoc, TaskStatus};
    use crate::runner::LogRecord;
    use serde_json::json;

    /// One stored change of plan `p` at revision 5 making `events`.
    fn change(events: Vec<Event>) -> StoredEvent {
        StoredEvent {
            plan_id: "p".to_owned(),
            seq: 5,
            position: 50,
            record: LogRecord {
                revision: 5,
                at: "2026-11-28T00:00:00Z".to_owned(),
                op: "observe".to_owned(),
                plan_status: PlanStatus::Running,
                events,
            },
        }
    }

    fn running_task() -> Box<TaskDoc> {
        Box::new(TaskDoc {
            status: TaskStatus::InProgress,
            ..TaskDoc::pending(2, "Search", Vec::new())
        })
    }

    #[test]
    fn each_kind_becomes_its_seed_004_event() {
        let mut tool = Event::task(EventKind::Tool, 2, "Logged a tool call");
        tool.data = Some(
            json!({"tool_name": "shell", "function_args": {"cmd": "ls"}, "function_result": "a b"}),
        );
        tool.task = Some(running_task());
        let mut iteration = Event::task(EventKind::Iteration, 2, "Iteration 3");
        iteration.task = Some(running_task());
        let replanned = Event::plan(EventKind::Replanned, "Replanned");
        let events = stream_events(&change(vec![tool, iteration, replanned]));
        let json: Vec<Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        assert_eq!(
            events.iter().map(StreamEvent::name).collect::<Vec<_>>(),
            ["tool", "message", "plan"]
        );
        assert_eq!(
            (&json[0]["name"], &json[0]["args"], &json[0]["result"]),
            (&json!("shell"), &json!({"cmd": "ls"}), &json!("a b"))
        );
        assert_eq!(json[0]["step"]["status"], "running");
        assert_eq!(json[1]["message"], "Iteration 3");
        // A plan event without a header (an older log) still says which plan.
        assert_eq!(
            (
                &json[2]["status"],
                &json[2]["plan"]["id"],
                &json[2]["index"],
                &json[2]["count"]
            ),
            (&json!("updated"), &json!("p"), &json!(3), &json!(3))
        );
    }

    #[test]
    fn a_takeover_is_a_step_event_of_the_task_taken_over() {
        let mut taken = Event::task(EventKind::TaskTakenOver, 2, "Task 2 taken over by bob");
        taken.task = Some(running_task());
        let events = stream_events(&change(vec![taken]));
        let json = serde_json::to_value(&events[0]).unwrap();
        assert_eq!(events[0].name(), "step");
        assert_eq!(
            (&json["status"], &json["kind"], &json["step"]["status"]),
            (
                &json!("taken_over"),
                &json!("task_taken_over"),
                &json!("running")
            )
        );
    }
}
