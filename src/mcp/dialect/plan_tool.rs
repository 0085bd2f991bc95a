//! `plan-tool` (the Plan Tool): the Plan Tool's functions, snake_case, over the
//! one plan the server holds. Every function names the plan by `plan_id`,
//! which is checked: another id is `PLAN_NOT_FOUND`, never another plan's
//! data. Statuses are the seed's: `ready` (pending), `inprogress`,
//! `completed`, `error` (failed), `skipped`; the plan is `running`,
//! `completed` or `error`.
//!
//! Each function answers `{"result": <what the seed's function returns>}`: a
//! boolean, a task, a list, a status or the plan. A refused call keeps the
//! seed's answer (`false` or `null`) and adds `error: {code, message}`, with
//! `isError`.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{Meta, PlanDocument, RoleDoc, StepDoc, TaskDoc, TaskStatus as RunnerStatus};
use crate::emit::{render, Target};
use crate::mcp::tools::{output_schema, schema, ToolDef};
use crate::runner::access::PlanAccess;
use crate::runner::results::ExecutableTasks;
use crate::runner::{
    CompleteArgs, ErrorCode, FailArgs, Op, OpError, OpResult, Runner, SkipArgs, StartNextArgs,
    TaskIdArgs, TaskRef,
};

use super::tasks::unexpected;
use super::{arguments, Outcome};

/// A task's status in the Plan Tool's words: `ready` (planc: pending),
/// `inprogress` (in_progress), `completed`, `error` (failed), `skipped`.
// The variants carry no doc comments, so the schema is a plain `enum` (which
// every function-calling API takes) rather than a `oneOf` of constants.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Ready,
    Inprogress,
    Completed,
    Error,
    Skipped,
}

impl From<RunnerStatus> for TaskStatus {
    fn from(status: RunnerStatus) -> TaskStatus {
        match status {
            RunnerStatus::Pending => TaskStatus::Ready,
            RunnerStatus::InProgress => TaskStatus::Inprogress,
            RunnerStatus::Completed => TaskStatus::Completed,
            RunnerStatus::Failed => TaskStatus::Error,
            RunnerStatus::Skipped => TaskStatus::Skipped,
        }
    }
}

/// The plan's status in the Plan Tool's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlanStatus {
    /// Not finished (planc: idle, running or paused).
    Running,
    /// Every task completed or skipped.
    Completed,
    /// A required task is in error and nothing else can run.
    Error,
}

/// `TaskInfo`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskInfo {
    /// The task's id in the plan (its key, or its number).
    pub task_id: String,
    /// What to do.
    pub name: String,
    /// The role that does it.
    pub assignee: Option<String>,
    /// Longer instructions.
    pub description: Option<String>,
    /// ready, inprogress, completed, error or skipped.
    pub status: TaskStatus,
    /// What it achieved, or what went wrong.
    pub result_summary: Option<String>,
}

/// `StepInfo`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepInfo {
    /// The step's id.
    pub step_id: String,
    /// The step's name.
    pub name: String,
    /// Its tasks.
    pub tasks: Vec<TaskInfo>,
}

/// `PlanInstance`: the plan's structure and state (`build --target plan-tool`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanInstance {
    /// The plan's id.
    pub plan_id: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The template it was made from.
    pub workflow_template_source: Option<String>,
    /// running, completed or error.
    pub status: PlanStatus,
    /// Its steps, each with its tasks.
    pub steps: Vec<StepInfo>,
}

/// What a function answers: `{"result": …}`, plus `error` when refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Answer<T> {
    /// What the seed's function returns (`false` or `null` when refused).
    pub result: T,
    /// Why the call was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Refusal>,
}

/// Why a call was refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Refusal {
    /// The stable code: PLAN_NOT_FOUND, PLAN_EXISTS, TASK_NOT_FOUND, INVALID_STATUS, …
    pub code: String,
    /// What went wrong, in a sentence.
    pub message: String,
}

