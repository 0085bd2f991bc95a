//! What each operation answers: one Rust type per result, the `data` of the
//! success envelope. The CLI prints from these types, the MCP server
//! publishes their JSON Schemas as tools' `outputSchema`, and docs/runner.md
//! lists them; nothing reads a result back by string key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{PlanStatus, TaskDoc, TaskStatus};

use super::ops::LogKind;

/// Why `startNextTask` started nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdleReason {
    /// Every task is completed or skipped.
    Completed,
    /// The plan has no tasks.
    Empty,
    /// Tasks are executable, but none for the assignee asked for.
    NoTaskForAssignee,
    /// Nothing is executable while other tasks are in progress.
    Waiting,
    /// A required task failed, or nothing can run.
    Blocked,
}

/// Why nothing started: the fields `startNextTask` adds when `task` is null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NothingStarted {
    /// Why: completed, empty, no_task_for_assignee, waiting or blocked.
    pub reason: IdleReason,
    /// The plan's status.
    pub plan_status: PlanStatus,
    /// Up to ten tasks in progress (what the plan waits for).
    pub in_progress: Vec<u32>,
    /// Up to ten failed required tasks (what blocks the plan).
    pub failed: Vec<u32>,
}

/// `startNextTask`, `startTask`: the started task, or null and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Started {
    /// The task now in progress; null when nothing could start.
    pub task: Option<TaskDoc>,
    /// `Started task 2: …`, or why nothing started.
    pub message: String,
    /// Present when nothing started.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<NothingStarted>,
}

/// `completeTask`, `skipTask`: which task, and where the plan stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finished {
    /// The task completed or skipped.
    pub task_id: u32,
    /// `Task 3 completed`, `Task 3 skipped: reason`.
    pub message: String,
    /// The plan's status after the change.
    pub plan_status: PlanStatus,
}

/// `failTask`: whether the task goes round again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailedTask {
    /// The task that failed.
    pub task_id: u32,
    /// Whether it went back to pending to be retried.
    pub will_retry: bool,
    /// How often it has been retried.
    pub retry_count: u32,
    /// How often it may be retried: its `retry N`, else the plan's, else 2.
    pub retry_budget: u32,
    /// `Task 3 failed, will retry (attempt 2 of 3)`, `Task 3 failed`.
    pub message: String,
    /// The plan's status after the change.
    pub plan_status: PlanStatus,
}

/// `addTask`: the new task and the tasks rewired to wait for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Added {
    /// The new task.
    pub new_task: TaskDoc,
    /// `Task 6 added after task 2; task(s) 3 now depend on it`.
    pub message: String,
    /// Pending tasks that waited for `after_task_id` and now wait for the new task.
    pub rewired_tasks: Vec<u32>,
}

/// `updateTask`: the task as it is now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Updated {
    /// The changed task.
    pub updated_task: TaskDoc,
    /// `Task 3 updated successfully`.
    pub message: String,
}

/// `removeTask`: which task went, and who took over its dependencies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Removed {
    /// The removed task.
    pub task_id: u32,
    /// `Task 3 removed successfully`.
    pub message: String,
    /// Tasks that depended on it and now depend on its dependencies.
    pub rewired_tasks: Vec<u32>,
}

/// `getTaskById`: one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FoundTask {
    /// The task, with every field.
    pub task: TaskDoc,
}

/// `getTaskList`: the tasks, filtered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskList {
    /// The tasks that passed the filter, in plan order.
    pub tasks: Vec<TaskDoc>,
    /// How many tasks the plan has.
    pub total: usize,
    /// How many passed the filter.
    pub filtered: usize,
}

/// `getExecutableTaskList`: the tasks that can start now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecutableTasks {
    /// Pending tasks whose dependencies are all done, in plan order.
    pub executable_tasks: Vec<TaskDoc>,
    /// How many.
    pub count: usize,
}

