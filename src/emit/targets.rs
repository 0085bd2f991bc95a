//! The seed formats: each seed system loads planc output in its own shape.
//!
//! Every target is rendered from a plan document, so a live runner state can
//! be exported as well as a freshly built plan.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::check::graph::topological_order;
use crate::document::statuses::{LINEAR_STATUSES, PLAN_TOOL_STATUSES};
use crate::document::{PlanDocument, PlanStatus, TaskDoc, TaskStatus};

use super::peers::{self, plan_extension, task_extension};

/// An output shape for `planc build --target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `planc/1`, the default.
    Planc,
    /// The planManager: `{overallGoal, currentTaskID, tasks}`.
    Tasks,
    /// The Plan Tool: its plan instance, tasks grouped in steps.
    PlanTool,
    /// The steps system: a linear list of steps, tasks in a topological order.
    Steps,
    /// Plan-Act: Plan-Act's `{title, steps, language}`.
    PlanAct,
    /// task-master's `tasks.json`, tagged (`{"master": {"tasks": […]}}`).
    TaskMaster,
    /// An OpenManus planning plan.
    OpenManus,
    /// Codex's `update_plan` arguments.
    Codex,
}

impl Target {
    /// Every target with its name.
    pub const ALL: [(&'static str, Target); 8] = [
        ("planc", Target::Planc),
        ("tasks", Target::Tasks),
        ("plan-tool", Target::PlanTool),
        ("steps", Target::Steps),
        ("plan-act", Target::PlanAct),
        ("taskmaster", Target::TaskMaster),
        ("openmanus", Target::OpenManus),
        ("codex", Target::Codex),
    ];

    /// The target called `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
    }
}

/// The step id that groups the tasks standing directly in the plan (seed
/// 002 puts every task in a step). No identifier can be spelt like it.
pub const PLAN_STEP_ID: &str = "(plan)";

/// The document in the shape of `target`, as pretty JSON with a final newline.
pub fn render(document: &PlanDocument, target: Target) -> String {
    render_tagged(document, target, None)
}

/// [`render`], with the task-master tag to write the tasks under (default `master`).
pub fn render_tagged(document: &PlanDocument, target: Target, tag: Option<&str>) -> String {
    let value = match target {
        Target::Planc => return document.to_json(),
        Target::Tasks => tasks(document),
        Target::PlanTool => plan_tool(document),
        Target::Steps => steps(document),
        Target::PlanAct => plan_act(document),
        Target::TaskMaster => peers::taskmaster(document, tag.unwrap_or("master")),
        Target::OpenManus => peers::openmanus(document, &linear(document)),
        Target::Codex => peers::codex(document, &linear(document)),
    };
    crate::document::json_text(&value)
}

fn tasks(document: &PlanDocument) -> Value {
    json!({
        "overallGoal": document.meta.goal,
        "currentTaskID": document.state.current_task_id,
        "tasks": document.tasks.iter().map(|t| json!({
            "id": t.id,
            "name": t.name,
            "status": t.status.as_str(),
            "dependencies": t.dependencies,
            "reasoning": t.reasoning,
            "result": t.result,
        })).collect::<Vec<_>>(),
    })
}

fn plan_tool_status(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Pending => "ready",
        TaskStatus::InProgress => "inprogress",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "error",
        TaskStatus::Skipped => "skipped",
    }
}