/// A task of `structure_data`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskStructure {
    /// Unique in the plan.
    task_id: String,
    /// What to do.
    name: String,
    /// The role that does it.
    #[serde(default)]
    assignee: Option<String>,
    /// Longer instructions.
    #[serde(default)]
    description: Option<String>,
}

/// A step of `structure_data`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepStructure {
    /// Unique in the plan.
    step_id: String,
    /// The step's name.
    name: String,
    /// Its tasks, in order.
    tasks: Vec<TaskStructure>,
}

/// `structure_data`: the plan as a workflow defines it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Structure {
    /// The plan's name.
    name: String,
    /// What the plan is for.
    #[serde(default)]
    description: Option<String>,
    /// The template it comes from (e.g. "SAFE_SOP_v9.0").
    #[serde(default)]
    workflow_template_source: Option<String>,
    /// The steps, in order.
    steps: Vec<StepStructure>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The new plan's unique id.
    plan_id: String,
    /// The plan's name, description, steps and tasks.
    structure_data: Structure,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PlanArgs {
    /// The plan's id.
    plan_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    /// The plan's id.
    plan_id: String,
    /// The task's id.
    task_id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateStatusArgs {
    /// The plan's id.
    plan_id: String,
    /// The task's id.
    task_id: String,
    /// The new status: inprogress, completed, error or skipped.
    status: TaskStatus,
    /// What the task achieved, or what went wrong.
    #[serde(default)]
    result_summary: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RoleArgs {
    /// The plan's id.
    plan_id: String,
    /// The role (a task's assignee).
    role_id: String,
    /// Only tasks with this status (default: ready).
    #[serde(default)]
    status: Option<TaskStatus>,
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
        destructive: name == "delete_plan",
    }
}

/// The Plan Tool's functions, in its order.
pub fn tools() -> Vec<ToolDef> {
    vec![
        def::<CreateArgs, bool>(
            "create_plan_from_structure",
            "Create the top-level plan from structured data (a workflow: name, description, steps, each with tasks {task_id, name, assignee, description}). Every task starts ready. Returns true, or false when the plan exists already or the data is invalid.",
            false,
        ),
        def::<TaskArgs, Option<TaskInfo>>(
            "get_task",
            "Get one task of the plan (task_id, name, assignee, description, status, result_summary), or null when there is no such task.",
            true,
        ),
        def::<UpdateStatusArgs, bool>(
            "update_task_status",
            "Update a task's status (inprogress, completed, error, skipped) and optionally record a result summary. Returns true, or false when the plan or task does not exist or the transition is invalid (e.g. a finished task, or a task whose prerequisites are not done).",
            false,
        ),
        def::<PlanArgs, Vec<TaskInfo>>(
            "get_ready_tasks",
            "List the plan's ready tasks: tasks not started whose prerequisites (if the plan has any) are done. The list does not prescribe an order; follow the workflow.",
            true,
        ),
        def::<RoleArgs, Vec<TaskInfo>>(
            "get_tasks_for_role",
            "List the plan's tasks assigned to a role (role_id matches assignee) with a status (default ready). The list does not prescribe an order.",
            true,
        ),
        def::<PlanArgs, Option<PlanStatus>>(
            "get_plan_status",
            "Get the plan's overall status: running, completed or error (null when there is no such plan).",
            true,
        ),
        def::<PlanArgs, Option<PlanInstance>>(
            "get_plan_structure",
            "Get the whole plan: its steps and tasks with their current status (null when there is no such plan).",
            true,
        ),
        def::<PlanArgs, bool>(
            "delete_plan",
            "Delete the plan. Returns true when it was deleted.",
            false,
        ),
    ]
}

/// Runs one of the functions.
pub fn call(store: &dyn PlanAccess, name: &str, args: Value) -> Option<Outcome> {
    Some(match name {
        "create_plan_from_structure" => answer(
            arguments::<CreateArgs>(name, args).and_then(|args| create(store, args)),
            false,
        ),
        "get_task" => answer(
            arguments::<TaskArgs>(name, args).and_then(|args| {
                let doc = plan(store, &args.plan_id)?;
                let id = task_key(&doc, &args.task_id)?;
                Ok(task_infos(&doc).remove(&id))
            }),
            None::<TaskInfo>,
        ),
        "update_task_status" => answer(
            arguments::<UpdateStatusArgs>(name, args).and_then(|args| update(store, args)),
            false,
        ),
        "get_ready_tasks" => answer(
            arguments::<PlanArgs>(name, args).and_then(|args| {
                let doc = plan(store, &args.plan_id)?;
                ready_tasks(&doc, None)
            }),
            Vec::<TaskInfo>::new(),
        ),
        "get_tasks_for_role" => answer(
            arguments::<RoleArgs>(name, args).and_then(|args| {
                let doc = plan(store, &args.plan_id)?;
                let status = args.status.unwrap_or(TaskStatus::Ready);
                if status == TaskStatus::Ready {
                    return ready_tasks(&doc, Some(&args.role_id));
                }
                let mut infos = task_infos(&doc);
                Ok(doc
                    .tasks
                    .iter()
                    .filter(|t| t.assignee.as_deref() == Some(args.role_id.as_str()))
                    .filter(|t| TaskStatus::from(t.status) == status)
                    .filter_map(|t| infos.remove(&key_of(t)))
                    .collect())
            }),
            Vec::<TaskInfo>::new(),
        ),
        "get_plan_status" => answer(
            arguments::<PlanArgs>(name, args)
                .and_then(|args| Ok(Some(structure(&plan(store, &args.plan_id)?)?.status))),
            None::<PlanStatus>,
        ),
        "get_plan_structure" => answer(
            arguments::<PlanArgs>(name, args)
                .and_then(|args| Ok(Some(structure(&plan(store, &args.plan_id)?)?))),
            None::<PlanInstance>,
        ),
        "delete_plan" => answer(
            arguments::<PlanArgs>(name, args).and_then(|args| {
                plan(store, &args.plan_id)?;
                store.delete(
                    &mut |doc: &PlanDocument| match doc.meta.id == args.plan_id {
                        true => Ok(()),
                        false => Err(not_found(&args.plan_id)),
                    },
                )?;
                Ok(true)
            }),
            false,
        ),
        _ => return None,
    })
}

/// `{"result": value}`, or the refusal with the seed's failure value.
fn answer<T: Serialize>(result: Result<T, OpError>, refused: T) -> Outcome {
    match result {
        Ok(result) => Outcome::ok(Answer {
            result,
            error: None,
        }),
        Err(error) => Outcome::error(Answer {
            result: refused,
            error: Some(Refusal {
                code: error.code.as_str().to_owned(),
                message: error.message,
            }),
        }),
    }
}

/// The plan the server holds, if its id is `plan_id`.
fn plan(store: &dyn PlanAccess, plan_id: &str) -> Result<PlanDocument, OpError> {
    if !store.exists()? {
        return Err(not_found(plan_id));
    }
    let doc = store.load()?;
    if doc.meta.id != plan_id {
        return Err(not_found(plan_id));
    }
    Ok(doc)
}

/// `PLAN_NOT_FOUND` for `plan_id`.
fn not_found(plan_id: &str) -> OpError {
    OpError::new(
        ErrorCode::PlanNotFound,
        format!("Plan `{plan_id}` not found"),
    )
    .with(serde_json::json!({"plan_id": plan_id}))
}

/// `PLAN_EXISTS` for creating `plan_id` where plan `doc` is: the same
/// plan, or (a state file holds one plan) another one in its place.
fn exists(doc: &PlanDocument, plan_id: &str) -> OpError {
    let message = match doc.meta.id == plan_id {
        true => format!("Plan `{plan_id}` exists already; delete it with delete_plan to create it again"),
        false => format!(
            "this state file holds plan `{}` and no other; delete it with delete_plan before creating \
             `{plan_id}`, or serve many plans (`planc mcp --dialect plan-tool --store URL`, or a directory)",
            doc.meta.id
        ),
    };
    OpError::new(ErrorCode::PlanExists, message).with(serde_json::json!({"plan_id": plan_id}))
}

/// A task's Plan Tool id: its key, else its number.
fn key_of(task: &TaskDoc) -> String {
    task.key.clone().unwrap_or_else(|| task.id.to_string())
}

/// The Plan Tool id of the task `task_id` names, or `TASK_NOT_FOUND`.
fn task_key(doc: &PlanDocument, task_id: &str) -> Result<String, OpError> {
    doc.tasks
        .iter()
        .find(|t| key_of(t) == task_id)
        .map(key_of)
        .ok_or_else(|| {
            OpError::new(
                ErrorCode::TaskNotFound,
                format!("Task `{task_id}` not found in plan `{}`", doc.meta.id),
            )
        })
}

/// The plan as the Plan Tool shows it: what `planc build --target plan-tool`
/// writes, read back as its type (one rendering for both).
fn structure(doc: &PlanDocument) -> Result<PlanInstance, OpError> {
    serde_json::from_str(&render(doc, Target::PlanTool)).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!("the plan cannot be shown as a Plan Tool plan: {e}"),
        )
    })
}