/// `getPlanStatus`: status, progress and counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanReport {
    /// idle, running, paused, completed or failed.
    pub status: PlanStatus,
    /// (completed + skipped) / total, rounded to three decimals.
    pub progress: f64,
    /// The current task.
    pub current_task_id: Option<u32>,
    /// How many tasks the plan has.
    pub total_tasks: usize,
    /// Completed tasks.
    pub completed_tasks: usize,
    /// Failed tasks.
    pub failed_tasks: usize,
    /// Pending tasks.
    pub pending_tasks: usize,
    /// Tasks in progress.
    pub in_progress_tasks: usize,
    /// Skipped tasks.
    pub skipped_tasks: usize,
    /// Pending tasks that can start now.
    pub executable_tasks: usize,
    /// Pending tasks waiting on a dependency that is not done.
    pub blocked_tasks: usize,
    /// The state's revision (one more per change).
    pub revision: u64,
    /// Observed agent messages (the steps system).
    pub iteration_count: u64,
    /// Why the plan is failed, paused or blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The failed required tasks that block it (with `reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<Vec<u32>>,
}

/// `retryTask`: the task, pending again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retried {
    /// The task as it is now.
    pub task: TaskDoc,
    /// Whether it can start at once (its dependencies are done).
    pub executable: bool,
    /// `Task 3 is pending again, to be retried`.
    pub message: String,
    /// The plan's status after the change.
    pub plan_status: PlanStatus,
}

/// One renewed lease.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RenewedLease {
    /// The task held.
    pub task_id: u32,
    /// When the lease runs out now (RFC 3339 UTC).
    pub lease_expires_at: Option<String>,
}

/// `heartbeat`: the leases renewed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Renewed {
    /// The caller's leased tasks, renewed.
    pub renewed: Vec<RenewedLease>,
    /// `Renewed 1 lease(s) of a`.
    pub message: String,
}

/// `logEvent`: the event appended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Logged {
    /// tool, message or error.
    pub kind: LogKind,
    /// The task it is about, if any.
    pub task_id: Option<u32>,
    /// `Logged a tool call for task 2`.
    pub message: String,
}

/// `pausePlan`: what happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// `Plan paused successfully`.
    pub message: String,
}

/// `resumePlan`: what happened, the status the plan went back to, and where
/// it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resumed {
    /// `Plan resumed successfully`.
    pub message: String,
    /// The plan's status now.
    pub plan_status: PlanStatus,
    /// What is done, what is current, what is left.
    pub summary: Summary,
}

/// One task in a progress summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Brief {
    /// The task's id.
    pub id: u32,
    /// What it is.
    pub name: String,
    /// Its status.
    pub status: TaskStatus,
    /// What it achieved, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// Where a plan stands (on resume, and at the iteration limit): what is
/// done, what is current, what is left.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Tasks completed or skipped.
    pub done: usize,
    /// Tasks in the plan.
    pub total: usize,
    /// The last ten finished tasks (completed, skipped or failed), in plan order.
    pub finished: Vec<Brief>,
    /// The caller's current task, or the next one to start.
    pub current: Option<Brief>,
    /// The first ten tasks still to do after it, in plan order.
    pub remaining: Vec<Brief>,
    /// How many tasks are still to do after `current` (`remaining` shows ten at most).
    pub remaining_count: usize,
    /// The same in one paragraph, in the plan's language.
    pub text: String,
}

/// What advanced the agent's step in the text protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Advance {
    /// An explicit marker (`[Done]`, `[完成]`…).
    Marker,
    /// A transition word ("next", "接下来"…) after `transition_rounds` rounds.
    Transition,
    /// No marker for `fallback_rounds` rounds.
    Fallback,
}

/// `resetPlan`: how many tasks went back to pending.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reset {
    /// `Plan reset successfully`.
    pub message: String,
    /// Tasks that were not pending before.
    pub reset_tasks: usize,
}

/// `replan`: what was kept, what went, what came.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Replanned {
    /// `Plan updated: kept 2 task(s), replaced 3 with 2 new task(s)`.
    pub message: String,
    /// How many tasks were kept (completed, skipped, in progress).
    pub kept_tasks: usize,
    /// The ids of the pending and failed tasks replaced.
    pub removed_tasks: Vec<u32>,
    /// The new tasks, in order.
    pub new_tasks: Vec<TaskDoc>,
}