fn plan_tool(document: &PlanDocument) -> Value {
    let by_id: HashMap<u32, &TaskDoc> = document.tasks.iter().map(|t| (t.id, t)).collect();
    let task = |t: &TaskDoc| {
        let mut object = json!({
            "task_id": t.key.clone().unwrap_or_else(|| t.id.to_string()),
            "name": t.name,
            "assignee": t.assignee,
            "description": t.description.clone().or_else(|| t.reasoning.clone()),
            "status": plan_tool_status(t.status),
            "result_summary": t.result,
        });
        let held = ["name", "assignee", "description", "result", "step"];
        let mut ext = task_extension(t, &held, PLAN_TOOL_STATUSES).unwrap_or_else(|| json!({}));
        ext["dependencies"] = json!(t.dependencies);
        object["planc"] = ext;
        object
    };
    // Steps in the order their first task appears; tasks outside any step
    // form the `(plan)` step, placed where the first of them stands.
    let mut groups: Vec<(Option<&str>, Vec<&TaskDoc>)> = Vec::new();
    for t in &document.tasks {
        let step = t
            .step
            .as_deref()
            .filter(|s| document.steps.iter().any(|d| d.id == *s));
        match groups.iter_mut().find(|(s, _)| *s == step) {
            Some((_, members)) => members.push(t),
            None => groups.push((step, vec![t])),
        }
    }
    for step in &document.steps {
        if !groups.iter().any(|(s, _)| *s == Some(step.id.as_str())) {
            let members = step
                .tasks
                .iter()
                .filter_map(|id| by_id.get(id).copied())
                .collect();
            groups.push((Some(step.id.as_str()), members));
        }
    }
    let steps: Vec<Value> = groups
        .into_iter()
        .map(|(step, members)| {
            let (id, name) = match step.and_then(|s| document.steps.iter().find(|d| d.id == s)) {
                Some(d) => (d.id.clone(), d.name.clone()),
                None => (
                    PLAN_STEP_ID.to_owned(),
                    document
                        .meta
                        .title
                        .clone()
                        .unwrap_or_else(|| document.meta.id.clone()),
                ),
            };
            json!({
                "step_id": id,
                "name": name,
                "tasks": members.into_iter().map(task).collect::<Vec<_>>(),
            })
        })
        .collect();
    let status = match document.state.status {
        PlanStatus::Completed => "completed",
        PlanStatus::Failed => "error",
        _ => "running",
    };
    json!({
        "plan_id": document.meta.id,
        "name": document.meta.title.clone().unwrap_or_else(|| document.meta.id.clone()),
        "description": document.meta.goal,
        "workflow_template_source": document.meta.source,
        "status": status,
        "steps": steps,
        "planc": plan_extension(document, &["id", "goal", "source"]),
    })
}

/// The tasks in a topological order that keeps document order where it can.
fn linear(document: &PlanDocument) -> Vec<&TaskDoc> {
    let index: HashMap<u32, usize> = document
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id, i))
        .collect();
    let dependencies: Vec<Vec<usize>> = document
        .tasks
        .iter()
        .map(|t| {
            t.dependencies
                .iter()
                .filter_map(|d| index.get(d).copied())
                .collect()
        })
        .collect();
    topological_order(&dependencies)
        .into_iter()
        .map(|i| &document.tasks[i])
        .collect()
}

fn linear_status(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Pending => "pending",
        TaskStatus::InProgress => "running",
        TaskStatus::Completed | TaskStatus::Skipped => "completed",
        TaskStatus::Failed => "failed",
    }
}

fn steps(document: &PlanDocument) -> Value {
    let order = linear(document);
    let current = order
        .iter()
        .position(|t| t.status == TaskStatus::InProgress)
        .or_else(|| order.iter().position(|t| !t.status.is_done()))
        .unwrap_or(order.len().saturating_sub(1));
    let status = match document.state.status {
        PlanStatus::Paused => "paused",
        PlanStatus::Completed => "completed",
        PlanStatus::Failed => "failed",
        PlanStatus::Idle | PlanStatus::Running => "running",
    };
    json!({
        "id": document.meta.id,
        "goal": document.meta.goal,
        "status": status,
        "steps": order.iter().enumerate().map(|(i, t)| json!({
            "id": format!("step_{}", i + 1),
            "description": t.name,
            "status": linear_status(t.status),
            "result": t.result,
            "planc": linear_extension(t),
        })).collect::<Vec<_>>(),
        "current_step_index": current,
        "iteration_count": document.state.iteration_count,
        "planc": plan_extension(document, &["id", "goal"]),
    })
}

fn plan_act(document: &PlanDocument) -> Value {
    json!({
        "title": document.meta.title.clone().unwrap_or_else(|| document.meta.id.clone()),
        "steps": linear(document).into_iter().map(|t| json!({
            "description": t.name,
            "status": linear_status(t.status),
            "result": if t.status == TaskStatus::Failed { None } else { t.result.clone() },
            "success": match t.status {
                TaskStatus::Completed | TaskStatus::Skipped => Some(true),
                TaskStatus::Failed => Some(false),
                _ => None,
            },
            "error": if t.status == TaskStatus::Failed { t.result.clone() } else { None },
            "attachments": t.extra.get("attachments").cloned().unwrap_or_else(|| json!([])),
            "planc": linear_extension(t),
        })).collect::<Vec<_>>(),
        "language": document.meta.language,
        "planc": plan_extension(document, &["title", "language"]),
    })
}

/// A step's `planc` object: its id and dependencies, and what else the line has no place for.
fn linear_extension(task: &TaskDoc) -> Value {
    let mut ext =
        task_extension(task, &["name", "result"], LINEAR_STATUSES).unwrap_or_else(|| json!({}));
    ext["id"] = json!(task.id);
    ext["dependencies"] = json!(task.dependencies);
    if let Some(Value::Object(extra)) = ext.get_mut("extra") {
        extra.remove("attachments");
        if extra.is_empty() {
            ext.as_object_mut().expect("an object").remove("extra");
        }
    }
    ext
}
