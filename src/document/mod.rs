//! The plan document (`planc/1`): the JSON that `planc build` writes and the
//! runner keeps its state in. A superset of the PlanManager API's shape; its task objects
//! are planManager task objects with extra fields.

pub mod agent_tag;
mod extra;
mod json_text;
pub mod statuses;
mod validate;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::ir::Priority;

pub use extra::Extra;
pub use json_text::to_text as json_text;
pub use validate::{load_json, load_json_with, validate_json, LoadOptions};

/// The JSON Schema of the plan document as shipped in
/// `schema/planc-1.schema.json`; a test holds it equal to [`schema`].
pub const SCHEMA: &str = include_str!("../../schema/planc-1.schema.json");

/// The JSON Schema of the plan document, generated from [`PlanDocument`]
/// (`planc schema` prints it): pretty JSON with a final newline.
///
/// It describes the document as planc writes it (schemars' serialize
/// contract), so every field planc always writes is required.
pub fn schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<PlanDocument>().to_value();
    if let Some(object) = schema.as_object_mut() {
        // `$schema` first, then the document's own id.
        let mut ordered = serde_json::Map::new();
        ordered.extend(object.remove("$schema").map(|v| ("$schema".to_owned(), v)));
        ordered.insert("$id".to_owned(), serde_json::json!(FORMAT));
        ordered.append(object);
        *object = ordered;
    }
    tidy(&mut schema, false);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Tidies a generated schema for every validator: schemars' integer
/// formats (`"format": "uint32"`, not JSON Schema formats; strict
/// validators refuse them) become the `maximum` they stand for, the
/// `default`s of the input side go (the schema describes what planc
/// writes), and doc comments' line breaks within a paragraph become spaces.
/// `keyed`: `value` maps names to schemas (`properties`, `$defs`).
fn tidy(value: &mut serde_json::Value, keyed: bool) {
    match value {
        serde_json::Value::Object(map) if keyed => {
            map.values_mut().for_each(|v| tidy(v, false));
        }
        serde_json::Value::Object(map) => {
            match map.get("format").and_then(serde_json::Value::as_str) {
                Some("uint32") => {
                    map.insert("maximum".to_owned(), u32::MAX.into());
                    map.remove("format");
                }
                Some("uint64") => {
                    map.insert("maximum".to_owned(), u64::MAX.into());
                    map.remove("format");
                }
                _ => {}
            }
            map.remove("default");
            if let Some(serde_json::Value::String(text)) = map.get_mut("description") {
                *text = text
                    .split("\n\n")
                    .map(|paragraph| paragraph.replace('\n', " "))
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            for (key, value) in map.iter_mut() {
                tidy(value, matches!(key.as_str(), "properties" | "$defs"));
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| tidy(v, false)),
        _ => {}
    }
}

/// The value of `format` in every document planc writes.
pub const FORMAT: &str = "planc/1";

/// The step id that groups the tasks standing directly in the plan (seed
/// 002 puts every task in a step). No identifier can be spelt like it.
pub const PLAN_STEP_ID: &str = "(plan)";

/// A compiled plan (`planc build`) or a runner state (`planc run`). Task
/// objects are the planManager's and the PlanManager API's task objects plus planc's fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "planc plan document", deny_unknown_fields)]
pub struct PlanDocument {
    /// The format and its version: `planc/1`.
    #[schemars(extend("const" = "planc/1"))]
    pub format: String,
    pub meta: Meta,
    #[serde(default)]
    pub roles: Vec<RoleDoc>,
    #[serde(default)]
    pub steps: Vec<StepDoc>,
    pub state: State,
    pub tasks: Vec<TaskDoc>,
}

/// What the plan is: its identity, goal and parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Meta {
    /// The plan's name in the `.plan` file.
    #[schemars(length(min = 1))]
    pub id: String,
    /// `title`, interpolated.
    pub title: Option<String>,
    /// `goal`, interpolated.
    pub goal: String,
    /// `language`, default `en`.
    pub language: String,
    /// The runner's iteration budget (`max_iterations N`).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_iterations: Option<u64>,
    /// How many rounds an agent spends on a step before a transition word
    /// ("next", "接下来") advances it (`transition_rounds N`); left out,
    /// [`DEFAULT_TRANSITION_ROUNDS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 1000))]
    pub transition_rounds: Option<u64>,
    /// After how many rounds on a step without a marker it advances anyway
    /// (`fallback_rounds N`); left out, [`DEFAULT_FALLBACK_ROUNDS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub fallback_rounds: Option<u64>,
    /// Every parameter with its value in this build, in declaration order.
    #[serde(default)]
    #[schemars(
        with = "serde_json::Map<String, serde_json::Value>",
        extend("additionalProperties" = {"type": ["string", "number", "boolean", "null"]})
    )]
    pub params: IndexMap<String, serde_json::Value>,
    /// The path given to `planc build`; null for standard input.
    #[serde(default)]
    pub source: Option<String>,
    /// Set by the runner (RFC 3339); null at build time.
    #[serde(default)]
    pub created_at: Option<String>,
    /// Set by the runner (RFC 3339); null at build time.
    #[serde(default)]
    pub updated_at: Option<String>,
    /// The plan's retry budget for tasks without their own `retry N`
    /// (`retry N` at plan level); left out, the runner's default (2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
}