/// `observe` (the steps system's text protocol): what one agent message did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Observed {
    /// The iteration this message was.
    pub iteration_count: u64,
    /// The plan's iteration limit, if any.
    pub max_iterations: Option<u64>,
    /// What the message did, one sentence each.
    pub actions: Vec<String>,
    /// The task the agent is on now.
    pub current_task: Option<TaskDoc>,
    /// The rounds the agent has spent on its current task so far
    /// (`state.step_rounds`).
    pub step_rounds: u64,
    /// What completed the agent's task in this message: marker, transition
    /// or fallback; null when nothing did.
    pub completed_by: Option<Advance>,
    /// The marker or transition word that did (`[Done]`, `next`), or `5
    /// rounds` for the fallback.
    pub matched: Option<String>,
    /// The plan's status now.
    pub plan_status: PlanStatus,
    /// Whether the plan is paused (the iteration limit was reached).
    pub paused: bool,
    /// Whether the message resumed a paused plan (a resume word).
    pub resumed: bool,
    /// Where the plan stands: when the message resumed it, or paused it at
    /// the iteration limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

/// `planc run prompt --json`: the system-prompt block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Prompted {
    /// The Markdown block `planc run prompt` prints.
    pub prompt: String,
}

/// `planc run init --json`: the state file created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Created {
    /// The state file's path.
    pub state: String,
    /// The plan's id.
    pub plan_id: String,
    /// How many tasks it has.
    pub total_tasks: usize,
    /// Its revision (1).
    pub revision: u64,
    /// `Created jd.json from examples/jd_keyboard.plan`.
    pub message: String,
}

/// The error body of the failure envelope `{"success": false, "error": …}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    /// The stable code (`TASK_NOT_FOUND`, …; docs/runner.md lists them).
    pub code: String,
    /// What went wrong, in a sentence.
    pub message: String,
    /// Machine-readable particulars (an object; empty when there are none).
    pub details: Value,
}

/// The result of any operation: the `data` of the success envelope. It
/// serialises as the variant's own object (no tag).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OpResult {
    /// `getCurrentTask`: the task, or null.
    CurrentTask(Option<TaskDoc>),
    /// `startNextTask`, `startTask`.
    Started(Started),
    /// `completeTask`, `skipTask`.
    Finished(Finished),
    /// `failTask`.
    Failed(FailedTask),
    /// `addTask`.
    Added(Added),
    /// `updateTask`.
    Updated(Updated),
    /// `removeTask`.
    Removed(Removed),
    /// `getTaskById`.
    Task(FoundTask),
    /// `getTaskList`.
    TaskList(TaskList),
    /// `getExecutableTaskList`.
    Executable(ExecutableTasks),
    /// `getPlanStatus`.
    Status(PlanReport),
    /// `pausePlan`.
    Message(Message),
    /// `resumePlan`.
    Resumed(Resumed),
    /// `resetPlan`.
    Reset(Reset),
    /// `replan`.
    Replanned(Replanned),
    /// `retryTask`.
    Retried(Retried),
    /// `heartbeat`.
    Renewed(Renewed),
    /// `logEvent`.
    Logged(Logged),
    /// `observe`.
    Observed(Observed),
    /// `planc run prompt`.
    Prompted(Prompted),
    /// `planc run init`.
    Created(Created),
}

impl OpResult {
    /// The result's one-sentence message, when it has one.
    pub fn message(&self) -> Option<&str> {
        match self {
            OpResult::CurrentTask(_)
            | OpResult::Task(_)
            | OpResult::TaskList(_)
            | OpResult::Executable(_)
            | OpResult::Status(_)
            | OpResult::Observed(_)
            | OpResult::Prompted(_) => None,
            OpResult::Started(r) => Some(&r.message),
            OpResult::Finished(r) => Some(&r.message),
            OpResult::Failed(r) => Some(&r.message),
            OpResult::Added(r) => Some(&r.message),
            OpResult::Updated(r) => Some(&r.message),
            OpResult::Removed(r) => Some(&r.message),
            OpResult::Message(r) => Some(&r.message),
            OpResult::Resumed(r) => Some(&r.message),
            OpResult::Reset(r) => Some(&r.message),
            OpResult::Replanned(r) => Some(&r.message),
            OpResult::Retried(r) => Some(&r.message),
            OpResult::Renewed(r) => Some(&r.message),
            OpResult::Logged(r) => Some(&r.message),
            OpResult::Created(r) => Some(&r.message),
        }
    }

