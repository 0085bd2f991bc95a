//! `plan-act` (Plan-Act): the Planner's `create_plan` and `update_plan`, and
//! the Execution agent's step tools, over a plan of sequential steps. Plans
//! and steps have Plan-Act's shapes — `Plan {title, steps, language}`,
//! `Step {description, status, result, success, error, attachments}` with
//! statuses `pending`, `running`, `completed`, `failed` — and every change
//! answers with Plan-Act's events: `{"events": [{"type": "plan", "status":
//! "created", "plan": …}, {"type": "step", "status": "started", "step": …}]}`.
//! A refused call answers one error event (`{"type": "error", "code",
//! "error"}`), with `isError`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::{Meta, PlanDocument, PlanStatus, TaskDoc, TaskStatus};
use crate::emit::{render, Target};
use crate::mcp::tools::{output_schema, schema, ToolDef};
use crate::runner::access::PlanAccess;
use crate::runner::{
    CompleteArgs, ErrorCode, FailArgs, LogArgs, LogKind, Op, OpError, OpResult, ReplanArgs,
    ReplanStep, Runner, StartNextArgs,
};

use super::{arguments, Outcome};

/// A step's status (Plan-Act's `ExecutionStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionStatus {
    /// Not started.
    Pending,
    /// Being executed.
    Running,
    /// Done (or skipped).
    Completed,
    /// Failed.
    Failed,
}

/// Plan-Act's `Step`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// What the step does.
    pub description: String,
    /// pending, running, completed or failed.
    pub status: ExecutionStatus,
    /// What it achieved.
    pub result: Option<String>,
    /// Whether it succeeded (null until it ends).
    pub success: Option<bool>,
    /// What went wrong.
    pub error: Option<String>,
    /// Files it produced.
    pub attachments: Vec<String>,
}

/// Plan-Act's `Plan` (`planc build --target plan-act`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// The plan's title.
    pub title: String,
    /// Its steps, in order.
    pub steps: Vec<Step>,
    /// The language to answer in (zh, en).
    pub language: String,
}

/// What happened to the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlanEventStatus {
    /// The planner created it.
    Created,
    /// The planner replaced its remaining steps.
    Updated,
    /// Every step is done.
    Completed,
    /// A step failed and nothing else can run.
    Failed,
}

/// What happened to a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepEventStatus {
    /// It started.
    Started,
    /// It completed.
    Completed,
    /// It failed.
    Failed,
}

/// One of Plan-Act's events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Event {
    /// `PlanEvent`: the plan was created, updated, completed or failed.
    Plan {
        /// created, updated, completed or failed.
        status: PlanEventStatus,
        /// The plan now.
        plan: Plan,
    },
    /// `StepEvent`: a step started, completed or failed.
    Step {
        /// started, completed or failed.
        status: StepEventStatus,
        /// The step now.
        step: Step,
    },
    /// `ErrorEvent`: the call was refused.
    Error {
        /// The stable code (PLAN_EXISTS, PLAN_NOT_FOUND, INVALID_STATUS, …).
        code: String,
        /// What went wrong.
        error: String,
    },
}

/// What a change answers: its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Events {
    /// In the order they happened.
    pub events: Vec<Event>,
}

/// `get_plan`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanView {
    /// The plan.
    pub plan: Plan,
}

/// What `get_plan` answers: the plan, or a refusal (an error event); its
/// output schema allows both, as every other tool's does.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum PlanOrRefusal {
    Plan(PlanView),
    Refused(Events),
}

/// A step as the planner writes it: its description, or a step object
/// (seed 004's `Step`: `{"description", "status", …}`).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum StepInput {
    Text(String),
    Object(StepObject),
}

/// Seed 004's `Step` as the planner's JSON holds it: only `description` is
/// needed; the rest is what the plan already knows of the step.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StepObject {
    /// What the step does.
    description: String,
    /// pending (a step still to do), or running, completed or failed (a
    /// step the plan has: kept as the plan has it).
    #[serde(default)]
    status: Option<StatusInput>,
    /// What it achieved (the plan's own is kept).
    #[serde(default)]
    #[allow(dead_code)] // accepted as the planner writes it
    result: Option<String>,
    /// Whether it succeeded (the plan's own is kept).
    #[serde(default)]
    #[allow(dead_code)]
    success: Option<bool>,
    /// What went wrong (the plan's own is kept).
    #[serde(default)]
    #[allow(dead_code)]
    error: Option<String>,
    /// Files it produced (the plan's own are kept).
    #[serde(default)]
    #[allow(dead_code)]
    attachments: Option<Vec<String>>,
}