/// Rounds on a step before a transition word advances it, when the plan
/// does not say.
pub const DEFAULT_TRANSITION_ROUNDS: u64 = 1;

/// Rounds on a step after which it advances without a marker, when the plan
/// does not say.
pub const DEFAULT_FALLBACK_ROUNDS: u64 = 5;

/// How often a task may be retried after failing when neither it nor its
/// plan says (`retry N`): three attempts in all.
pub const DEFAULT_RETRY: u32 = 2;

/// A role tasks can be assigned to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RoleDoc {
    #[schemars(length(min = 1))]
    pub id: String,
    pub description: Option<String>,
}

/// A step: a named group of tasks (the Plan Tool).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StepDoc {
    #[schemars(length(min = 1))]
    pub id: String,
    /// The step's title, or its id.
    pub name: String,
    /// The ids of its tasks.
    #[schemars(inner(range(min = 1)))]
    pub tasks: Vec<u32>,
}

/// The live part of the plan, changed by the runner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct State {
    pub status: PlanStatus,
    /// The last task started that is still in progress.
    #[schemars(range(min = 1))]
    pub current_task_id: Option<u32>,
    /// Increases with every change the runner makes.
    pub revision: u64,
    /// The largest task id the plan has had, kept while a removed task
    /// had it (so its id is never handed out again); absent when it is the
    /// largest id in `tasks`, as in a document written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_task_id: Option<u32>,
    /// Agent iterations counted by `planc run observe`.
    #[serde(default)]
    pub iteration_count: u64,
    /// The rounds (observed messages) an agent has spent on each task in
    /// progress: what transition words and the fallback count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_rounds: Vec<StepRounds>,
}

/// The rounds spent on one task in progress (`state.step_rounds`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StepRounds {
    /// The task.
    #[schemars(range(min = 1))]
    pub task_id: u32,
    /// Messages observed while it was the agent's current task.
    pub rounds: u64,
}

impl Default for State {
    fn default() -> State {
        State {
            status: PlanStatus::Idle,
            current_task_id: None,
            revision: 0,
            max_task_id: None,
            iteration_count: 0,
            step_rounds: Vec::new(),
        }
    }
}

/// The status of a whole plan (the PlanManager API).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Idle,
    Running,
    Paused,
    Completed,
    Failed,
}

impl PlanStatus {
    /// All statuses, as spelt in JSON.
    pub const NAMES: [&'static str; 5] = ["idle", "running", "paused", "completed", "failed"];

    /// The status as spelt in JSON.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The status spelt `name`.
    pub fn from_name(name: &str) -> Option<PlanStatus> {
        Some(match name {
            "idle" => PlanStatus::Idle,
            "running" => PlanStatus::Running,
            "paused" => PlanStatus::Paused,
            "completed" => PlanStatus::Completed,
            "failed" => PlanStatus::Failed,
            _ => return None,
        })
    }
}

/// The status of a task (the planManager and the PlanManager API).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Skipped,
}

impl TaskStatus {
    /// All statuses, as spelt in JSON.
    pub const NAMES: [&'static str; 5] =
        ["pending", "in_progress", "completed", "failed", "skipped"];

    /// The status as spelt in JSON.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The status spelt `name`.
    pub fn from_name(name: &str) -> Option<TaskStatus> {
        Some(match name {
            "pending" => TaskStatus::Pending,
            "in_progress" => TaskStatus::InProgress,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "skipped" => TaskStatus::Skipped,
            _ => return None,
        })
    }

    /// Completed or skipped: dependents may run.
    pub fn is_done(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Skipped)
    }
}

