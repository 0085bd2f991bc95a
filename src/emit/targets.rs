//! The seed formats: each seed system loads planc output in its own shape.
//!
//! Every target is rendered from a plan document, so a live runner state can
//! be exported as well as a freshly built plan.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::check::graph::topological_order;
use crate::document::statuses::{LINEAR_STATUSES, PLAN_TOOL_STATUSES};
use crate::document::{
    json_text, PlanDocument, PlanStatus, StepDoc, TaskDoc, TaskStatus, PLAN_STEP_ID,
};

use super::extension::{PlanExtension, TaskExtension};
use super::{peers, Each};

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

/// The document in the shape of `target`, as pretty JSON with a final newline.
pub fn render(document: &PlanDocument, target: Target) -> String {
    render_tagged(document, target, None)
}

/// [`render`], with the task-master tag to write the tasks under (default `master`).
///
/// Every shape is serialised straight from the document (no JSON tree of
/// the whole output is built), so rendering costs about the output's text.
pub fn render_tagged(document: &PlanDocument, target: Target, tag: Option<&str>) -> String {
    match target {
        Target::Planc => document.to_json(),
        Target::Tasks => tasks(document),
        Target::PlanTool => plan_tool(document),
        Target::Steps => steps(document),
        Target::PlanAct => plan_act(document),
        Target::TaskMaster => peers::taskmaster(document, tag.unwrap_or("master")),
        Target::OpenManus => peers::openmanus(document, &linear(document)),
        Target::Codex => peers::codex(document, &linear(document)),
    }
}

/// The planManager's `{overallGoal, currentTaskID, tasks}`.
#[derive(Serialize)]
struct Manager<'a, T> {
    #[serde(rename = "overallGoal")]
    overall_goal: &'a str,
    #[serde(rename = "currentTaskID")]
    current_task_id: Option<u32>,
    tasks: T,
}

#[derive(Serialize)]
struct ManagerTask<'a> {
    id: u32,
    name: &'a str,
    status: TaskStatus,
    dependencies: &'a [u32],
    reasoning: &'a Option<String>,
    result: &'a Option<String>,
}

fn tasks(document: &PlanDocument) -> String {
    json_text(&Manager {
        overall_goal: &document.meta.goal,
        current_task_id: document.state.current_task_id,
        tasks: Each(|| {
            document.tasks.iter().map(|t| ManagerTask {
                id: t.id,
                name: &t.name,
                status: t.status,
                dependencies: &t.dependencies,
                reasoning: &t.reasoning,
                result: &t.result,
            })
        }),
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

/// The Plan Tool's plan instance.
#[derive(Serialize)]
struct ToolPlan<'a, T> {
    plan_id: &'a str,
    name: &'a str,
    description: &'a str,
    workflow_template_source: &'a Option<String>,
    status: &'static str,
    steps: T,
    planc: PlanExtension<'a>,
}

#[derive(Serialize)]
struct ToolStep<'a, T> {
    step_id: &'a str,
    name: &'a str,
    tasks: T,
}

#[derive(Serialize)]
struct ToolTask<'a> {
    task_id: Cow<'a, str>,
    name: &'a str,
    assignee: &'a Option<String>,
    description: Option<&'a str>,
    status: &'static str,
    result_summary: &'a Option<String>,
    planc: TaskExtension<'a>,
}

fn tool_task(t: &TaskDoc) -> ToolTask<'_> {
    ToolTask {
        task_id: t
            .key
            .as_deref()
            .map_or_else(|| Cow::Owned(t.id.to_string()), Cow::Borrowed),
        name: &t.name,
        assignee: &t.assignee,
        description: t.description.as_deref().or(t.reasoning.as_deref()),
        status: plan_tool_status(t.status),
        result_summary: &t.result,
        planc: TaskExtension::new(
            t,
            &["name", "assignee", "description", "result", "step"],
            PLAN_TOOL_STATUSES,
        ),
    }
}