/// A step's status as the planner writes it. The variants carry no doc
/// comments, so the schema is a plain `enum` (which strict function
/// calling takes) rather than a `oneOf` of constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StatusInput {
    Pending,
    Running,
    Completed,
    Failed,
}

impl StepInput {
    fn description(self) -> String {
        match self {
            StepInput::Text(text) => text,
            StepInput::Object(step) => step.description,
        }
    }

    /// Whether the step is one still to do (a text, or a pending step).
    fn is_pending(&self) -> bool {
        match self {
            StepInput::Text(_) => true,
            StepInput::Object(step) => {
                matches!(step.status, None | Some(StatusInput::Pending))
            }
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// A brief title.
    title: String,
    /// The steps, in order: descriptions, or objects with a description.
    steps: Vec<StepInput>,
    /// The language to answer in (zh, en); default en.
    #[serde(default)]
    language: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    /// The plan's title, as the planner restates it (the plan keeps its own).
    #[serde(default)]
    #[allow(dead_code)] // accepted as the planner writes it
    title: Option<String>,
    /// The steps, in order: the pending ones (descriptions, or step objects
    /// with status pending) replace the remaining steps; completed, running
    /// and failed ones are kept as the plan has them.
    steps: Vec<StepInput>,
    /// The language, as the planner restates it (the plan keeps its own).
    #[serde(default)]
    #[allow(dead_code)]
    language: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompleteStepArgs {
    /// What the step achieved.
    result: String,
    /// Files the step produced (paths or URLs).
    #[serde(default)]
    attachments: Option<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LogEventArgs {
    /// tool (a tool call), message (to the user) or error.
    kind: LogKind,
    /// What to record, at most 64 KiB: for a message or an error its text, for a tool call `{"name", "args", "result"}` as JSON text (kept as the object).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    data: Value,
}

/// `log_event`: the event recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoggedEvent {
    /// The event, as Plan-Act shapes it.
    pub event: LogEvent,
}

/// `log_event`'s answer: the event logged, or (refused) an error event.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum LogAnswer {
    Logged(LoggedEvent),
    Refused(Events),
}

/// Plan-Act's ToolEvent, MessageEvent or ErrorEvent, as logged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogEvent {
    /// tool, message or error.
    #[serde(rename = "type")]
    pub kind: LogKind,
    /// What was recorded.
    pub data: Value,
    /// The running step it belongs to, if any.
    pub step: Option<Step>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FailStepArgs {
    /// What went wrong.
    error: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn def<A: JsonSchema, R: JsonSchema>(
    name: &'static str,
    description: &str,
    read_only: bool,
) -> ToolDef {
    ToolDef {
        name,
        description: description.to_owned(),
        input_schema: schema::<A>(),
        output_schema: output_schema::<R>(),
        read_only,
        destructive: name == "update_plan",
    }
}

/// The planner's and the executor's tools.
pub fn tools() -> Vec<ToolDef> {
    vec![
        def::<CreateArgs, Events>(
            "create_plan",
            "Planner: create the execution plan for the user's request: a brief title, the steps in order (each a description) and the response language (zh/en). Answers a plan event (created).",
            false,
        ),
        def::<UpdateArgs, Events>(
            "update_plan",
            "Planner: after a step, give the updated plan ({title, steps, language}, as create_plan takes it; steps as descriptions or step objects): its pending steps replace the remaining ones; completed, running and failed steps are kept as the plan has them. A failed plan is not updated (PLAN_NOT_ACTIVE). Answers a plan event (updated).",
            false,
        ),
        def::<NoArgs, PlanOrRefusal>(
            "get_plan",
            "Get the plan: title, steps with status, result, success, error and attachments, and language.",
            true,
        ),
        def::<NoArgs, Events>(
            "start_step",
            "Executor: start the next pending step (it becomes running). Answers a step event (started), or a plan event (completed) when no step is left.",
            false,
        ),
        def::<CompleteStepArgs, Events>(
            "complete_step",
            "Executor: the running step succeeded; record its result and the files it produced (attachments: paths or URLs). Answers a step event (completed), and a plan event (completed) after the last step.",
            false,
        ),
        def::<FailStepArgs, Events>(
            "fail_step",
            "Executor: the running step failed; record the error. Answers a step event (failed), and a plan event (failed) when the plan cannot go on.",
            false,
        ),
        def::<LogEventArgs, LogAnswer>(
            "log_event",
            "Executor: record a tool call (kind tool, data {name, args, result}), a message to the user (kind message) or an error (kind error) in the plan's event log, with the running step. Changes no step.",
            false,
        ),
    ]
}

/// Runs one of the tools.
pub fn call(store: &dyn PlanAccess, name: &str, args: Value) -> Option<Outcome> {
    let known = tools().iter().any(|t| t.name == name);
    if known && name != "create_plan" {
        match store.exists() {
            Ok(true) => {}
            Ok(false) => {
                return Some(refused(OpError::new(
                    ErrorCode::PlanNotFound,
                    "There is no plan yet; the planner creates it with create_plan",
                )))
            }
            Err(error) => return Some(refused(error)),
        }
    }
    let result = match name {
        "create_plan" => arguments::<CreateArgs>(name, args).and_then(|args| create(store, args)),
        "update_plan" => arguments::<UpdateArgs>(name, args).and_then(|args| update(store, args)),
        "get_plan" => arguments::<NoArgs>(name, args)
            .and_then(|_| store.load())
            .and_then(|doc| Ok(Outcome::ok(PlanView { plan: plan(&doc)? }))),
        "start_step" => arguments::<NoArgs>(name, args).and_then(|_| start(store)),
        "log_event" => arguments::<LogEventArgs>(name, args).and_then(|args| log(store, args)),
        "complete_step" => arguments::<CompleteStepArgs>(name, args).and_then(|args| {
            let op = Op::CompleteTask(CompleteArgs {
                task_id: None,
                result: Some(args.result),
                attachments: args.attachments,
            });
            change(store, &op, |result, doc| {
                step_ended(result, doc, StepEventStatus::Completed)
            })
        }),
        "fail_step" => arguments::<FailStepArgs>(name, args).and_then(|args| {
            let op = Op::FailTask(FailArgs {
                task_id: None,
                error_message: Some(args.error),
                should_retry: false,
            });
            change(store, &op, |result, doc| {
                step_ended(result, doc, StepEventStatus::Failed)
            })
        }),
        _ => return None,
    };
    Some(result.unwrap_or_else(refused))
}

/// `update_plan`: the remaining steps replaced; a plan event (updated).
fn update(store: &dyn PlanAccess, args: UpdateArgs) -> Result<Outcome, OpError> {
    let op = Op::Replan(ReplanArgs {
        steps: args
            .steps
            .into_iter()
            .filter(StepInput::is_pending)
            .map(|s| ReplanStep::Name(s.description()))
            .collect(),
    });
    let events = store.transact(op.name(), |runner: &mut Runner| {
        // Seed 004's Failed is an end state: the planner does not revive it.
        if runner.document().state.status == PlanStatus::Failed {
            return Err(OpError::new(
                ErrorCode::PlanNotActive,
                "The plan failed, and a failed plan ends there (seed 004); the planner starts a new one with create_plan",
            ));
        }
        let applied = runner.apply(&op)?;
        let answer = vec![Event::Plan {
            status: PlanEventStatus::Updated,
            plan: plan(runner.document())?,
        }];
        Ok((answer, applied.events))
    })?;
    Ok(Outcome::ok(Events { events }))
}

/// `log_event`: the event recorded in the log with the running step, if any.
fn log(store: &dyn PlanAccess, args: LogEventArgs) -> Result<Outcome, OpError> {
    let op = Op::LogEvent(LogArgs {
        kind: args.kind,
        data: args.data.clone(),
        task_id: None,
    });
    store
        .transact(op.name(), |runner: &mut Runner| {
            let applied = runner.apply(&op)?;
            let step = match &applied.data {
                OpResult::Logged(logged) => logged
                    .task_id
                    .and_then(|id| runner.document().tasks.iter().find(|t| t.id == id))
                    .map(step),
                other => return Err(unexpected(other)),
            };
            Ok((step, applied.events))
        })
        .map(|step| {
            Outcome::ok(LoggedEvent {
                event: LogEvent {
                    kind: args.kind,
                    data: crate::runner::logged_data(&args.data),
                    step,
                },
            })
        })
}

/// A refused call: one error event.
fn refused(error: OpError) -> Outcome {
    Outcome::error(Events {
        events: vec![Event::Error {
            code: error.code.as_str().to_owned(),
            error: error.message,
        }],
    })
}

/// Applies `op` as one change and answers the events `events` makes of its
/// result and the document after it.
fn change(
    store: &dyn PlanAccess,
    op: &Op,
    events: impl Fn(&OpResult, &PlanDocument) -> Result<Vec<Event>, OpError>,
) -> Result<Outcome, OpError> {
    let events = store.transact(op.name(), |runner: &mut Runner| {
        let applied = runner.apply(op)?;
        let answer = events(&applied.data, runner.document())?;
        Ok((answer, applied.events))
    })?;
    Ok(Outcome::ok(Events { events }))
}

/// `start_step`: the next step starts, or the plan says it is done.
fn start(store: &dyn PlanAccess) -> Result<Outcome, OpError> {
    let op = Op::StartNextTask(StartNextArgs::default());
    change(store, &op, |result, doc| match result {
        OpResult::Started(started) => match (&started.task, doc.state.status) {
            (Some(task), _) => Ok(vec![Event::Step {
                status: StepEventStatus::Started,
                step: step(task),
            }]),
            (None, PlanStatus::Completed) => Ok(vec![Event::Plan {
                status: PlanEventStatus::Completed,
                plan: plan(doc)?,
            }]),
            (None, _) => Err(OpError::new(
                ErrorCode::InvalidStatus,
                started.message.clone(),
            )),
        },
        other => Err(unexpected(other)),
    })
}

/// The events of a step that completed or failed: the step's, then the
/// plan's if that ended it.
fn step_ended(
    result: &OpResult,
    doc: &PlanDocument,
    status: StepEventStatus,
) -> Result<Vec<Event>, OpError> {
    let id = match result {
        OpResult::Finished(done) => done.task_id,
        OpResult::Failed(failed) => failed.task_id,
        other => return Err(unexpected(other)),
    };
    let task = doc
        .tasks
        .iter()
        .find(|t| t.id == id)
        .ok_or_else(|| OpError::new(ErrorCode::TaskNotFound, format!("step {id} is gone")))?;
    let mut events = vec![Event::Step {
        status,
        step: step(task),
    }];
    let ended = match doc.state.status {
        PlanStatus::Completed => Some(PlanEventStatus::Completed),
        PlanStatus::Failed => Some(PlanEventStatus::Failed),
        _ => None,
    };
    if let Some(status) = ended {
        events.push(Event::Plan {
            status,
            plan: plan(doc)?,
        });
    }
    Ok(events)
}

fn unexpected(result: &OpResult) -> OpError {
    OpError::new(
        ErrorCode::InvalidState,
        format!("unexpected result: {}", result.to_json()),
    )
}

/// A task as Plan-Act's step (as `planc build --target plan-act` shows it).
pub fn step(task: &TaskDoc) -> Step {
    let failed = task.status == TaskStatus::Failed;
    Step {
        description: task.name.clone(),
        status: match task.status {
            TaskStatus::Pending => ExecutionStatus::Pending,
            TaskStatus::InProgress => ExecutionStatus::Running,
            TaskStatus::Completed | TaskStatus::Skipped => ExecutionStatus::Completed,
            TaskStatus::Failed => ExecutionStatus::Failed,
        },
        result: if failed { None } else { task.result.clone() },
        success: match task.status {
            TaskStatus::Completed | TaskStatus::Skipped => Some(true),
            TaskStatus::Failed => Some(false),
            _ => None,
        },
        error: if failed { task.result.clone() } else { None },
        attachments: task
            .extra
            .get("attachments")
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default(),
    }
}

/// The plan as Plan-Act shows it: what `planc build --target plan-act`
/// writes, read back as its type.
fn plan(doc: &PlanDocument) -> Result<Plan, OpError> {
    serde_json::from_str(&render(doc, Target::PlanAct)).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!("the plan cannot be shown as a Plan-Act plan: {e}"),
        )
    })
}

