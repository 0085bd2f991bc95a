//! How long each text an operation carries may be (docs/runner.md, "Text
//! limits"). Checked where every face meets the runner — the CLI, MCP over
//! stdio and HTTP, the JSON API, `observe` — before anything changes: a
//! longer text is `INVALID_ARGUMENT` with `{"field", "bytes", "max"}`, the
//! shape `logEvent`'s 64 KiB `data` limit has.

use serde_json::json;

use super::error::{ErrorCode, OpError};
use super::ops::{Op, ReplanStep, TaskRef, TaskUpdates};
use crate::document::PlanDocument;

/// The longest task name, in bytes.
pub const MAX_NAME_BYTES: usize = 1024;
/// The longest task key (and key a task is named by), in bytes.
pub const MAX_KEY_BYTES: usize = 128;
/// The longest assignee (a role's name), in bytes.
pub const MAX_ASSIGNEE_BYTES: usize = 200;
/// The longest description, reasoning or skip reason, in bytes.
pub const MAX_PROSE_BYTES: usize = 16 * 1024;
/// The longest result or error message of a task, in bytes.
pub const MAX_OUTCOME_BYTES: usize = 64 * 1024;
/// The longest status filter, in bytes.
const MAX_FILTER_BYTES: usize = 64;

/// One text of an operation: its field's name, its length in bytes, its
/// limit.
type Text = (&'static str, usize, usize);

/// Refuses `op` if one of its texts is over its limit.
pub fn check_op_text(op: &Op) -> Result<(), OpError> {
    let mut texts: Vec<Text> = Vec::new();
    collect(op, &mut texts);
    match texts.into_iter().find(|(_, bytes, max)| bytes > max) {
        None => Ok(()),
        Some((field, bytes, max)) => Err(too_long(field, bytes, max)),
    }
}

/// `INVALID_ARGUMENT`: `field` is `bytes` long, over `max`.
pub fn too_long(field: &str, bytes: usize, max: usize) -> OpError {
    OpError::new(
        ErrorCode::InvalidArgument,
        format!("`{field}` is {bytes} bytes; it may be at most {max} bytes"),
    )
    .with(json!({"field": field, "bytes": bytes, "max": max}))
}

fn collect(op: &Op, texts: &mut Vec<Text>) {
    match op {
        Op::StartNextTask(args) | Op::GetExecutableTaskList(args) => {
            assignee(args.assignee.as_deref(), texts);
        }
        Op::StartTask(args)
        | Op::GetTaskById(args)
        | Op::RemoveTask(args)
        | Op::RetryTask(args) => task_ref("task_id", Some(&args.task_id), texts),
        Op::CompleteTask(args) => {
            task_ref("task_id", args.task_id.as_ref(), texts);
            optional("result", args.result.as_deref(), MAX_OUTCOME_BYTES, texts);
        }
        Op::FailTask(args) => {
            task_ref("task_id", args.task_id.as_ref(), texts);
            let error = args.error_message.as_deref();
            optional("error_message", error, MAX_OUTCOME_BYTES, texts);
        }
        Op::SkipTask(args) => {
            task_ref("task_id", Some(&args.task_id), texts);
            optional("reason", args.reason.as_deref(), MAX_PROSE_BYTES, texts);
        }
        Op::LogEvent(args) => task_ref("task_id", args.task_id.as_ref(), texts),
        Op::AddTask(args) => {
            texts.push(("name", args.name.len(), MAX_NAME_BYTES));
            task_ref("after_task_id", args.after_task_id.as_ref(), texts);
            task_fields(
                &args.dependencies,
                &args.reasoning,
                &args.description,
                texts,
            );
            assignee(args.assignee.as_deref(), texts);
        }
        Op::UpdateTask(args) => {
            task_ref("task_id", Some(&args.task_id), texts);
            updates(&args.merged(), texts);
        }
        Op::GetTaskList(args) => {
            optional("status", args.status.as_deref(), MAX_FILTER_BYTES, texts);
            assignee(args.assignee.as_deref(), texts);
        }
        Op::Replan(args) => args.steps.iter().for_each(|step| replan_step(step, texts)),
        Op::GetCurrentTask(_)
        | Op::GetPlanStatus(_)
        | Op::PausePlan(_)
        | Op::ResumePlan(_)
        | Op::ResetPlan(_)
        | Op::Heartbeat(_) => {}
    }
}

fn updates(updates: &TaskUpdates, texts: &mut Vec<Text>) {
    optional("name", updates.name.as_deref(), MAX_NAME_BYTES, texts);
    task_fields(
        &updates.dependencies,
        &updates.reasoning,
        &updates.description,
        texts,
    );
    assignee(updates.assignee.as_deref(), texts);
}

fn replan_step(step: &ReplanStep, texts: &mut Vec<Text>) {
    match step {
        ReplanStep::Name(name) => texts.push(("name", name.len(), MAX_NAME_BYTES)),
        ReplanStep::Task(task) => {
            optional("name", task.name.as_deref(), MAX_NAME_BYTES, texts);
            optional("key", task.key.as_deref(), MAX_KEY_BYTES, texts);
            task_fields(
                &task.dependencies,
                &task.reasoning,
                &task.description,
                texts,
            );
            assignee(task.assignee.as_deref(), texts);
        }
    }
}

fn task_fields(
    dependencies: &Option<Vec<TaskRef>>,
    reasoning: &Option<String>,
    description: &Option<String>,
    texts: &mut Vec<Text>,
) {
    for dependency in dependencies.iter().flatten() {
        task_ref("dependencies", Some(dependency), texts);
    }
    optional("reasoning", reasoning.as_deref(), MAX_PROSE_BYTES, texts);
    optional(
        "description",
        description.as_deref(),
        MAX_PROSE_BYTES,
        texts,
    );
}

fn assignee(assignee: Option<&str>, texts: &mut Vec<Text>) {
    optional("assignee", assignee, MAX_ASSIGNEE_BYTES, texts);
}

fn task_ref(field: &'static str, task: Option<&TaskRef>, texts: &mut Vec<Text>) {
    if let Some(TaskRef::Key(key)) = task {
        texts.push((field, key.len(), MAX_KEY_BYTES));
    }
}

fn optional(field: &'static str, text: Option<&str>, max: usize, texts: &mut Vec<Text>) {
    if let Some(text) = text {
        texts.push((field, text.len(), max));
    }
}

/// Refuses a new plan (`planc run init`, `POST /api/plans`, a dialect's
/// create) whose texts are over the limits an operation would meet: its
/// title, goal, steps' and roles' texts, and each task's.
pub fn check_document_text(doc: &PlanDocument) -> Result<(), OpError> {
    let mut texts: Vec<Text> = Vec::new();
    optional(
        "title",
        doc.meta.title.as_deref(),
        MAX_NAME_BYTES,
        &mut texts,
    );
    texts.push(("goal", doc.meta.goal.len(), MAX_PROSE_BYTES));
    for step in &doc.steps {
        texts.push(("steps.name", step.name.len(), MAX_NAME_BYTES));
    }
    for role in &doc.roles {
        let description = role.description.as_deref();
        optional(
            "roles.description",
            description,
            MAX_PROSE_BYTES,
            &mut texts,
        );
    }
    if let Some((field, bytes, max)) = texts.into_iter().find(|(_, bytes, max)| bytes > max) {
        return Err(too_long(field, bytes, max));
    }
    for task in &doc.tasks {
        let mut texts: Vec<Text> = vec![("name", task.name.len(), MAX_NAME_BYTES)];
        optional("key", task.key.as_deref(), MAX_KEY_BYTES, &mut texts);
        assignee(task.assignee.as_deref(), &mut texts);
        optional(
            "description",
            task.description.as_deref(),
            MAX_PROSE_BYTES,
            &mut texts,
        );
        optional(
            "reasoning",
            task.reasoning.as_deref(),
            MAX_PROSE_BYTES,
            &mut texts,
        );
        optional(
            "result",
            task.result.as_deref(),
            MAX_OUTCOME_BYTES,
            &mut texts,
        );
        if let Some((field, bytes, max)) = texts.into_iter().find(|(_, bytes, max)| bytes > max) {
            let details = json!({"field": field, "bytes": bytes, "max": max, "task_id": task.id});
            return Err(too_long(field, bytes, max).with(details));
        }
    }
    Ok(())
}