/// Every task as the Plan Tool shows it, by its Plan Tool id.
fn task_infos(doc: &PlanDocument) -> HashMap<String, TaskInfo> {
    structure(doc)
        .map(|plan| {
            plan.steps
                .into_iter()
                .flat_map(|s| s.tasks)
                .map(|t| (t.task_id.clone(), t))
                .collect()
        })
        .unwrap_or_default()
}

/// The ready tasks (pending, prerequisites done), for one role or all.
fn ready_tasks(doc: &PlanDocument, role: Option<&str>) -> Result<Vec<TaskInfo>, OpError> {
    let op = Op::GetExecutableTaskList(StartNextArgs {
        assignee: role.map(str::to_owned),
    });
    let tasks = match Runner::new(doc.clone())?.apply(&op)?.data {
        OpResult::Executable(ExecutableTasks {
            executable_tasks, ..
        }) => executable_tasks,
        other => return Err(unexpected(&op, &other)),
    };
    let mut infos = task_infos(doc);
    Ok(tasks
        .iter()
        .filter_map(|t| infos.remove(&key_of(t)))
        .collect())
}

/// `update_task_status`: the runner operation for each new status.
fn update(store: &dyn PlanAccess, args: UpdateStatusArgs) -> Result<bool, OpError> {
    let doc = plan(store, &args.plan_id)?;
    let task = TaskRef::Key(task_key(&doc, &args.task_id)?);
    let op = match args.status {
        TaskStatus::Inprogress => Op::StartTask(TaskIdArgs { task_id: task }),
        TaskStatus::Completed => Op::CompleteTask(CompleteArgs {
            task_id: Some(task),
            result: args.result_summary,
            attachments: None,
        }),
        TaskStatus::Error => Op::FailTask(FailArgs {
            task_id: Some(task),
            error_message: args.result_summary,
            should_retry: false,
        }),
        TaskStatus::Skipped => Op::SkipTask(SkipArgs {
            task_id: task,
            reason: args.result_summary,
        }),
        TaskStatus::Ready => {
            return Err(OpError::new(
                ErrorCode::InvalidStatus,
                format!(
                    "Task `{}` cannot be set back to ready: every task starts ready",
                    args.task_id
                ),
            ))
        }
    };
    // The plan's id is checked again under the lock, so a plan replaced
    // meanwhile is never changed in its place.
    store.transact(op.name(), |runner| {
        if runner.document().meta.id != args.plan_id {
            return Err(not_found(&args.plan_id));
        }
        let applied = runner
            .apply(&op)
            .map_err(|error| seed_ids(error, runner.document()))?;
        Ok(((), applied.events))
    })?;
    Ok(true)
}