/// A task: the planManager's six fields, then planc's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskDoc {
    /// 1…n in source order.
    #[schemars(range(min = 1))]
    pub id: u32,
    /// The task's title, interpolated.
    pub name: String,
    pub status: TaskStatus,
    /// The ids of the tasks it waits for.
    #[serde(default)]
    #[schemars(inner(range(min = 1)), extend("uniqueItems" = true))]
    pub dependencies: Vec<u32>,
    /// Why the task exists.
    #[serde(default)]
    pub reasoning: Option<String>,
    /// What the task produced (the runner fills it).
    #[serde(default)]
    pub result: Option<String>,
    /// The task's name in the `.plan` file; the CLI and MCP accept it wherever an id goes.
    #[serde(default)]
    pub key: Option<String>,
    /// The id of the step it stands in.
    #[serde(default)]
    pub step: Option<String>,
    /// A role id.
    #[serde(default)]
    pub assignee: Option<String>,
    /// Longer instructions.
    #[serde(default)]
    pub description: Option<String>,
    /// Its failure does not fail the plan.
    #[serde(default)]
    pub optional: bool,
    /// Its retry budget and how often it was retried.
    #[serde(default)]
    pub retry: Retry,
    /// `critical`, `high`, `medium` or `low`; absent means medium. Ready work is taken
    /// by priority, then in plan order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    /// Fields of another format that planc has no place for (task-master's
    /// `details` and `testStrategy`, say), kept so an export writes them back.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub extra: Extra,
    /// Who holds the task while it is in progress, since when, and their
    /// lease; absent otherwise.
    // Boxed: most tasks have none, and a task in memory is 80 bytes smaller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<Box<Holder>>,
}

/// Who holds an in-progress task, since when, and their lease.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Holder {
    /// The agent (`--agent`, `PLANC_AGENT`, an MCP `agent` argument); none
    /// for a caller without an identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub agent: Option<String>,
    /// When the task was started, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The lease, in seconds: each change by the holder (and `heartbeat`)
    /// renews it for as long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub lease_seconds: Option<u64>,
    /// When the lease runs out, RFC 3339 UTC; from then on the task goes
    /// back to `pending` at the next operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_expires_at: Option<String>,
}

/// How often a task may be retried after failing, and how often it was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Retry {
    /// The task's own retry budget (`retry N`); null when it has none: the
    /// plan's `meta.retry` applies, else 2.
    pub max: Option<u32>,
    /// How often it was retried.
    pub count: u32,
}

impl Meta {
    /// The meta of a plan made at run time rather than built from a `.plan`
    /// file: `id` and `goal`, in English, every other field left out.
    pub fn new(id: impl Into<String>, goal: impl Into<String>) -> Meta {
        Meta {
            id: id.into(),
            title: None,
            goal: goal.into(),
            language: "en".to_owned(),
            max_iterations: None,
            transition_rounds: None,
            fallback_rounds: None,
            params: IndexMap::new(),
            source: None,
            created_at: None,
            updated_at: None,
            retry: None,
        }
    }
}

impl TaskDoc {
    /// A pending task `id` waiting for `dependencies`, every other field
    /// left out.
    pub fn pending(id: u32, name: impl Into<String>, dependencies: Vec<u32>) -> TaskDoc {
        TaskDoc {
            id,
            name: name.into(),
            status: TaskStatus::Pending,
            dependencies,
            reasoning: None,
            result: None,
            key: None,
            step: None,
            assignee: None,
            description: None,
            optional: false,
            retry: Retry::default(),
            priority: None,
            extra: Extra::default(),
            holder: None,
        }
    }
}

impl PlanDocument {
    /// A plan that has not started: `meta`, its `tasks`, no roles or steps.
    pub fn new(meta: Meta, tasks: Vec<TaskDoc>) -> PlanDocument {
        PlanDocument {
            format: FORMAT.to_owned(),
            meta,
            roles: Vec::new(),
            steps: Vec::new(),
            state: State::default(),
            tasks,
        }
    }

    /// The document as pretty JSON with a final newline: the bytes planc writes.
    pub fn to_json(&self) -> String {
        // About 400 bytes a task (the generated plans of the benchmarks
        // take 390); room the text does not use is never touched.
        json_text::to_text_sized(self, 4096 + 512 * self.tasks.len())
    }
}