/// `create_plan`: a new state file with the steps in sequence.
fn create(store: &dyn PlanAccess, args: CreateArgs) -> Result<Outcome, OpError> {
    if store.exists()? {
        return Err(OpError::new(
            ErrorCode::PlanExists,
            "a plan exists already; change its remaining steps with update_plan",
        ));
    }
    if args.title.trim().is_empty() {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "`title` must not be empty",
        ));
    }
    let mut tasks = Vec::new();
    for (n, description) in args
        .steps
        .into_iter()
        .map(StepInput::description)
        .enumerate()
    {
        let id = n as u32 + 1;
        if description.trim().is_empty() {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!("step {id} has an empty description"),
            ));
        }
        let dependencies = if id > 1 { vec![id - 1] } else { Vec::new() };
        tasks.push(TaskDoc::pending(id, description.trim(), dependencies));
    }
    let meta = Meta {
        title: Some(args.title.clone()),
        language: args.language.unwrap_or_else(|| "en".to_owned()),
        ..Meta::new("plan", args.title)
    };
    let doc = PlanDocument::new(meta, tasks);
    let doc = store.create(doc, false)?;
    Ok(Outcome::ok(Events {
        events: vec![Event::Plan {
            status: PlanEventStatus::Created,
            plan: plan(&doc)?,
        }],
    }))
}