/// `error` with the tasks it names by number named by their Plan Tool ids
/// (`Task 3 is completed` → ``Task `T3` is completed``): an agent of the
/// Plan Tool knows its tasks by the ids it gave them.
fn seed_ids(mut error: OpError, doc: &PlanDocument) -> OpError {
    let key = |id: u32| doc.tasks.iter().find(|t| t.id == id).map(key_of);
    let mut named = String::with_capacity(error.message.len());
    // Whether the words before were "task", "tasks" or "task(s)" (and a
    // list of numbers after it, each but the last followed by a comma).
    let mut after_task = false;
    let mut after_is = false;
    for piece in error.message.split_inclusive(' ') {
        let word = piece.trim_end_matches([' ', ',', ':', ';', '.', ')']);
        let tail = &piece[word.len()..];
        match word
            .parse::<u32>()
            .ok()
            .filter(|_| after_task)
            .and_then(key)
        {
            Some(key) => {
                named.push_str(&format!("`{key}`{tail}"));
                after_task = tail.starts_with(',');
            }
            // A status in the Plan Tool's words (`Task 3 is pending, …`).
            None if after_is => {
                let status = match word {
                    "pending" => "ready",
                    "in_progress" => "inprogress",
                    "failed" => "error",
                    other => other,
                };
                named.push_str(&format!("{status}{tail}"));
                after_is = false;
                after_task = false;
            }
            None => {
                named.push_str(piece);
                after_is = word == "is" && tail == " ";
                after_task = matches!(
                    piece.to_lowercase().as_str(),
                    "task " | "tasks " | "task(s) "
                );
            }
        }
    }
    error.message = named;
    error
}

