//! `steps` (the steps system): the text protocol as a tool. The agent hands each
//! round's message to `observe` (the runner's `observe`: markers, `[Step]`
//! lines, resume words, the iteration limit); the answer is the plan in seed
//! 003's shape — `{id, goal, status, steps: [{id: "step_1", description,
//! status, result}], current_step_index, iteration_count}` — with what the
//! message did. Statuses are the seed's: the plan `running`, `paused`,
//! `completed`, `failed`; a step `pending`, `running`, `completed`, `failed`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::PlanDocument;
use crate::emit::{render, Target};
use crate::mcp::tools::{output_schema, schema, ToolDef};
use crate::runner::access::PlanAccess;
use crate::runner::results::{Advance, Summary};
use crate::runner::{Caller, ErrorCode, OpError, OpResult, Reply, ToolCall};

use super::plan_tool::Refusal;
use super::{arguments, Outcome};

/// A step's status (and the plan's, which adds `paused`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being done.
    Running,
    /// Paused (the plan only: the iteration limit, or a pause).
    Paused,
    /// Done (or skipped).
    Completed,
    /// Failed.
    Failed,
}

/// A step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Step {
    /// `step_1`, `step_2`, … in order.
    pub id: String,
    /// What the step is.
    pub description: String,
    /// pending, running, completed or failed.
    pub status: Status,
    /// What it achieved (or why it failed).
    pub result: Option<String>,
    /// Its place among the tasks of its planc step (`1/1` outside any).
    pub progress: Progress,
}

/// A step's sub-progress: `{current, total}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Progress {
    /// Where the step stands.
    pub current: u64,
    /// Out of how many.
    pub total: u64,
}

/// The plan as the steps system keeps it (`planc build --target steps`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// The plan's id: `plan_<ms>`, the milliseconds of its creation.
    pub id: String,
    /// The user's goal.
    pub goal: String,
    /// running, paused, completed or failed.
    pub status: Status,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The step being worked on (0-based).
    pub current_step_index: usize,
    /// Rounds observed so far.
    pub iteration_count: u64,
}

/// `observe`: what the message did, and the plan now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Observation {
    /// What the message did, one sentence each.
    pub actions: Vec<String>,
    /// What completed the current step in this message: `marker`,
    /// `transition` (a transition word) or `fallback`; null when nothing did.
    pub completed_by: Option<Advance>,
    /// The rounds spent on the current step so far.
    pub step_rounds: u64,
    /// Whether the message resumed a paused plan.
    pub resumed: bool,
    /// Where the plan stands (what is done, current, left): when the
    /// message resumed the plan, or the plan paused at its iteration limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// The plan after the message.
    pub plan: Plan,
}

/// `get_plan`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanView {
    /// The plan.
    pub plan: Plan,
}

/// A refused call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// Why.
    pub error: Refusal,
}

#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum Answer<T> {
    Ok(T),
    Refused(Failure),
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ObserveArgs {
    /// Your whole message of this round (its text; may be empty when you
    /// only called tools).
    #[serde(default)]
    message: Option<String>,
    /// The tools you called in this round: the first round that calls a
    /// tool creates the plan, and a call that belongs to the next step
    /// shows you moved on.
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallArgs>>,
    /// Instead of `message` and `tool_calls`: your assistant message as
    /// the model's API returned it, as JSON text (an object is accepted
    /// too) — OpenAI chat (`{role, content, tool_calls}`), an OpenAI
    /// Responses output (its list of items) or an Anthropic message
    /// (`{role, content: [text, tool_use…]}`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    assistant_message: Option<Value>,
    /// The user's goal, for the plan your first `[Step]` lines create
    /// (default: the message's first line that is not a step).
    #[serde(default)]
    goal: Option<String>,
    /// Who you are, when several agents share the plan (each has its own
    /// current step).
    #[serde(default)]
    agent: Option<String>,
}

/// One tool call of the round.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ToolCallArgs {
    /// The tool's name.
    name: String,
    /// Its arguments, as JSON text (an object is accepted too).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    arguments: Option<Value>,
}

