//! Tool definitions as plain data (name, description, input and output
//! schemas), and planc's own: one per runner operation, with a description an
//! LLM can act on, a JSON Schema of its arguments taken from the runner's
//! argument types and one of its result taken from the result types.
//! `planc mcp` serves them; `planc tools` prints them as MCP, OpenAI or
//! Anthropic tool definitions. The seed dialects build theirs the same way
//! (`super::dialect`).

use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use super::export::{self, ToolSpec};
use crate::runner::results::ErrorBody;
use crate::runner::{
    result_schema, AddArgs, CompleteArgs, FailArgs, ListArgs, LogArgs, NoArgs, Op, ReplanArgs,
    SkipArgs, StartNextArgs, TaskIdArgs, UpdateArgs,
};

/// One tool: name, description and the JSON Schemas of its arguments and its result.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    /// The tool's name (`startNextTask`, `update_task_status`).
    pub name: &'static str,
    /// What the tool does, for a model.
    pub description: String,
    /// The JSON Schema of the arguments (an object schema, no `$ref`).
    pub input_schema: Map<String, Value>,
    /// The JSON Schema of the structured result (an object schema, no `$ref`).
    pub output_schema: Map<String, Value>,
    /// Whether the tool only reads the plan.
    pub read_only: bool,
    /// Whether the tool may throw work away (reset, replace or delete a plan).
    pub destructive: bool,
}

/// The JSON Schema of `T` as input (arguments), inlined (no `$ref`), as an
/// object schema.
pub fn schema<T: JsonSchema>() -> Map<String, Value> {
    schema_with::<T>(schemars::generate::SchemaSettings::draft2020_12())
}

/// The JSON Schema of `T` as output: schemars' serialize contract, so a
/// field with a serde default on input is still required when the output
/// always has it.
pub fn written_schema<T: JsonSchema>() -> Map<String, Value> {
    schema_with::<T>(schemars::generate::SchemaSettings::draft2020_12().for_serialize())
}

fn schema_with<T: JsonSchema>(settings: schemars::generate::SchemaSettings) -> Map<String, Value> {
    let generator: SchemaGenerator = settings
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    let mut object = match value.as_object_mut() {
        Some(object) => std::mem::take(object),
        None => Map::new(),
    };
    object.remove("$schema");
    object.remove("title");
    object.remove("description");
    object.insert("type".to_owned(), json!("object"));
    object.entry("properties").or_insert_with(|| json!({}));
    for value in object.values_mut() {
        drop_integer_formats(value);
    }
    object
}

/// Removes schemars' `"format": "uint32"` and the like: not JSON Schema
/// formats, and some model APIs refuse unknown ones (`minimum` says it all).
fn drop_integer_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let integer_format = map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("uint") || f.starts_with("int"));
            if integer_format {
                map.remove("format");
            }
            map.values_mut().for_each(drop_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_integer_formats),
        _ => {}
    }
}

const ID_NOTE: &str =
    "Task ids are integers; a task's key (its name in the .plan source, e.g. \"open\") works too.";

/// Every tool, in the order of docs/runner.md.
pub fn tools() -> Vec<ToolDef> {
    let tools: Vec<ToolDef> = [
        work_tools(),
        edit_tools(),
        read_tools(),
        course_tools(),
        agent_tools(),
    ]
    .concat();
    debug_assert!(tools.iter().map(|t| t.name).eq(Op::NAMES));
    tools.into_iter().map(with_caller).collect()
}

/// A tool: its description made full, its output the envelope of its result.
fn def(
    name: &'static str,
    description: &str,
    input_schema: Map<String, Value>,
    read_only: bool,
) -> ToolDef {
    let mut tool = ToolDef {
        name,
        description: description.to_owned(),
        input_schema,
        output_schema: envelope_schema(name),
        read_only,
        destructive: matches!(name, "resetPlan" | "replan"),
    };
    tool.description = full_description(&tool);
    tool
}