/// `create_plan_from_structure`: a new state file from the structure.
fn create(store: &dyn PlanAccess, args: CreateArgs) -> Result<bool, OpError> {
    if store.exists()? {
        return Err(exists(&store.load()?, &args.plan_id));
    }
    let invalid = |message: String| OpError::new(ErrorCode::InvalidArgument, message);
    if args.plan_id.trim().is_empty() {
        return Err(invalid("`plan_id` must not be empty".to_owned()));
    }
    let data = args.structure_data;
    let mut steps = Vec::new();
    let mut tasks = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    for step in data.steps {
        if steps.iter().any(|s: &StepDoc| s.id == step.step_id) {
            return Err(invalid(format!("step `{}` appears twice", step.step_id)));
        }
        let mut ids = Vec::new();
        for task in step.tasks {
            if seen.insert(task.task_id.clone(), ()).is_some() {
                return Err(invalid(format!("task `{}` appears twice", task.task_id)));
            }
            let id = tasks.len() as u32 + 1;
            ids.push(id);
            tasks.push(TaskDoc {
                key: Some(task.task_id),
                step: Some(step.step_id.clone()),
                assignee: task.assignee.filter(|a| !a.is_empty()),
                description: task.description,
                ..TaskDoc::pending(id, task.name, Vec::new())
            });
        }
        steps.push(StepDoc {
            id: step.step_id,
            name: step.name,
            tasks: ids,
        });
    }
    // The assignees are the plan's roles, so the state is a valid plan
    // document (`planc check` wants every assignee declared).
    let mut roles: Vec<RoleDoc> = Vec::new();
    for assignee in tasks.iter().filter_map(|t| t.assignee.as_deref()) {
        if !roles.iter().any(|r| r.id == assignee) {
            roles.push(RoleDoc {
                id: assignee.to_owned(),
                description: None,
            });
        }
    }
    let meta = Meta {
        title: Some(data.name.clone()),
        source: data.workflow_template_source,
        ..Meta::new(args.plan_id, data.description.unwrap_or(data.name))
    };
    let doc = PlanDocument {
        roles,
        steps,
        ..PlanDocument::new(meta, tasks)
    };
    store.create(doc, false)?;
    Ok(true)
}
