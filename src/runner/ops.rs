//! The operations (docs/runner.md), with the PlanManager API's argument names, so a tool call
//! `{"name": "completeTask", "arguments": {"task_id": 3, "result": "…"}}`
//! deserialises straight into an [`Op`].

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task named by its integer id (`3`) or its `.plan` key (`"open"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum TaskRef {
    /// The task's `id`.
    Id(#[schemars(range(min = 1))] u32),
    /// The task's `key` (its name in the `.plan` source), or an id written as text.
    Key(String),
}

impl TaskRef {
    /// Reads a command-line argument: digits are an id, anything else a key.
    pub fn parse(text: &str) -> TaskRef {
        match text.trim().parse::<u32>() {
            Ok(id) => TaskRef::Id(id),
            Err(_) => TaskRef::Key(text.trim().to_owned()),
        }
    }
}

impl<'de> Deserialize<'de> for TaskRef {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TaskRef, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TaskRef;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a task id (a whole number from 1) or a task key (a string)")
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TaskRef, E> {
                u32::try_from(v)
                    .map(TaskRef::Id)
                    .map_err(|_| E::custom(format!("task id {v} is too large")))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TaskRef, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::custom(format!(
                        "task id {v} is negative; ids are whole numbers from 1"
                    ))),
                }
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TaskRef, E> {
                if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                    Ok(TaskRef::Id(v as u32))
                } else {
                    Err(E::custom(format!("task id {v} is not a whole number")))
                }
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TaskRef, E> {
                Ok(TaskRef::Key(v.to_owned()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl fmt::Display for TaskRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskRef::Id(id) => write!(f, "{id}"),
            TaskRef::Key(key) => write!(f, "{key}"),
        }
    }
}

/// No arguments.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Arguments of `startNextTask`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartNextArgs {
    /// Only consider tasks assigned to this role (parallel agents, one per role).
    #[serde(default)]
    pub assignee: Option<String>,
}

/// Arguments of `startTask`, `getTaskById` and `removeTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskIdArgs {
    /// The task: its integer id, or its key.
    pub task_id: TaskRef,
}

/// Arguments of `completeTask`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArgs {
    /// The task to complete; the current task when left out.
    #[serde(default)]
    pub task_id: Option<TaskRef>,
    /// What the task achieved: a short summary kept in the task's `result`.
    #[serde(default, alias = "result_message")]
    pub result: Option<String>,
    /// Files (paths or URLs) the task produced, kept in the task's
    /// `extra.attachments` (Plan-Act's `Step.attachments`).
    #[serde(default)]
    pub attachments: Option<Vec<String>>,
}

/// The kinds of event an agent logs (Plan-Act's ToolEvent, MessageEvent,
/// ErrorEvent): `tool` (a tool call: its name, arguments and result),
/// `message` (a message to the user), `error` (an error that happened).
// The variants carry no doc comments, so the schema is a plain `enum` (which
// every function-calling API takes) rather than a `oneOf` of constants.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    Tool,
    Message,
    Error,
}

/// Arguments of `logEvent`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogArgs {
    /// tool, message or error.
    pub kind: LogKind,
    /// What to record, at most 64 KiB: text (a message, an error), or an object as JSON text (a tool call: `{"name", "args", "result"}`), which is kept as the object. Clients without strict schemas may pass any JSON value.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub data: serde_json::Value,
    /// The task it is about; the caller's current task when left out (none
    /// when the caller has none).
    #[serde(default)]
    pub task_id: Option<TaskRef>,
}

/// Arguments of `failTask`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailArgs {
    /// The task that failed; the current task when left out.
    #[serde(default)]
    pub task_id: Option<TaskRef>,
    /// What went wrong; kept in the task's `result`.
    #[serde(default, alias = "error")]
    pub error_message: Option<String>,
    /// Retry when the task has retries left (default true).
    #[serde(default = "yes", deserialize_with = "true_unless_false")]
    #[schemars(with = "Option<bool>")]
    pub should_retry: bool,
}

fn yes() -> bool {
    true
}

// A model in OpenAI's strict mode sends every field, `null` for one it leaves
// out (docs/agents.md): a flag given as `null` takes its default.

/// `true` unless the flag is `false`; `null` is the default, `true`.
fn true_unless_false<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(true))
}

/// `false` unless the flag is `true`; `null` is the default, `false`.
fn false_unless_true<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