    /// The result as JSON (the edge: envelopes, tool results).
    pub fn to_json(&self) -> Value {
        // Every variant is plain data with string keys: this cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The JSON Schema of each operation's result (`data`), by operation name;
/// `None` for a name that is no operation. The MCP tools publish these.
///
/// A result is written, never read: the schema is schemars' serialize
/// contract, so a field is optional only when it may be left out of the
/// output (a task's `retry` is required although input may omit it).
pub fn result_schema(op: &str) -> Option<schemars::Schema> {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    Some(match op {
        "getCurrentTask" => generator.subschema_for::<Option<TaskDoc>>(),
        "startNextTask" | "startTask" => generator.subschema_for::<Started>(),
        "completeTask" | "skipTask" => generator.subschema_for::<Finished>(),
        "failTask" => generator.subschema_for::<FailedTask>(),
        "addTask" => generator.subschema_for::<Added>(),
        "updateTask" => generator.subschema_for::<Updated>(),
        "removeTask" => generator.subschema_for::<Removed>(),
        "getTaskById" => generator.subschema_for::<FoundTask>(),
        "getTaskList" => generator.subschema_for::<TaskList>(),
        "getExecutableTaskList" => generator.subschema_for::<ExecutableTasks>(),
        "getPlanStatus" => generator.subschema_for::<PlanReport>(),
        "pausePlan" => generator.subschema_for::<Message>(),
        "resumePlan" => generator.subschema_for::<Resumed>(),
        "resetPlan" => generator.subschema_for::<Reset>(),
        "replan" => generator.subschema_for::<Replanned>(),
        "retryTask" => generator.subschema_for::<Retried>(),
        "heartbeat" => generator.subschema_for::<Renewed>(),
        "logEvent" => generator.subschema_for::<Logged>(),
        "observe" => generator.subschema_for::<Observed>(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::result_schema;

    /// The top-level field names of every `{…}` in `text`, and the
    /// backticked names after "plus".
    fn documented_fields(text: &str) -> BTreeSet<String> {
        let mut fields = BTreeSet::new();
        let mut depth = 0;
        let mut word = String::new();
        let mut in_name = true;
        for c in text.chars() {
            match c {
                '{' | '[' => {
                    depth += 1;
                    if depth == 1 {
                        word.clear();
                        in_name = true;
                    }
                }
                '}' | ']' => {
                    if depth == 1 && in_name && !word.trim().is_empty() {
                        fields.insert(word.trim().to_owned());
                    }
                    depth -= 1;
                }
                ',' if depth == 1 => {
                    if in_name && !word.trim().is_empty() {
                        fields.insert(word.trim().to_owned());
                    }
                    word.clear();
                    in_name = true;
                }
                ':' if depth == 1 => {
                    if in_name {
                        fields.insert(word.trim().to_owned());
                    }
                    in_name = false;
                }
                c if depth == 1 && in_name => word.push(c),
                _ => {}
            }
        }
        if let Some((_, plus)) = text.split_once("plus ") {
            let plus = plus.split(" when").next().unwrap_or(plus);
            fields.extend(plus.split('`').skip(1).step_by(2).map(str::to_owned));
        }
        fields
    }

    #[test]
    fn docs_list_each_result_with_the_fields_of_its_type() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/runner.md");
        let docs = std::fs::read_to_string(path).expect("docs/runner.md");
        let table = docs
            .split("| operation | type | `data` |")
            .nth(1)
            .expect("the results table");
        let mut checked = 0;
        for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
            let cells: Vec<&str> = row.split(" | ").collect();
            let documented = documented_fields(cells[2]);
            if documented.is_empty() {
                // "the task object, or `null`": a `TaskDoc` (docs/json-format.md).
                continue;
            }
            for op in cells[0].trim_start_matches("| ").split(", ") {
                let op = op.trim_matches('`');
                let op = op.split('(').next().unwrap_or(op);
                let Some(schema) = result_schema(op) else {
                    continue;
                };
                let schema = schema.to_value();
                let Some(properties) = schema["properties"].as_object() else {
                    continue;
                };
                let fields: BTreeSet<String> = properties.keys().cloned().collect();
                assert_eq!(fields, documented, "{op} in docs/runner.md");
                checked += 1;
            }
        }
        assert!(checked >= 19, "only {checked} operations checked");
    }
}