/// The tools that move tasks through their life: start, finish, skip.
fn work_tools() -> Vec<ToolDef> {
    vec![
        def(
            "getCurrentTask",
            "Get the task you are working on now (the current task), or null when none is current. Call this when you are unsure what to do next.",
            schema::<NoArgs>(),
            true,
        ),
        def(
            "startNextTask",
            "Start the next task: the first task in plan order that is pending and whose dependencies are all completed or skipped. It becomes in_progress and current; do it, then call completeTask or failTask. When nothing can start, data.task is null and data.reason says why: completed (the plan is done), waiting (other tasks are in progress), blocked (a required task failed) or no_task_for_assignee.",
            schema::<StartNextArgs>(),
            false,
        ),
        def(
            "startTask",
            "Start a given pending task whose dependencies are all done (status in_progress, becomes current). Prefer startNextTask unless you must pick the task yourself.",
            schema::<TaskIdArgs>(),
            false,
        ),
        def(
            "completeTask",
            "Mark a task completed and record what it achieved in `result` (a short summary), and the files it produced in `attachments` (paths or URLs). Without task_id, completes the current task. Tasks that waited for it may then start.",
            schema::<CompleteArgs>(),
            false,
        ),
        def(
            "failTask",
            "Report that a task failed, with error_message. If the task has retries left and should_retry is true (the default), it goes back to pending to be tried again (will_retry: true); otherwise it is failed, and tasks that depend on it are blocked unless it is optional. Without task_id, fails the current task.",
            schema::<FailArgs>(),
            false,
        ),
        def(
            "skipTask",
            "Skip a task that is not needed (pending, in progress, or failed), with a reason. Tasks that depend on it may run as if it were completed.",
            schema::<SkipArgs>(),
            false,
        ),
    ]
}

/// The tools that change the plan's tasks.
fn edit_tools() -> Vec<ToolDef> {
    vec![
        def(
            "addTask",
            "Add a task to handle something the plan did not foresee (a popup, a captcha, a missing step). With after_task_id = X, the task is inserted right after X and the pending tasks that depended on X now depend on the new task. dependencies default to [after_task_id].",
            schema::<AddArgs>(),
            false,
        ),
        def(
            "updateTask",
            "Change a pending task: its name, dependencies, reasoning, assignee or description (directly or inside `updates`). Started or finished tasks cannot be changed.",
            schema::<UpdateArgs>(),
            false,
        ),
        def(
            "removeTask",
            "Remove a pending task that is no longer needed; tasks that depended on it take over its dependencies.",
            schema::<TaskIdArgs>(),
            false,
        ),
    ]
}

/// The tools that read the plan.
fn read_tools() -> Vec<ToolDef> {
    vec![
        def("getTaskById", "Get one task with all its fields (status, dependencies, result, retry…).", schema::<TaskIdArgs>(), true),
        def(
            "getTaskList",
            "List the plan's tasks in plan order, optionally only those with a status (pending, in_progress, completed, failed, skipped, or executable) or assignee.",
            schema::<ListArgs>(),
            true,
        ),
        def(
            "getExecutableTaskList",
            "List the tasks that can start now (pending, every dependency done), in plan order, optionally for one assignee.",
            schema::<StartNextArgs>(),
            true,
        ),
        def(
            "getPlanStatus",
            "Get the plan's status (idle, running, paused, completed, failed), progress from 0 to 1, the current task and counts per status; `reason` explains a failed, paused or blocked plan.",
            schema::<NoArgs>(),
            true,
        ),
    ]
}

/// The tools that pause, resume, restart or replace the plan.
fn course_tools() -> Vec<ToolDef> {
    vec![
        def("pausePlan", "Pause the plan: every change is refused until resumePlan.", schema::<NoArgs>(), false),
        def("resumePlan", "Resume a paused plan where it stopped.", schema::<NoArgs>(), false),
        def(
            "resetPlan",
            "Start the plan over: every task back to pending, results and retry counts cleared. Destroys progress; use only when asked.",
            schema::<NoArgs>(),
            false,
        ),
        def(
            "replan",
            "Replace the rest of the plan: completed, skipped and in-progress tasks are kept; pending and failed tasks are replaced by `steps`, in order (each step after the one before unless it lists dependencies). Use when the plan no longer fits what you found.",
            schema::<ReplanArgs>(),
            false,
        ),
    ]
}

/// The tools for an agent's own upkeep: retrying, holding its tasks, logging.
fn agent_tools() -> Vec<ToolDef> {
    vec![
        def(
            "retryTask",
            "Put a failed task back to pending, to be tried again (when its error is fixed). Tasks blocked by it may run once it is done.",
            schema::<TaskIdArgs>(),
            false,
        ),
        def(
            "heartbeat",
            "Renew the leases of the tasks you hold (started with a `lease`), so they are not handed to another agent while you work. Any change you make renews them too.",
            schema::<NoArgs>(),
            false,
        ),
        def(
            "logEvent",
            "Record what you did or said, for whoever follows the plan's event log: kind `tool` (a tool call: data such as {\"name\", \"args\", \"result\"}), `message` (what you told the user) or `error` (what went wrong). It goes with the task you name, else your current task. Changes no task; allowed while the plan is paused. data is at most 64 KiB as JSON.",
            schema::<LogArgs>(),
            false,
        ),
    ]
}

