//! Dialects: each seed system's tool set over the one runner. A dialect is a
//! table — its tools (names, parameters, descriptions, schemas) and a mapping
//! of each call onto runner operations and of each result onto the seed's
//! result keys, statuses and messages. Adding a dialect is one file here and
//! one line in [`Dialect::ALL`].
//!
//! | dialect | seed | tools |
//! |---|---|---|
//! | `planc` | 001 | the runner's operations (`logEvent` included), plus `observe` |
//! | `tasks` | 000 | `startNextTask`, `completeCurrentTask`, `addTask`, `modifyTask`, `skipTask`, `failCurrentTask` |
//! | `plan-tool` | 002 | `create_plan_from_structure`, `get_task`, `update_task_status`, `get_ready_tasks`, `get_tasks_for_role`, `get_plan_status`, `get_plan_structure`, `delete_plan` |
//! | `steps` | 003 | `observe`, `get_plan` |
//! | `plan-act` | 004 | `create_plan`, `update_plan`, `get_plan`, `start_step`, `complete_step`, `fail_step`, `log_event` |

mod plan_act;
mod plan_tool;
mod planc;
mod steps;
mod tasks;

pub use plan_act::{step as plan_act_step, Step as PlanActStep};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::runner::OpError;

use crate::runner::access::PlanAccess;

use super::tools::ToolDef;

/// A face of the runner: one seed system's tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// The PlanManager API (the runner's operations) plus `observe`: the default.
    #[default]
    Planc,
    /// The planManager's six tools.
    Tasks,
    /// The Plan Tool's functions (snake_case, `plan_id` checked).
    PlanTool,
    /// The steps system's text protocol as a tool.
    Steps,
    /// Plan-Act's planner and executor.
    PlanAct,
}

/// What a tool call answers: the structured content, and whether it is an
/// error (MCP's `isError`).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The result object, in the dialect's shape.
    pub content: Value,
    /// Whether the call was refused.
    pub is_error: bool,
}

impl Outcome {
    fn ok(content: impl serde::Serialize) -> Outcome {
        Outcome {
            content: to_json(content),
            is_error: false,
        }
    }

    fn error(content: impl serde::Serialize) -> Outcome {
        Outcome {
            content: to_json(content),
            is_error: true,
        }
    }
}

/// A dialect's result type as JSON: plain data with string keys, so this
/// cannot fail.
fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Dialect {
    /// Every dialect with its name, the default first.
    pub const ALL: [(&'static str, Dialect); 5] = [
        ("planc", Dialect::Planc),
        ("tasks", Dialect::Tasks),
        ("plan-tool", Dialect::PlanTool),
        ("steps", Dialect::Steps),
        ("plan-act", Dialect::PlanAct),
    ];

    /// The dialect called `name`.
    pub fn from_name(name: &str) -> Option<Dialect> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
    }

    /// The dialect's name (`plan-tool`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, d)| *d == self)
            .map_or("planc", |(n, _)| n)
    }

    /// The dialect's tools, in the seed's order.
    pub fn tools(self) -> Vec<ToolDef> {
        match self {
            Dialect::Planc => planc::tools(),
            Dialect::Tasks => tasks::tools(),
            Dialect::PlanTool => plan_tool::tools(),
            Dialect::Steps => steps::tools(),
            Dialect::PlanAct => plan_act::tools(),
        }
    }

    /// Runs the tool `name` on `store`; `None` when the dialect has no such tool.
    pub fn call(self, store: &dyn PlanAccess, name: &str, arguments: Value) -> Option<Outcome> {
        match self {
            Dialect::Planc => planc::call(store, name, arguments),
            Dialect::Tasks => tasks::call(store, name, arguments),
            Dialect::PlanTool => plan_tool::call(store, name, arguments),
            Dialect::Steps => steps::call(store, name, arguments),
            Dialect::PlanAct => plan_act::call(store, name, arguments),
        }
    }

    /// Whether the dialect has tools that create a plan, so its server may
    /// start before the state file exists.
    pub fn creates_plans(self) -> bool {
        matches!(self, Dialect::PlanTool | Dialect::Steps | Dialect::PlanAct)
    }

    /// What the server tells the model about the tools (MCP's `instructions`).
    pub fn instructions(self) -> &'static str {
        match self {
            Dialect::Planc => {
                "This server holds a task plan. Work through it: call startNextTask, do the task, then \
                 completeTask with a short result (or failTask with the error). If something unexpected \
                 blocks you, addTask with after_task_id. getPlanStatus shows progress. Every result is \
                 {\"success\": true, \"data\": …} or {\"success\": false, \"error\": {code, message, details}}."
            }
            Dialect::Tasks => {
                "This server holds a task plan (planManager). Call startNextTask, do the task, then \
                 completeCurrentTask with a result message (or failCurrentTask). If something unexpected \
                 blocks you, addTask with after_task_id; modifyTask changes a task not yet started."
            }
            Dialect::PlanTool => {
                "This server is a Plan Tool: it stores the state of top-level plans, each under its plan_id. \
                 Create one with create_plan_from_structure, then read tasks (get_ready_tasks, get_tasks_for_role) and \
                 report progress with update_task_status (ready, inprogress, completed, error, skipped). \
                 Every call names the plan by plan_id; each result is {\"result\": …}."
            }
            Dialect::Steps => {
                "This server tracks a step plan from your messages. After each round, call observe with \
                 your message and the tools you called: the first round that calls a tool creates the \
                 plan, lines [Step] description declare steps, [Done] or [完成] completes the current \
                 step (the text before it is the result), [Failed] reason fails it, turning to the next \
                 step's work (\"Now I'll …\", \"接下来…\", or its tool calls) after a round on a step \
                 moves on, and \"continue\" (继续) resumes a paused plan with a progress summary. \
                 get_plan shows the steps."
            }
            Dialect::PlanAct => {
                "This server holds a Plan-Act plan. The planner calls create_plan with a title and steps, \
                 and update_plan with the remaining steps after each step; the executor calls start_step, \
                 then complete_step with the result (and the files it made as attachments) or fail_step \
                 with the error; log_event records its tool calls, messages and errors. Each result lists \
                 the events (plan created/updated/completed, step started/completed/failed) and the plan."
            }
        }
    }
}

/// The arguments of `tool` as `T` (`null` is no arguments); unknown fields
/// are refused, named in the error.
fn arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, OpError> {
    let arguments = match arguments {
        Value::Null => Value::Object(Default::default()),
        Value::Object(map) => Value::Object(map),
        other => {
            return Err(OpError::new(
                crate::runner::ErrorCode::InvalidArgument,
                format!("the arguments of `{tool}` must be an object, not {other}"),
            ))
        }
    };
    serde_json::from_value(arguments).map_err(|error| OpError::bad_arguments(tool, &error))
}

#[cfg(test)]
mod tests;