fn plan_tool(document: &PlanDocument) -> String {
    let by_id: HashMap<u32, &TaskDoc> = document.tasks.iter().map(|t| (t.id, t)).collect();
    // The first step of each id, as a search of the list would find it.
    let mut steps: HashMap<&str, &StepDoc> = HashMap::with_capacity(document.steps.len());
    for step in &document.steps {
        steps.entry(step.id.as_str()).or_insert(step);
    }
    // Steps in the order their first task appears; tasks outside any step
    // form the `(plan)` step, placed where the first of them stands. Each
    // group is found by its step's id (a search of the groups for every
    // task was quadratic in the steps).
    let mut groups: Vec<(Option<&StepDoc>, Vec<&TaskDoc>)> = Vec::new();
    let mut group_of: HashMap<Option<&str>, usize> = HashMap::new();
    for t in &document.tasks {
        let step = t.step.as_deref().and_then(|s| steps.get(s).copied());
        let key = step.map(|d| d.id.as_str());
        match group_of.get(&key) {
            Some(&i) => groups[i].1.push(t),
            None => {
                group_of.insert(key, groups.len());
                groups.push((step, vec![t]));
            }
        }
    }
    for step in &document.steps {
        if let Entry::Vacant(vacant) = group_of.entry(Some(step.id.as_str())) {
            vacant.insert(groups.len());
            let members = step
                .tasks
                .iter()
                .filter_map(|id| by_id.get(id).copied())
                .collect();
            groups.push((Some(step), members));
        }
    }
    let title = document.meta.title.as_deref().unwrap_or(&document.meta.id);
    let steps = Each(|| {
        groups.iter().map(|(step, members)| {
            let (step_id, name) = match step {
                Some(d) => (d.id.as_str(), d.name.as_str()),
                None => (PLAN_STEP_ID, title),
            };
            ToolStep {
                step_id,
                name,
                tasks: Each(move || members.iter().map(|t| tool_task(t))),
            }
        })
    });
    let status = match document.state.status {
        PlanStatus::Completed => "completed",
        PlanStatus::Failed => "error",
        _ => "running",
    };
    json_text(&ToolPlan {
        plan_id: &document.meta.id,
        name: title,
        description: &document.meta.goal,
        workflow_template_source: &document.meta.source,
        status,
        steps,
        planc: PlanExtension::new(document, &["id", "goal", "source"]),
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

/// The steps system's plan: a line of steps.
#[derive(Serialize)]
struct StepsPlan<'a, T> {
    id: &'a str,
    goal: &'a str,
    status: &'static str,
    steps: T,
    current_step_index: usize,
    iteration_count: u64,
    planc: PlanExtension<'a>,
}

#[derive(Serialize)]
struct LinearStep<'a> {
    id: String,
    description: &'a str,
    status: &'static str,
    result: &'a Option<String>,
    progress: Cow<'a, Value>,
    planc: TaskExtension<'a>,
}

/// The steps system's id of a plan: `plan_<ms>`, the milliseconds of its
/// creation (`meta.created_at`); a plan not yet run (a build, which writes
/// no time) keeps its own id, as does one whose id already has that form.
fn steps_plan_id(document: &PlanDocument) -> Cow<'_, str> {
    let id = document.meta.id.as_str();
    let seed_form = id
        .strip_prefix("plan_")
        .is_some_and(|ms| !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()));
    match document.meta.created_at.as_deref().and_then(unix_ms) {
        Some(ms) if !seed_form => Cow::Owned(format!("plan_{ms}")),
        _ => Cow::Borrowed(id),
    }
}

/// `2026-02-25T13:32:50Z` (any fraction or offset ignored) as milliseconds
/// since the Unix epoch.
fn unix_ms(time: &str) -> Option<u64> {
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = time.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs).ok().map(|s| s * 1000)
}

/// Each task's `progress` in the steps system's shape: its place among the
/// tasks of its planc step (`{current, total}`; a task outside any step is
/// `1/1`), or the progress a loaded steps plan carried.
fn step_progress<'a>(document: &'a PlanDocument, task: &'a TaskDoc) -> Cow<'a, Value> {
    if let Some(kept @ Value::Object(_)) = task.extra.get("progress") {
        return Cow::Borrowed(kept);
    }
    let group = task
        .step
        .as_deref()
        .and_then(|s| document.steps.iter().find(|g| g.id == s))
        .filter(|g| g.tasks.contains(&task.id));
    let (current, total) = group.map_or((1, 1), |g| {
        let at = g.tasks.iter().position(|&id| id == task.id).unwrap_or(0);
        (at + 1, g.tasks.len())
    });
    Cow::Owned(serde_json::json!({"current": current, "total": total}))
}

fn steps(document: &PlanDocument) -> String {
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
    let id = steps_plan_id(document);
    // The plan's own id goes into the planc object when the shape's differs.
    let held: &[&str] = if id == document.meta.id {
        &["id", "goal"]
    } else {
        &["goal"]
    };
    json_text(&StepsPlan {
        id: &id,
        goal: &document.meta.goal,
        status,
        steps: Each(|| {
            order.iter().enumerate().map(|(i, t)| LinearStep {
                id: format!("step_{}", i + 1),
                description: &t.name,
                status: linear_status(t.status),
                result: &t.result,
                progress: step_progress(document, t),
                planc: linear_extension(t),
            })
        }),
        current_step_index: current,
        iteration_count: document.state.iteration_count,
        planc: PlanExtension::new(document, held),
    })
}

/// Plan-Act's `{title, steps, language}`.
#[derive(Serialize)]
struct PlanAct<'a, T> {
    title: &'a str,
    steps: T,
    language: &'a str,
    planc: PlanExtension<'a>,
}

#[derive(Serialize)]
struct PlanActStep<'a> {
    description: &'a str,
    status: &'static str,
    result: Option<&'a str>,
    success: Option<bool>,
    error: Option<&'a str>,
    attachments: &'a Value,
    planc: TaskExtension<'a>,
}

/// A step's attachments when the task has none.
static NO_ATTACHMENTS: Value = Value::Array(Vec::new());

fn plan_act(document: &PlanDocument) -> String {
    let order = linear(document);
    json_text(&PlanAct {
        title: document.meta.title.as_deref().unwrap_or(&document.meta.id),
        steps: Each(|| {
            order.iter().map(|t| {
                let failed = t.status == TaskStatus::Failed;
                PlanActStep {
                    description: &t.name,
                    status: linear_status(t.status),
                    result: t.result.as_deref().filter(|_| !failed),
                    success: match t.status {
                        TaskStatus::Completed | TaskStatus::Skipped => Some(true),
                        TaskStatus::Failed => Some(false),
                        _ => None,
                    },
                    error: t.result.as_deref().filter(|_| failed),
                    attachments: t.extra.get("attachments").unwrap_or(&NO_ATTACHMENTS),
                    planc: linear_extension(t),
                }
            })
        }),
        language: &document.meta.language,
        planc: PlanExtension::new(document, &["title", "language"]),
    })
}

/// A step's `planc` object: its id and dependencies, and what else the line
/// has no place for (its attachments are the step's own).
fn linear_extension(task: &TaskDoc) -> TaskExtension<'_> {
    TaskExtension::new(task, &["name", "result"], LINEAR_STATUSES).attachments_held()
}
