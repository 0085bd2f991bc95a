//! `tasks` (the planManager): the planManager's six tools, with its parameter
//! names, its result keys (`newTask`, `updatedTask`) and its messages
//! (`Task 3 marked as completed.`).
//!
//! `completeCurrentTask` and `failCurrentTask` follow the seed's one cursor,
//! `currentTaskID`: the caller's current task, the last it started that is
//! still in progress ([`Caller::following_cursor`]). `failCurrentTask` fails
//! the task for good, as the planManager says (its status becomes `failed`):
//! the seed has no retries. A refused call answers `{"success": false,
//! "message", "code"}`, in the seed's flat style, its advice naming only these
//! six tools and their arguments ([`Face::Tasks`]); `skipTask` takes an
//! optional `takeover` for a task another agent holds (docs/agents.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{TaskDoc, TaskStatus};
use crate::mcp::tools::{output_schema, schema, ToolDef};
use crate::runner::access::PlanAccess;
use crate::runner::results::Started;
use crate::runner::{
    AddArgs, Caller, CompleteArgs, Face, FailArgs, Op, OpError, OpResult, SkipArgs, StartNextArgs,
    TaskRef, UpdateArgs,
};

use super::{arguments, Outcome};

/// A task as the planManager shows it: its six fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// The task's id.
    pub id: u32,
    /// What to do.
    pub name: String,
    /// pending, in_progress, completed, failed or skipped.
    pub status: TaskStatus,
    /// The ids of the tasks it waits for.
    pub dependencies: Vec<u32>,
    /// Why the task is needed.
    pub reasoning: Option<String>,
    /// What it achieved (or why it failed or was skipped).
    pub result: Option<String>,
}

impl From<&TaskDoc> for Task {
    fn from(t: &TaskDoc) -> Task {
        Task {
            id: t.id,
            name: t.name.clone(),
            status: t.status,
            dependencies: t.dependencies.clone(),
            reasoning: t.reasoning.clone(),
            result: t.result.clone(),
        }
    }
}

/// `startNextTask`: the new current task, or a status message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NextTask {
    /// The task now in progress.
    Task(Task),
    /// Nothing could start: `All tasks are completed or blocked.`
    Message {
        /// The status message.
        message: String,
    },
}

/// `completeCurrentTask`, `skipTask`, `failCurrentTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    /// true (a refused call answers `{"success": false, "message", "code"}`).
    pub success: bool,
    /// `Task 1 marked as completed.`, `Task 4 skipped.`, `Task 3 marked as failed.`
    pub message: String,
}

/// `addTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AddedTask {
    /// true.
    pub success: bool,
    /// The new task.
    #[serde(rename = "newTask")]
    pub new_task: Task,
}

/// `modifyTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModifiedTask {
    /// true.
    pub success: bool,
    /// The task as it is now.
    #[serde(rename = "updatedTask")]
    pub updated_task: Task,
}

/// Any refused call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Refused {
    /// false.
    pub success: bool,
    /// What went wrong, in a sentence.
    pub message: String,
    /// The stable code (`TASK_NOT_EDITABLE`, …; docs/runner.md lists them).
    pub code: String,
}

/// A result or a refusal: the output schema of every tool allows both.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum Answer<T> {
    Ok(T),
    Refused(Refused),
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Arguments of `completeCurrentTask`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompleteCurrentArgs {
    /// A message describing what the task achieved; kept in its `result`.
    result_message: String,
}

/// Arguments of `failCurrentTask`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FailCurrentArgs {
    /// Why the task failed; kept in its `result`.
    error_message: String,
}

/// Arguments of `addTask`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddTaskArgs {
    /// The new task's name.
    name: String,
    /// The ids of the tasks it depends on.
    dependencies: Vec<u32>,
    /// Why the task is added.
    reasoning: String,
    /// Insert the new task after this task; the tasks that depended on it
    /// then depend on the new task. Left out: at the end.
    #[serde(default)]
    after_task_id: Option<u32>,
}

/// Arguments of `modifyTask`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ModifyTaskArgs {
    /// The task to change (it must not have started).
    task_id: u32,
    /// A new name.
    #[serde(default)]
    new_name: Option<String>,
    /// A new dependency list.
    #[serde(default)]
    new_dependencies: Option<Vec<u32>>,
}

/// Arguments of `skipTask`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkipTaskArgs {
    /// The task to skip.
    task_id: u32,
    /// Why it is skipped; kept in its `result`.
    reason: String,
    /// Skip it even though another agent holds it (planc: several agents
    /// may share the plan). Left out: a task another agent holds is refused
    /// (TASK_HELD).
    #[serde(default)]
    takeover: Option<bool>,
}

fn def<A: JsonSchema, R: JsonSchema>(
    name: &'static str,
    description: &str,
    read_only: bool,
) -> ToolDef {
    ToolDef {
        name,
        description: description.to_owned(),
        input_schema: schema::<A>(),
        output_schema: output_schema::<Answer<R>>(),
        read_only,
        destructive: false,
    }
}