/// Arguments of `skipTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkipArgs {
    /// The task to skip.
    pub task_id: TaskRef,
    /// Why it is skipped; kept in the task's `result`.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Arguments of `addTask`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    /// What the new task is: a short imperative sentence.
    pub name: String,
    /// Tasks that must be completed (or skipped) first. Defaults to
    /// `[after_task_id]` when `after_task_id` is given, else none.
    #[serde(default)]
    pub dependencies: Option<Vec<TaskRef>>,
    /// Why the task is needed.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Insert the new task right after this one; tasks that depended on it
    /// then depend on the new task instead.
    #[serde(default)]
    pub after_task_id: Option<TaskRef>,
    /// The role that should do the task.
    #[serde(default)]
    pub assignee: Option<String>,
    /// Longer instructions for the task.
    #[serde(default)]
    pub description: Option<String>,
}

/// The fields `updateTask` may change (the PlanManager API's `updates`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdates {
    /// A new name.
    #[serde(default, alias = "new_name")]
    pub name: Option<String>,
    /// A new dependency list (replaces the old one).
    #[serde(default, alias = "new_dependencies")]
    pub dependencies: Option<Vec<TaskRef>>,
    /// A new reasoning.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// A new assignee.
    #[serde(default)]
    pub assignee: Option<String>,
    /// New longer instructions.
    #[serde(default)]
    pub description: Option<String>,
}

/// Arguments of `updateTask`: the fields either nested in `updates` (the PlanManager API)
/// or given directly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The task to change (only a pending task can be changed).
    pub task_id: TaskRef,
    /// The fields to change.
    #[serde(default)]
    pub updates: Option<TaskUpdates>,
    /// A new name (same as `updates.name`).
    #[serde(default, alias = "new_name")]
    pub name: Option<String>,
    /// A new dependency list (same as `updates.dependencies`).
    #[serde(default, alias = "new_dependencies")]
    pub dependencies: Option<Vec<TaskRef>>,
    /// A new reasoning (same as `updates.reasoning`).
    #[serde(default)]
    pub reasoning: Option<String>,
    /// A new assignee (same as `updates.assignee`).
    #[serde(default)]
    pub assignee: Option<String>,
    /// New longer instructions (same as `updates.description`).
    #[serde(default)]
    pub description: Option<String>,
}

impl UpdateArgs {
    /// The requested changes, direct fields winning over `updates`.
    pub fn merged(&self) -> TaskUpdates {
        let nested = self.updates.clone().unwrap_or_default();
        TaskUpdates {
            name: self.name.clone().or(nested.name),
            dependencies: self.dependencies.clone().or(nested.dependencies),
            reasoning: self.reasoning.clone().or(nested.reasoning),
            assignee: self.assignee.clone().or(nested.assignee),
            description: self.description.clone().or(nested.description),
        }
    }
}

/// Arguments of `getTaskList`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only tasks with this status: pending, in_progress, completed, failed,
    /// skipped, `executable` (pending with every dependency done) or
    /// `blocked` (pending, waiting on a dependency not done).
    #[serde(default, alias = "status_filter")]
    pub status: Option<String>,
    /// Only tasks assigned to this role.
    #[serde(default)]
    pub assignee: Option<String>,
}

/// One task of a `replan`: a name, or an object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ReplanStep {
    /// Just the task's name; it comes after the step before it.
    Name(String),
    /// A task with more fields.
    Task(ReplanTask),
}

/// A new task given as an object in a `replan`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplanTask {
    /// What the task is (`description` is accepted as in Plan-Act when `name` is absent).
    #[serde(default)]
    pub name: Option<String>,
    /// A key other new tasks may name in their `dependencies`.
    #[serde(default)]
    pub key: Option<String>,
    /// Kept tasks (ids or keys) or earlier new tasks (keys) it waits for;
    /// when left out, the task comes after the step before it.
    #[serde(default)]
    pub dependencies: Option<Vec<TaskRef>>,
    /// Why the task is needed.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// Longer instructions (Plan-Act calls the step text `description`).
    #[serde(default)]
    pub description: Option<String>,
    /// The role that should do the task.
    #[serde(default)]
    pub assignee: Option<String>,
    /// Whether the plan may succeed without this task.
    #[serde(default, deserialize_with = "false_unless_true")]
    #[schemars(with = "Option<bool>")]
    pub optional: bool,
    /// How often the task may be retried after failing.
    #[serde(default)]
    pub retry: Option<u32>,
}