impl ObserveArgs {
    /// The round as the runner reads it; `INVALID_ARGUMENT` when it is
    /// given twice, or not at all.
    fn reply(&self) -> Result<Reply, OpError> {
        let invalid = |message: String| OpError::new(ErrorCode::InvalidArgument, message);
        match (&self.assistant_message, &self.message, &self.tool_calls) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(invalid(
                "give either `assistant_message` or `message` (with `tool_calls`), not both".to_owned(),
            )),
            (Some(value), None, None) => {
                let value = match value {
                    Value::String(text) => serde_json::from_str(text).map_err(|e| {
                        invalid(format!("`assistant_message` is not JSON: {e}"))
                    })?,
                    other => other.clone(),
                };
                Reply::from_json(&value).map_err(|e| invalid(format!("`assistant_message`: {e}")))
            }
            (None, None, None) => Err(invalid(
                "give `message` (your text of this round, with `tool_calls`) or `assistant_message`"
                    .to_owned(),
            )),
            (None, message, calls) => Ok(Reply {
                text: message.clone().unwrap_or_default(),
                tool_calls: calls
                    .iter()
                    .flatten()
                    .map(|call| ToolCall {
                        name: call.name.clone(),
                        arguments: match &call.arguments {
                            Some(Value::String(text)) => serde_json::from_str(text)
                                .unwrap_or_else(|_| Value::String(text.clone())),
                            Some(other) => other.clone(),
                            None => Value::Null,
                        },
                    })
                    .collect(),
            }),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// `observe` and `get_plan`.
pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "observe",
            description: "Hand over your message of this round and the tools you called; the plan follows it. The first round that calls a tool (or declares steps) creates the plan; declare the steps with lines `[Step] description` (then, or in a later round; the first step is then running; a step already declared is not added again). Mark a finished step with [Done] or [完成] (the text before it is the step's result), a failed one with [Failed] reason or [失败] reason. Once you have spent a round on a step, turning to the next step's work also moves on: a sentence that starts with \"Now\", \"Next\", \"接下来\", \"现在\"… and names the next step's work, or a tool call that belongs to the next step; after five rounds without either the step is completed anyway. Say \"continue\" (继续) to resume a paused plan: the answer carries a progress summary. Each call counts one iteration; at the plan's limit (200 for a plan made from your messages) the plan pauses with a summary. Returns what the message did and the plan with its current step.".to_owned(),
            input_schema: schema::<ObserveArgs>(),
            output_schema: output_schema::<Answer<Observation>>(),
            read_only: false,
            destructive: false,
        },
        ToolDef {
            name: "get_plan",
            description: "Get the plan: the goal, the steps with their status and results, the current step and the iteration count.".to_owned(),
            input_schema: schema::<NoArgs>(),
            output_schema: output_schema::<Answer<PlanView>>(),
            read_only: true,
            destructive: false,
        },
    ]
}

/// Runs `observe` or `get_plan`.
pub fn call(store: &dyn PlanAccess, name: &str, args: Value) -> Option<Outcome> {
    let result = match name {
        "observe" => arguments::<ObserveArgs>(name, args).and_then(|args| {
            let reply = args.reply()?;
            let caller = Caller::agent(args.agent);
            store
                .observe_reply(&reply, &caller, args.goal.as_deref(), |r| {
                    plan(r.document())
                })
                .and_then(|(applied, plan)| match applied.data {
                    OpResult::Observed(observed) => Ok(Outcome::ok(Observation {
                        actions: observed.actions,
                        completed_by: observed.completed_by,
                        step_rounds: observed.step_rounds,
                        resumed: observed.resumed,
                        summary: observed.summary,
                        plan,
                    })),
                    other => Err(OpError::new(
                        ErrorCode::InvalidState,
                        format!("observe answered an unexpected result: {}", other.to_json()),
                    )),
                })
        }),
        "get_plan" => arguments::<NoArgs>(name, args)
            .and_then(|_| existing(store))
            .and_then(|doc| Ok(Outcome::ok(PlanView { plan: plan(&doc)? }))),
        _ => return None,
    };
    Some(result.unwrap_or_else(|error| {
        Outcome::error(Failure {
            error: Refusal {
                code: error.code.as_str().to_owned(),
                message: error.message,
            },
        })
    }))
}

/// The plan's state, or `PLAN_NOT_FOUND` before the first `[Step]` lines
/// made it (not the store's "cannot read" error: nothing is wrong yet).
fn existing(store: &dyn PlanAccess) -> Result<PlanDocument, OpError> {
    if !store.exists()? {
        return Err(OpError::new(
            ErrorCode::PlanNotFound,
            "There is no plan yet; declare its steps in observe, one line `[Step] description` each",
        ));
    }
    store.load()
}

/// The plan as the steps system shows it: what `planc build --target steps` writes,
/// read back as its type.
fn plan(doc: &PlanDocument) -> Result<Plan, OpError> {
    serde_json::from_str(&render(doc, Target::Steps)).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!("the plan cannot be shown as a step plan: {e}"),
        )
    })
}