/// The planManager's six tools, in its order.
pub fn tools() -> Vec<ToolDef> {
    vec![
        def::<NoArgs, NextTask>(
            "startNextTask",
            "Find and start the next executable task: the first pending task whose dependencies are all completed. It becomes in_progress and the current task; the task object is returned. If none can start, returns {\"message\": \"All tasks are completed or blocked.\"}.",
            false,
        ),
        def::<CompleteCurrentArgs, Done>(
            "completeCurrentTask",
            "Mark the current task (the last task you started that is still in progress) as completed, recording result_message in its result. Call startNextTask for the next one.",
            false,
        ),
        def::<AddTaskArgs, AddedTask>(
            "addTask",
            "Insert a new task into the plan, e.g. to handle a popup or a captcha. With after_task_id, it is inserted after that task, and the tasks that depended on that task now depend on the new task. Returns {\"success\": true, \"newTask\": …}.",
            false,
        ),
        def::<ModifyTaskArgs, ModifiedTask>(
            "modifyTask",
            "Change a task that has not started: its name and/or its dependencies. A task in progress or finished cannot be changed. Returns {\"success\": true, \"updatedTask\": …}.",
            false,
        ),
        def::<SkipTaskArgs, Done>(
            "skipTask",
            "Skip a task, recording the reason in its result. Tasks that depend on it may then run. A task another agent is working on is refused (TASK_HELD) unless takeover is true.",
            false,
        ),
        def::<FailCurrentArgs, Done>(
            "failCurrentTask",
            "Mark the current task (the last task you started that is still in progress) as failed, recording error_message in its result.",
            false,
        ),
    ]
}

/// Runs one of the six tools.
pub fn call(store: &dyn PlanAccess, name: &str, args: Value) -> Option<Outcome> {
    let result = match name {
        "startNextTask" => arguments::<NoArgs>(name, args).and_then(|_| start_next(store)),
        // The seed's one cursor, `currentTaskID`: the caller's current task.
        "completeCurrentTask" => arguments::<CompleteCurrentArgs>(name, args).and_then(|args| {
            let op = Op::CompleteTask(CompleteArgs {
                task_id: None,
                result: Some(args.result_message),
                attachments: None,
            });
            let caller = Caller::default().following_cursor();
            finished(store, &op, &caller, "marked as completed.")
        }),
        "failCurrentTask" => arguments::<FailCurrentArgs>(name, args).and_then(|args| {
            let op = Op::FailTask(FailArgs {
                task_id: None,
                error_message: Some(args.error_message),
                should_retry: false,
            });
            let caller = Caller::default().following_cursor();
            finished(store, &op, &caller, "marked as failed.")
        }),
        "skipTask" => arguments::<SkipTaskArgs>(name, args).and_then(|args| {
            let op = Op::SkipTask(SkipArgs {
                task_id: TaskRef::Id(args.task_id),
                reason: Some(args.reason),
            });
            let caller = Caller::default().taking_over(args.takeover == Some(true));
            finished(store, &op, &caller, "skipped.")
        }),
        "addTask" => arguments::<AddTaskArgs>(name, args).and_then(|args| {
            let op = Op::AddTask(AddArgs {
                name: args.name,
                dependencies: Some(args.dependencies.into_iter().map(TaskRef::Id).collect()),
                reasoning: Some(args.reasoning),
                after_task_id: args.after_task_id.map(TaskRef::Id),
                ..AddArgs::default()
            });
            match store.apply(&op)?.data {
                OpResult::Added(added) => Ok(Outcome::ok(AddedTask {
                    success: true,
                    new_task: Task::from(&added.new_task),
                })),
                other => Err(unexpected(&op, &other)),
            }
        }),
        "modifyTask" => arguments::<ModifyTaskArgs>(name, args).and_then(|args| {
            let op = Op::UpdateTask(UpdateArgs {
                task_id: TaskRef::Id(args.task_id),
                updates: None,
                name: args.new_name,
                dependencies: args
                    .new_dependencies
                    .map(|deps| deps.into_iter().map(TaskRef::Id).collect()),
                reasoning: None,
                assignee: None,
                description: None,
            });
            match store.apply(&op)?.data {
                OpResult::Updated(updated) => Ok(Outcome::ok(ModifiedTask {
                    success: true,
                    updated_task: Task::from(&updated.updated_task),
                })),
                other => Err(unexpected(&op, &other)),
            }
        }),
        _ => return None,
    };
    Some(result.unwrap_or_else(|error| {
        // Advice names only this dialect's tools and arguments.
        let error = error.spelt_for(Face::Tasks);
        Outcome::error(Refused {
            success: false,
            message: error.message,
            code: error.code.as_str().to_owned(),
        })
    }))
}

fn start_next(store: &dyn PlanAccess) -> Result<Outcome, OpError> {
    let op = Op::StartNextTask(StartNextArgs::default());
    match store.apply(&op)?.data {
        OpResult::Started(Started {
            task: Some(task), ..
        }) => Ok(Outcome::ok(NextTask::Task(Task::from(&task)))),
        OpResult::Started(_) => Ok(Outcome::ok(NextTask::Message {
            message: "All tasks are completed or blocked.".to_owned(),
        })),
        other => Err(unexpected(&op, &other)),
    }
}

/// A change to one task by `caller`, answered `Task [id] <what>`.
fn finished(
    store: &dyn PlanAccess,
    op: &Op,
    caller: &Caller,
    what: &str,
) -> Result<Outcome, OpError> {
    let id = match store.apply_as(op, caller)?.data {
        OpResult::Finished(done) => done.task_id,
        OpResult::Failed(failed) => failed.task_id,
        other => return Err(unexpected(op, &other)),
    };
    Ok(Outcome::ok(Done {
        success: true,
        message: format!("Task {id} {what}"),
    }))
}

/// An operation answered with another operation's result: a bug, reported
/// rather than hidden.
pub(super) fn unexpected(op: &Op, result: &OpResult) -> OpError {
    OpError::new(
        crate::runner::ErrorCode::InvalidState,
        format!(
            "{} answered an unexpected result: {}",
            op.name(),
            result.to_json()
        ),
    )
}