/// Adds the caller's arguments every tool takes: `agent`, `lease` on the
/// tools that start or renew a task, and `takeover` on the tools that change
/// a task another agent may hold ([`TAKES_OVER`]).
pub fn with_caller(mut tool: ToolDef) -> ToolDef {
    let Some(Value::Object(properties)) = tool.input_schema.get_mut("properties") else {
        return tool;
    };
    properties.insert(
        "agent".to_owned(),
        json!({
            "type": ["string", "null"],
            "description": "Who you are, when several agents share the plan: each agent has its own current task, and a task you start is held by you. Leave out when you work alone.",
        }),
    );
    if matches!(
        tool.name,
        "startNextTask" | "startTask" | "heartbeat" | "observe"
    ) {
        properties.insert(
            "lease".to_owned(),
            json!({
                "type": ["integer", "string", "null"],
                "description": "How long you hold the task without a sign of life: seconds, or a duration such as \"30s\", \"5m\", \"1h\". When it runs out, the task goes back to pending for another agent. Each of your changes, and heartbeat, renews it.",
            }),
        );
    }
    if TAKES_OVER.contains(&tool.name) {
        properties.insert(
            "takeover".to_owned(),
            json!({
                "type": ["boolean", "null"],
                "description": "Take over a task another agent holds: the change goes ahead and is logged as a task_taken_over event naming both agents. Left out, another agent's task is refused (TASK_HELD, naming its holder and lease).",
            }),
        );
    }
    tool
}

/// The tools that change a task another agent may hold, and so take `takeover`.
pub const TAKES_OVER: [&str; 8] = [
    "startTask",
    "completeTask",
    "failTask",
    "skipTask",
    "updateTask",
    "removeTask",
    "retryTask",
    "resetPlan",
];

/// The description with the note on ids, for tools that take one.
fn full_description(tool: &ToolDef) -> String {
    let text = serde_json::to_string(&tool.input_schema).unwrap_or_default();
    if text.contains("task_id") || text.contains("dependencies") {
        format!("{} {ID_NOTE}", tool.description)
    } else {
        tool.description.clone()
    }
}

/// The output schema of planc's tools: the envelope, whose `data` is the
/// operation's result type (`runner::results`) and whose `error` is the
/// error body.
pub fn envelope_schema(op: &str) -> Map<String, Value> {
    let mut data = result_schema(op).map_or(json!({}), |s| s.to_value());
    drop_integer_formats(&mut data);
    let mut error = Value::Object(written_schema::<ErrorBody>());
    drop_integer_formats(&mut error);
    let object = json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean", "description": "true with `data`, false with `error`"},
            "data": data,
            "error": error,
        },
        "required": ["success"],
    });
    match object {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A result schema (`T`'s) as a tool's output schema: an object schema.
pub fn output_schema<T: JsonSchema>() -> Map<String, Value> {
    let mut object = written_schema::<T>();
    object.insert("type".to_owned(), json!("object"));
    object
}

/// The output formats of `planc tools`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// MCP's `tools/list` result: `{"tools": [{name, description, inputSchema, annotations}]}`.
    Mcp,
    /// OpenAI Chat Completions function calling, strict:
    /// `[{"type": "function", "function": {name, description, parameters, strict}}]`.
    OpenAi,
    /// OpenAI Responses API function tools, strict:
    /// `[{"type": "function", name, description, parameters, strict}]`.
    OpenAiResponses,
    /// Anthropic tool use: `[{name, description, input_schema}]`.
    Anthropic,
}

/// planc's tools in `format`.
pub fn render(format: ToolFormat) -> Value {
    render_tools(format, &tools())
}

/// `tools` in `format`.
pub fn render_tools(format: ToolFormat, tools: &[ToolDef]) -> Value {
    match format {
        ToolFormat::Mcp => json!({"tools": tools.iter().map(|t| json!({
            "name": t.name,
            "description": t.description,
            "inputSchema": t.input_schema,
            "outputSchema": t.output_schema,
            "annotations": {"readOnlyHint": t.read_only, "destructiveHint": t.destructive},
        })).collect::<Vec<_>>()}),
        ToolFormat::OpenAi => export_each(tools, export::openai_chat),
        ToolFormat::OpenAiResponses => export_each(tools, export::openai_responses),
        ToolFormat::Anthropic => export_each(tools, export::anthropic),
    }
}

/// Every tool through one of [`export`]'s shapes.
fn export_each(tools: &[ToolDef], shape: fn(ToolSpec<'_>) -> Value) -> Value {
    tools
        .iter()
        .map(|t| {
            shape(ToolSpec {
                name: t.name,
                description: &t.description,
                input_schema: &t.input_schema,
            })
        })
        .collect()
}