/// Arguments of `replan`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplanArgs {
    /// The new remainder of the plan, in order. Completed, skipped and
    /// in-progress tasks are kept; pending and failed tasks are replaced.
    pub steps: Vec<ReplanStep>,
}

/// One runner operation, tagged by its seed name: `{"op": "startNextTask", …}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Op {
    /// The current task, or null.
    GetCurrentTask(NoArgs),
    /// Start the first executable task in plan order.
    StartNextTask(StartNextArgs),
    /// Start a given executable task.
    StartTask(TaskIdArgs),
    /// Complete a task (the current one by default).
    CompleteTask(CompleteArgs),
    /// Fail a task (the current one by default); retried while retries are left.
    FailTask(FailArgs),
    /// Skip a task.
    SkipTask(SkipArgs),
    /// Add a task, after another one (rewiring its dependents) or at the end.
    AddTask(AddArgs),
    /// Change a pending task.
    UpdateTask(UpdateArgs),
    /// Remove a pending task; its dependents take over its dependencies.
    RemoveTask(TaskIdArgs),
    /// One task.
    GetTaskById(TaskIdArgs),
    /// The tasks, optionally filtered.
    GetTaskList(ListArgs),
    /// The executable tasks.
    GetExecutableTaskList(StartNextArgs),
    /// Status, progress and counts.
    GetPlanStatus(NoArgs),
    /// Refuse changes until resumed.
    PausePlan(NoArgs),
    /// Accept changes again.
    ResumePlan(NoArgs),
    /// Every task back to pending.
    ResetPlan(NoArgs),
    /// Replace the pending remainder (Plan-Act).
    Replan(ReplanArgs),
    /// Put a failed task back to pending, to be tried again.
    RetryTask(TaskIdArgs),
    /// Renew the leases of the tasks the caller holds.
    Heartbeat(NoArgs),
    /// Append a tool, message or error event to the log.
    LogEvent(LogArgs),
}

impl Op {
    /// Every operation name, in the order of docs/runner.md.
    pub const NAMES: [&'static str; 20] = [
        "getCurrentTask",
        "startNextTask",
        "startTask",
        "completeTask",
        "failTask",
        "skipTask",
        "addTask",
        "updateTask",
        "removeTask",
        "getTaskById",
        "getTaskList",
        "getExecutableTaskList",
        "getPlanStatus",
        "pausePlan",
        "resumePlan",
        "resetPlan",
        "replan",
        "retryTask",
        "heartbeat",
        "logEvent",
    ];

    /// The operation's seed name (`startNextTask`).
    pub fn name(&self) -> &'static str {
        let index = match self {
            Op::GetCurrentTask(_) => 0,
            Op::StartNextTask(_) => 1,
            Op::StartTask(_) => 2,
            Op::CompleteTask(_) => 3,
            Op::FailTask(_) => 4,
            Op::SkipTask(_) => 5,
            Op::AddTask(_) => 6,
            Op::UpdateTask(_) => 7,
            Op::RemoveTask(_) => 8,
            Op::GetTaskById(_) => 9,
            Op::GetTaskList(_) => 10,
            Op::GetExecutableTaskList(_) => 11,
            Op::GetPlanStatus(_) => 12,
            Op::PausePlan(_) => 13,
            Op::ResumePlan(_) => 14,
            Op::ResetPlan(_) => 15,
            Op::Replan(_) => 16,
            Op::RetryTask(_) => 17,
            Op::Heartbeat(_) => 18,
            Op::LogEvent(_) => 19,
        };
        Self::NAMES[index]
    }

    /// Whether the operation may change the state (queries never do).
    pub fn is_change(&self) -> bool {
        !matches!(
            self,
            Op::GetCurrentTask(_)
                | Op::GetTaskById(_)
                | Op::GetTaskList(_)
                | Op::GetExecutableTaskList(_)
                | Op::GetPlanStatus(_)
        )
    }

    /// The operation a tool call names, with its arguments (`null` or an object).
    pub fn from_call(name: &str, arguments: serde_json::Value) -> Result<Op, super::OpError> {
        use super::{ErrorCode, OpError};
        if !Self::NAMES.contains(&name) {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!("unknown operation `{name}`"),
            )
            .with(serde_json::json!({"operations": Self::NAMES})));
        }
        let mut object = match arguments {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(map) => map,
            other => {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("the arguments of `{name}` must be an object, not {other}"),
                ))
            }
        };
        object.insert("op".to_owned(), serde_json::Value::String(name.to_owned()));
        serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|error| OpError::bad_arguments(name, &error))
    }
}
