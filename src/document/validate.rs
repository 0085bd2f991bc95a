//! Checks a JSON plan document (hand-written, or written by an LLM planner)
//! with the same checks as a `.plan` file, pointing into the JSON.
//!
//! Accepted shapes: `planc/1`, the PlanManager API (`meta.goal`, `state`, `tasks`) and
//! the planManager (`overallGoal`, `currentTaskID`, `tasks`). Each is normalised to
//! a `planc/1` [`PlanDocument`].

use std::collections::{HashMap, HashSet};

use jsonc_parser::ast::{Object, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};
use serde_json::{json, Map};

use super::{Holder, PlanDocument, PlanStatus, Priority, Retry, TaskDoc, TaskStatus, FORMAT};

use crate::check::graph;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};
use crate::suggest;

mod shapes;
mod strict;

/// How to read a JSON plan document.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions<'a> {
    /// The plan's id when the document names none (the file's stem).
    pub fallback_id: &'a str,
    /// The task-master tag to read from a tagged `tasks.json` (default `master`).
    pub tag: Option<&'a str>,
}

/// Checks a JSON plan document; returns every problem found.
pub fn validate_json(text: &str, file: FileId) -> Vec<Diagnostic> {
    load_json(text, file, "plan").1
}

/// Checks a JSON plan document and, when it has no errors, returns it as a
/// `planc/1` document. `fallback_id` names a plan whose document has no id.
pub fn load_json(
    text: &str,
    file: FileId,
    fallback_id: &str,
) -> (Option<PlanDocument>, Vec<Diagnostic>) {
    load_json_with(
        text,
        file,
        &LoadOptions {
            fallback_id,
            tag: None,
        },
    )
}

/// [`load_json`] with options: any shape planc reads (docs/interop.md).
pub fn load_json_with(
    text: &str,
    file: FileId,
    options: &LoadOptions,
) -> (Option<PlanDocument>, Vec<Diagnostic>) {
    let fallback_id = options.fallback_id;
    if let Some(diagnostic) = crate::syntax::check_json_limits(text, file) {
        return (None, vec![diagnostic]);
    }
    let parsed = jsonc_parser::parse_to_ast(
        text,
        &CollectOptions {
            comments: CommentCollectionStrategy::Off,
            tokens: false,
        },
        &ParseOptions {
            allow_comments: false,
            allow_loose_object_property_names: false,
            allow_trailing_commas: false,
        },
    );
    let root = match parsed {
        Ok(result) => result.value,
        Err(error) => {
            let range = error.range();
            let diagnostic =
                Diagnostic::new(Code::Syntax, format!("invalid JSON: {}", error.kind())).label(
                    file,
                    Span::new(range.start, range.end.max(range.start)),
                    "here",
                );
            return (None, vec![diagnostic]);
        }
    };
    let mut v = Validator {
        file,
        diagnostics: Vec::new(),
        role_names: HashSet::new(),
        suggestions: suggest::Budget::default(),
        strict: false,
    };
    let Some(root) = root else {
        v.error(
            Code::InvalidDocument,
            Span::at(0),
            "the file holds no JSON value",
            "expected a plan object",
        );
        return (None, v.diagnostics);
    };
    let Value::Object(object) = &root else {
        v.type_error(&root, "the plan", "an object");
        return (None, v.diagnostics);
    };
    let document = match shapes::detect(object) {
        shapes::Shape::Planc => v.document(object, fallback_id),
        shape => v
            .shaped(object, shape, fallback_id, options.tag)
            .and_then(|full| v.split_tasks(full, object)),
    };
    let has_errors = v.diagnostics.iter().any(Diagnostic::is_error);
    crate::diagnostic::sort(&mut v.diagnostics);
    crate::diagnostic::cap_per_code(&mut v.diagnostics);
    crate::diagnostic::sort(&mut v.diagnostics);
    let document = if has_errors {
        None
    } else {
        // The tasks are typed already (a `serde_json::Value` per task was
        // most of the memory and time of a large document); the rest of the
        // document goes through serde.
        let typed = document.map(|(rest, tasks)| {
            serde_json::from_value::<PlanDocument>(rest).map(|doc| PlanDocument { tasks, ..doc })
        });
        match typed {
            Some(Ok(doc)) => Some(doc),
            Some(Err(error)) => {
                v.error(
                    Code::InvalidDocument,
                    span(object),
                    &format!("the document does not fit `planc/1`: {error}"),
                    "in this document",
                );
                None
            }
            None => None,
        }
    };
    (document, v.diagnostics)
}

fn span(node: &impl Ranged) -> Span {
    let range = node.range();
    Span::new(range.start, range.end)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::StringLit(_) => "a string",
        Value::NumberLit(_) => "a number",
        Value::BooleanLit(_) => "a boolean",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::NullKeyword(_) => "null",
    }
}

fn get<'v, 'a>(object: &'v Object<'a>, name: &str) -> Option<&'v Value<'a>> {
    object
        .properties
        .iter()
        .find(|p| p.name.as_str() == name)
        .map(|p| &p.value)
}

struct Validator {
    file: FileId,
    diagnostics: Vec<Diagnostic>,
    /// The ids of `roles`, to look an assignee up without a scan.
    role_names: HashSet<String>,
    /// What is left for "did you mean" searches.
    suggestions: suggest::Budget,
    /// The document says `"format": "planc/1"`: it is held to the schema
    /// (`strict.rs`), not read leniently.
    strict: bool,
}

/// A task as read, for the cross-task checks.
struct TaskInfo {
    id: u32,
    id_span: Span,
    name: String,
    /// Each dependency, where it is written, and whether the document
    /// names it (`false`: implied by the shape, never called redundant).
    deps: Vec<(u32, Span, bool)>,
}

impl Validator {
    fn error(&mut self, code: Code, at: Span, message: &str, label: &str) {
        self.diagnostics
            .push(Diagnostic::new(code, message).label(self.file, at, label));
    }

    /// A normalised document as (everything but the tasks, the tasks typed).
    fn split_tasks(
        &mut self,
        mut full: serde_json::Value,
        at: &Object,
    ) -> Option<(serde_json::Value, Vec<TaskDoc>)> {
        let tasks = std::mem::replace(&mut full["tasks"], json!([]));
        match serde_json::from_value::<Vec<TaskDoc>>(tasks) {
            Ok(tasks) => Some((full, tasks)),
            Err(error) => {
                self.error(
                    Code::InvalidDocument,
                    span(at),
                    &format!("the document does not fit `planc/1`: {error}"),
                    "in this document",
                );
                None
            }
        }
    }

    /// A field planc does not read: reported (it is kept in the task's `extra`).
    fn unknown_field(&mut self, property: &jsonc_parser::ast::ObjectProp, known: &[&str]) {
        let name = property.name.as_str();
        let suggestion = suggest::closest(name, known.iter().copied());
        let label = match suggestion {
            Some(best) => format!("did you mean `{best}`?"),
            None => "unknown field".to_owned(),
        };
        self.diagnostics.push(
            Diagnostic::new(
                Code::UnknownField,
                format!("planc does not know the field `{name}`"),
            )
            .label(self.file, span(&property.name), label)
            .help(format!(
                "the known fields here are {}; an unknown one is kept in `extra`",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
    }

    fn type_error(&mut self, value: &Value, what: &str, expected: &str) {
        self.error(
            Code::InvalidDocument,
            span(value),
            &format!("{what} must be {expected}, not {}", kind(value)),
            &format!("expected {expected}"),
        );
    }

    fn missing(&mut self, object: &Object, what: &str, field: &str) {
        let at = span(object);
        self.error(
            Code::InvalidDocument,
            Span::new(at.start(), at.start() + 1),
            &format!("{what} has no `{field}`"),
            &format!("`{field}` is required here"),
        );
    }

    fn string(
        &mut self,
        object: &Object,
        field: &str,
        what: &str,
        required: bool,
    ) -> Option<String> {
        match get(object, field) {
            Some(Value::StringLit(s)) => Some(s.value.to_string()),
            Some(Value::NullKeyword(_)) if !required => None,
            Some(other) => {
                let expected = if required {
                    "a string"
                } else {
                    "a string or null"
                };
                self.type_error(other, &format!("`{field}` of {what}"), expected);
                None
            }
            None => {
                if required {
                    self.missing(object, what, field);
                }
                None
            }
        }
    }

    fn integer(&mut self, value: &Value, what: &str) -> Option<u64> {
        match value {
            Value::NumberLit(n) => match n.value.parse::<u64>() {
                Ok(i) => Some(i),
                Err(_) => {
                    self.type_error(value, what, "a whole number of 0 or more");
                    None
                }
            },
            other => {
                self.type_error(other, what, "a whole number");
                None
            }
        }
    }

    /// The document normalised: everything but the tasks as a JSON value,
    /// and the tasks.
    fn document(
        &mut self,
        root: &Object,
        fallback_id: &str,
    ) -> Option<(serde_json::Value, Vec<TaskDoc>)> {
        if let Some(format) = get(root, "format") {
            match format {
                Value::StringLit(s) if s.value == FORMAT => {}
                other => self.error(
                    Code::InvalidDocument,
                    span(other),
                    &format!("unknown format; planc reads `{FORMAT}`"),
                    "unknown format",
                ),
            }
        }
        let meta = match get(root, "meta") {
            Some(Value::Object(meta)) => Some(meta),
            Some(other) => {
                self.type_error(other, "`meta`", "an object");
                None
            }
            None => None,
        };
        self.strict = get(root, "format").is_some();
        if self.strict {
            // A missing `tasks` is reported below.
            self.fields(root, "the plan", &strict::rules().root, &["tasks"]);
            if let Some(meta) = meta {
                self.strict_meta(meta);
            }
        }

        let goal = self.goal(root, meta);

        let roles = self.roles(root);
        let Some(tasks_value) = get(root, "tasks") else {
            self.missing(root, "the plan", "tasks");
            return None;
        };
        let Value::Array(tasks) = tasks_value else {
            self.type_error(tasks_value, "`tasks`", "an array");
            return None;
        };

        let mut infos = Vec::new();
        let mut normalised = Vec::new();
        let mut keys: HashMap<String, Span> = HashMap::new();
        for task in &tasks.elements {
            let Value::Object(task) = task else {
                self.type_error(task, "a task", "an object");
                continue;
            };
            if let Some((info, value)) = self.task(task, roles.as_ref(), &mut keys) {
                infos.push(info);
                normalised.extend(value);
            }
        }
        self.cross_task_with(&infos);
        let ids: HashSet<u32> = infos.iter().map(|t| t.id).collect();

        let steps = self.steps(root, &ids);
        let state = self.state(root, &ids, &normalised);

        Some((
            json!({
                "format": FORMAT,
                "meta": self.meta(meta, fallback_id, goal),
                "roles": roles.map(|r| r.1).unwrap_or_default(),
                "steps": steps,
                "state": state,
                "tasks": [],
            }),
            normalised,
        ))
    }

    /// `meta` normalised: every field planc/1 has, defaults filled in.
    fn meta(
        &mut self,
        meta: Option<&Object>,
        fallback_id: &str,
        goal: Option<String>,
    ) -> serde_json::Value {
        let meta_string = |field: &str| {
            meta.and_then(|m| get(m, field)).and_then(|v| match v {
                Value::StringLit(s) => Some(s.value.to_string()),
                _ => None,
            })
        };
        let id = meta_string("id").unwrap_or_else(|| fallback_id.to_owned());
        let params = meta
            .and_then(|m| get(m, "params"))
            .map(|p| self.plain(p))
            .unwrap_or_else(|| json!({}));
        let max_iterations = meta
            .and_then(|m| get(m, "max_iterations"))
            .and_then(|v| match v {
                Value::NullKeyword(_) => None,
                other => self.integer(other, "`max_iterations`"),
            });
        let mut rounds = |field: &str, least: u64| {
            meta.and_then(|m| get(m, field)).and_then(|v| match v {
                Value::NullKeyword(_) => None,
                other => {
                    let value = self.integer(other, &format!("`meta.{field}`"))?;
                    if (least..=1000).contains(&value) {
                        Some(value)
                    } else {
                        self.error(
                            Code::InvalidValue,
                            span(other),
                            &format!(
                                "`meta.{field}` takes a number from {least} to 1000, not {value}"
                            ),
                            "out of range",
                        );
                        None
                    }
                }
            })
        };
        let transition_rounds = rounds("transition_rounds", 0);
        let fallback_rounds = rounds("fallback_rounds", 1);
        let retry = meta.and_then(|m| get(m, "retry")).and_then(|v| match v {
            Value::NullKeyword(_) => None,
            other => self.integer(other, "`meta.retry`"),
        });
        json!({
            "id": id,
            "title": meta_string("title"),
            "goal": goal.unwrap_or_default(),
            "language": meta_string("language").unwrap_or_else(|| "en".to_owned()),
            "max_iterations": max_iterations,
            "transition_rounds": transition_rounds,
            "fallback_rounds": fallback_rounds,
            "params": params,
            "source": meta_string("source"),
            "created_at": meta_string("created_at"),
            "updated_at": meta_string("updated_at"),
            "retry": retry,
        })
    }

    /// The goal: planc/1 and the PlanManager API keep it in `meta`, the
    /// planManager at the top; a missing goal is reported.
    fn goal(&mut self, root: &Object, meta: Option<&Object>) -> Option<String> {
        match (meta, get(root, "overallGoal")) {
            (Some(meta), _) if get(meta, "goal").is_some() => {
                self.string(meta, "goal", "`meta`", true)
            }
            (_, Some(_)) => self.string(root, "overallGoal", "the plan", true),
            (Some(meta), None) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::MissingGoal, "the plan has no goal")
                        .label(
                            self.file,
                            Span::new(span(meta).start(), span(meta).start() + 1),
                            "`meta` has no `goal`",
                        )
                        .help("add `\"goal\": \"…\"` to `meta`: agents read it to stay on course"),
                );
                None
            }
            (None, None) => {
                self.diagnostics.push(
                    Diagnostic::new(Code::MissingGoal, "the plan has no goal")
                        .label(
                            self.file,
                            Span::new(span(root).start(), span(root).start() + 1),
                            "no `meta.goal` or `overallGoal`",
                        )
                        .help(
                            "add `\"meta\": {\"goal\": \"…\"}`: agents read it to stay on course",
                        ),
                );
                None
            }
        }
    }

    /// A JSON value as serde_json sees it (params are free-form).
    fn plain(&mut self, value: &Value) -> serde_json::Value {
        match value {
            Value::StringLit(s) => json!(s.value),
            Value::NumberLit(n) => serde_json::from_str(n.value).unwrap_or(serde_json::Value::Null),
            Value::BooleanLit(b) => json!(b.value),
            Value::NullKeyword(_) => serde_json::Value::Null,
            Value::Array(a) => a.elements.iter().map(|e| self.plain(e)).collect(),
            Value::Object(o) => {
                let mut map = Map::new();
                for prop in &o.properties {
                    map.insert(prop.name.as_str().to_owned(), self.plain(&prop.value));
                }
                serde_json::Value::Object(map)
            }
        }
    }

    /// The declared roles: their ids (for `assignee` checks) and normalised form.
    fn roles(&mut self, root: &Object) -> Option<(Vec<String>, Vec<serde_json::Value>)> {
        let value = get(root, "roles")?;
        let Value::Array(array) = value else {
            self.type_error(value, "`roles`", "an array");
            return None;
        };
        let mut ids = Vec::new();
        let mut out = Vec::new();
        for role in &array.elements {
            let Value::Object(role) = role else {
                self.type_error(role, "a role", "an object");
                continue;
            };
            if self.strict {
                self.fields(role, "a role", &strict::rules().role, &["id"]);
                self.not_empty(role, "id", "a role");
            }
            let id = self.string(role, "id", "a role", true);
            let description = self.string(role, "description", "a role", false);
            if let Some(id) = id {
                self.role_names.insert(id.clone());
                ids.push(id.clone());
                out.push(json!({"id": id, "description": description}));
            }
        }
        Some((ids, out))
    }

    fn task(
        &mut self,
        task: &Object,
        roles: Option<&(Vec<String>, Vec<serde_json::Value>)>,
        keys: &mut HashMap<String, Span>,
    ) -> Option<(TaskInfo, Option<TaskDoc>)> {
        let before = self.diagnostics.len();
        if self.strict {
            self.strict_task(task);
        }
        let id_value = get(task, "id");
        let id = self.task_id(task, id_value);
        let name = self.string(task, "name", "a task", true);
        let status = self.task_status(get(task, "status"));
        let deps = self.task_dependencies(get(task, "dependencies"));
        let reasoning = self.string(task, "reasoning", "a task", false);
        let result = self.string(task, "result", "a task", false);
        let key = self.string(task, "key", "a task", false);
        let step = self.string(task, "step", "a task", false);
        let assignee = self.string(task, "assignee", "a task", false);
        let description = self.string(task, "description", "a task", false);
        let holder = self.task_holder(get(task, "holder"));
        let optional = match get(task, "optional") {
            None | Some(Value::NullKeyword(_)) => false,
            Some(Value::BooleanLit(b)) => b.value,
            Some(other) => {
                self.type_error(other, "`optional`", "true or false");
                false
            }
        };
        let retry = self.task_retry(get(task, "retry"));
        let priority = self.task_priority(get(task, "priority"));
        let extra = self.task_extra(task);
        if let (Some(assignee), Some((role_ids, _))) = (&assignee, roles) {
            self.check_assignee(task, assignee, role_ids);
        }
        if let Some(key) = &key {
            self.check_key(task, key, keys);
        }

        // A task with a valid id takes part in the cross-task checks even when
        // another of its fields is wrong, so one mistake is reported once.
        let id = id?;
        let info = TaskInfo {
            id,
            id_span: id_value.map(span).unwrap_or_default(),
            name: key.clone().unwrap_or_else(|| id.to_string()),
            deps: deps.iter().map(|&(d, at)| (d, at, true)).collect(),
        };
        let valid = !self.diagnostics[before..].iter().any(Diagnostic::is_error);
        let (Some(name), Some(status), true) = (name, status, valid) else {
            return Some((info, None));
        };
        let value = TaskDoc {
            id,
            name,
            status,
            dependencies: deps.iter().map(|d| d.0).collect(),
            reasoning,
            result,
            key,
            step,
            assignee,
            description,
            optional,
            retry,
            priority: priority.and_then(Priority::from_name),
            extra,
            holder,
        };
        Some((info, Some(value)))
    }

    /// A task's `id`: a whole number from 1.
    fn task_id(&mut self, task: &Object, value: Option<&Value>) -> Option<u32> {
        let Some(value) = value else {
            self.missing(task, "a task", "id");
            return None;
        };
        self.integer(value, "a task's `id`").and_then(|id| {
            if (1..=u32::MAX as u64).contains(&id) {
                Some(id as u32)
            } else {
                self.type_error(value, "a task's `id`", "a whole number from 1");
                None
            }
        })
    }

    /// A task's `status` (`pending` when it has none).
    fn task_status(&mut self, value: Option<&Value>) -> Option<TaskStatus> {
        let s = match value {
            None => return Some(TaskStatus::Pending),
            Some(Value::StringLit(s)) => s,
            Some(other) => {
                self.type_error(other, "a task's `status`", "a string");
                return None;
            }
        };
        // The PlanManager API's `blocked` (waiting on a dependency) is worked
        // out from the dependencies, so it is kept as `pending`.
        if s.value == "blocked" {
            return Some(TaskStatus::Pending);
        }
        if let Some(status) = TaskStatus::from_name(&s.value) {
            return Some(status);
        }
        let suggestion = suggest::closest(&s.value, TaskStatus::NAMES);
        let help = format!(
            "a task's status is one of {} (or `blocked`, read as `pending`)",
            TaskStatus::NAMES.map(|n| format!("`{n}`")).join(", ")
        );
        let label = match suggestion {
            Some(best) => format!("did you mean `{best}`?"),
            None => "unknown status".to_owned(),
        };
        let mut diagnostic = Diagnostic::new(
            Code::InvalidStatus,
            format!("unknown task status `{}`", s.value),
        )
        .label(self.file, span(&s.range), label)
        .help(help);
        if let Some(best) = suggestion {
            diagnostic = diagnostic.fix(self.file, span(&s.range), format!("\"{best}\""));
        }
        self.diagnostics.push(diagnostic);
        None
    }

    /// A task's `dependencies`: the ids, each with where it is written.
    fn task_dependencies(&mut self, value: Option<&Value>) -> Vec<(u32, Span)> {
        let mut deps = Vec::new();
        match value {
            None | Some(Value::NullKeyword(_)) => {}
            Some(Value::Array(array)) => {
                for dep in &array.elements {
                    if let Some(d) = self.integer(dep, "a dependency") {
                        deps.push((d as u32, span(dep)));
                    }
                }
            }
            Some(other) => self.type_error(other, "`dependencies`", "an array of task ids"),
        }
        deps
    }

    /// Who holds an in-progress task (a runner state): kept as it is.
    fn task_holder(&mut self, value: Option<&Value>) -> Option<Holder> {
        match value {
            None | Some(Value::NullKeyword(_)) => None,
            Some(holder @ Value::Object(_)) => {
                match serde_json::from_value::<Holder>(self.plain(holder)) {
                    Ok(holder) => Some(holder),
                    Err(e) => {
                        // serde names the field and what it expected.
                        self.error(
                            Code::InvalidDocument,
                            span(holder),
                            &format!("`holder` is not a task holder: {e}"),
                            "expected {\"agent\": TEXT, \"since\": TIME, \"lease_seconds\": N, \"lease_expires_at\": TIME}",
                        );
                        None
                    }
                }
            }
            Some(other) => {
                self.type_error(other, "`holder`", "an object {\"agent\", \"since\", …}");
                None
            }
        }
    }

    /// A task's `retry`: `retry N` (a number) is short for `{"max": N,
    /// "count": 0}`; a missing or null `max` leaves the budget to the plan.
    fn task_retry(&mut self, value: Option<&Value>) -> Retry {
        match value {
            None | Some(Value::NullKeyword(_)) => Retry::default(),
            Some(Value::Object(retry)) => {
                let mut field = |name: &str| {
                    let value = match get(retry, name) {
                        None | Some(Value::NullKeyword(_)) => return None,
                        Some(value) => value,
                    };
                    let n = self.integer(value, &format!("`retry.{name}`"))?;
                    let n = u32::try_from(n).ok();
                    if n.is_none() {
                        self.type_error(
                            value,
                            &format!("`retry.{name}`"),
                            "a whole number up to 4294967295",
                        );
                    }
                    n
                };
                Retry {
                    max: field("max"),
                    count: field("count").unwrap_or(0),
                }
            }
            Some(number @ Value::NumberLit(_)) => {
                let max = self.integer(number, "`retry`").and_then(|n| {
                    let n = u32::try_from(n).ok();
                    if n.is_none() {
                        self.type_error(number, "`retry`", "a whole number up to 4294967295");
                    }
                    n
                });
                Retry { max, count: 0 }
            }
            Some(other) => {
                self.type_error(other, "`retry`", "an object {\"max\": N, \"count\": N}");
                Retry::default()
            }
        }
    }

    /// A task's `priority`, by name.
    fn task_priority(&mut self, value: Option<&Value>) -> Option<&'static str> {
        match value {
            None | Some(Value::NullKeyword(_)) => None,
            Some(Value::StringLit(s)) => match Priority::from_name(&s.value) {
                Some(p) => Some(p.as_str()),
                None => {
                    self.error(
                        Code::InvalidValue,
                        span(&s.range),
                        &format!(
                            "unknown priority `{}`; it is `high`, `medium` or `low`",
                            s.value
                        ),
                        "unknown priority",
                    );
                    None
                }
            },
            Some(other) => {
                self.type_error(other, "`priority`", "a string");
                None
            }
        }
    }

    /// A task's `extra`, with every field planc does not know (each reported).
    fn task_extra(&mut self, task: &Object) -> Map<String, serde_json::Value> {
        let mut extra = match get(task, "extra") {
            None | Some(Value::NullKeyword(_)) => Map::new(),
            Some(value @ Value::Object(_)) => match self.plain(value) {
                serde_json::Value::Object(map) => map,
                _ => Map::new(),
            },
            Some(other) => {
                self.type_error(other, "`extra`", "an object");
                Map::new()
            }
        };
        let known = &strict::rules().task.known;
        for property in &task.properties {
            if !known.iter().any(|k| k == property.name.as_str()) {
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                self.unknown_field(property, &known);
                let value = self.plain(&property.value);
                extra.insert(property.name.as_str().to_owned(), value);
            }
        }
        extra
    }

    /// An assignee must be one of the document's roles.
    fn check_assignee(&mut self, task: &Object, assignee: &str, role_ids: &[String]) {
        if self.role_names.contains(assignee) {
            return;
        }
        let at = get(task, "assignee").map(span).unwrap_or_default();
        let suggestion = self
            .suggestions
            .closest(assignee, role_ids.iter().map(String::as_str));
        let label = match suggestion {
            Some(best) => format!("did you mean `{best}`?"),
            None => "unknown role".to_owned(),
        };
        self.diagnostics.push(
            Diagnostic::new(Code::UnknownRole, format!("no role named `{assignee}`"))
                .label(self.file, at, label)
                .help("an assignee must be the `id` of an entry of `roles`"),
        );
    }

    /// Task keys are unique.
    fn check_key(&mut self, task: &Object, key: &str, keys: &mut HashMap<String, Span>) {
        let at = get(task, "key").map(span).unwrap_or_default();
        if let Some(first) = keys.get(key) {
            self.diagnostics.push(
                Diagnostic::new(Code::Duplicate, format!("two tasks have the key `{key}`"))
                    .label(self.file, at, "used again here")
                    .label(self.file, *first, "first used here")
                    .help("task keys name tasks for the CLI and MCP; make them unique"),
            );
        } else {
            keys.insert(key.to_owned(), at);
        }
    }

    /// Duplicate ids, unknown dependencies, and the graph checks.
    fn cross_task_with(&mut self, tasks: &[TaskInfo]) {
        let mut index: HashMap<u32, usize> = HashMap::new();
        for (i, task) in tasks.iter().enumerate() {
            if let Some(&first) = index.get(&task.id) {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::Duplicate,
                        format!("two tasks have the id {}", task.id),
                    )
                    .label(self.file, task.id_span, "used again here")
                    .label(self.file, tasks[first].id_span, "first used here")
                    .help("task ids must be unique"),
                );
            } else {
                index.insert(task.id, i);
            }
        }
        let mut dep_graph = graph::DepGraph {
            nodes: tasks
                .iter()
                .map(|t| graph::Node { name: &t.name })
                .collect(),
            edges: Vec::new(),
            groups: Vec::new(),
        };
        for (i, task) in tasks.iter().enumerate() {
            for &(dep, at, direct) in &task.deps {
                match index.get(&dep) {
                    Some(&j) => dep_graph.edges.push(graph::Edge {
                        dependent: i,
                        dependency: j,
                        file: self.file,
                        span: at,
                        direct,
                    }),
                    None => self.diagnostics.push(
                        Diagnostic::new(Code::UnknownRef, format!("no task has the id {dep}"))
                            .label(self.file, at, "unknown task id")
                            .help("a dependency is the `id` of another task in `tasks`"),
                    ),
                }
            }
        }
        let report = graph::check(&dep_graph, graph::Wanted::Diagnostics);
        self.diagnostics.extend(report.diagnostics);
    }

    fn steps(&mut self, root: &Object, ids: &HashSet<u32>) -> Vec<serde_json::Value> {
        let Some(value) = get(root, "steps") else {
            return Vec::new();
        };
        let Value::Array(array) = value else {
            self.type_error(value, "`steps`", "an array");
            return Vec::new();
        };
        let mut out = Vec::new();
        for step in &array.elements {
            let Value::Object(step) = step else {
                self.type_error(step, "a step", "an object");
                continue;
            };
            if self.strict {
                self.fields(step, "a step", &strict::rules().step, &["id", "tasks"]);
                self.not_empty(step, "id", "a step");
                if let Some(value @ Value::NullKeyword(_)) = get(step, "name") {
                    self.type_error(value, "`name` of a step", "a string");
                }
            }
            let id = self.string(step, "id", "a step", true);
            let name = self.string(step, "name", "a step", false);
            let mut members = Vec::new();
            match get(step, "tasks") {
                Some(Value::Array(tasks)) => {
                    for task in &tasks.elements {
                        if let Some(t) = self.integer(task, "a step's task id") {
                            if ids.contains(&(t as u32)) {
                                members.push(t as u32);
                            } else {
                                self.error(
                                    Code::UnknownRef,
                                    span(task),
                                    &format!("no task has the id {t}"),
                                    "unknown task id",
                                );
                            }
                        }
                    }
                }
                Some(other) => self.type_error(other, "a step's `tasks`", "an array of task ids"),
                None => self.missing(step, "a step", "tasks"),
            }
            if let Some(id) = id {
                let name = name.unwrap_or_else(|| id.clone());
                out.push(json!({"id": id, "name": name, "tasks": members}));
            }
        }
        out
    }

    fn state(&mut self, root: &Object, ids: &HashSet<u32>, tasks: &[TaskDoc]) -> serde_json::Value {
        let any_started = tasks.iter().any(|t| t.status != TaskStatus::Pending);
        let mut status = if any_started { "running" } else { "idle" }.to_owned();
        let mut current: Option<u32> = None;
        let mut revision = 0;
        let mut iterations = 0;
        let mut step_rounds = Vec::new();
        let check_current = |v: &mut Validator, value: &Value| -> Option<u32> {
            match value {
                Value::NullKeyword(_) => None,
                other => {
                    let id = v.integer(other, "the current task id")? as u32;
                    if ids.contains(&id) {
                        Some(id)
                    } else {
                        v.error(
                            Code::UnknownRef,
                            span(other),
                            &format!("the current task {id} is not in `tasks`"),
                            "unknown task id",
                        );
                        None
                    }
                }
            }
        };
        if let Some(value) = get(root, "currentTaskID") {
            current = check_current(self, value);
        }
        match get(root, "state") {
            None => {}
            Some(Value::Object(state)) => {
                if self.strict {
                    self.fields(state, "`state`", &strict::rules().state, &[]);
                }
                match get(state, "status") {
                    Some(Value::StringLit(s)) => match PlanStatus::from_name(&s.value) {
                        Some(_) => status = s.value.to_string(),
                        None => {
                            let label = match suggest::closest(&s.value, PlanStatus::NAMES) {
                                Some(best) => format!("did you mean `{best}`?"),
                                None => "unknown status".to_owned(),
                            };
                            self.diagnostics.push(
                                Diagnostic::new(
                                    Code::InvalidStatus,
                                    format!("unknown plan status `{}`", s.value),
                                )
                                .label(self.file, span(&s.range), label)
                                .help(format!(
                                    "a plan's status is one of {}",
                                    PlanStatus::NAMES.map(|n| format!("`{n}`")).join(", ")
                                )),
                            );
                        }
                    },
                    Some(other) => self.type_error(other, "`state.status`", "a string"),
                    None => {}
                }
                if let Some(value) = get(state, "current_task_id") {
                    current = check_current(self, value);
                }
                if let Some(value) = get(state, "revision") {
                    revision = self.integer(value, "`state.revision`").unwrap_or(0);
                }
                if let Some(value) = get(state, "iteration_count") {
                    iterations = self.integer(value, "`state.iteration_count`").unwrap_or(0);
                }
                if let Some(value) = get(state, "step_rounds") {
                    step_rounds = self.step_rounds(value, ids);
                }
            }
            Some(other) => self.type_error(other, "`state`", "an object"),
        }
        json!({
            "status": status,
            "current_task_id": current,
            "revision": revision,
            "iteration_count": iterations,
            "step_rounds": step_rounds,
        })
    }

    /// `state.step_rounds`: `[{"task_id", "rounds"}]`, the rounds an agent
    /// has spent on each task in progress.
    fn step_rounds(&mut self, value: &Value, ids: &HashSet<u32>) -> Vec<serde_json::Value> {
        let Value::Array(array) = value else {
            self.type_error(
                value,
                "`state.step_rounds`",
                "an array of {\"task_id\", \"rounds\"}",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in &array.elements {
            let Value::Object(object) = entry else {
                self.type_error(entry, "an entry of `state.step_rounds`", "an object");
                continue;
            };
            let task = match get(object, "task_id") {
                Some(value) => self
                    .integer(value, "`step_rounds[].task_id`")
                    .map(|id| (id, span(value))),
                None => {
                    self.missing(object, "an entry of `state.step_rounds`", "task_id");
                    None
                }
            };
            let rounds = match get(object, "rounds") {
                Some(value) => self.integer(value, "`step_rounds[].rounds`"),
                None => {
                    self.missing(object, "an entry of `state.step_rounds`", "rounds");
                    None
                }
            };
            let (Some((id, at)), Some(rounds)) = (task, rounds) else {
                continue;
            };
            if u32::try_from(id).is_ok_and(|id| ids.contains(&id)) {
                out.push(json!({"task_id": id, "rounds": rounds}));
            } else {
                self.error(
                    Code::UnknownRef,
                    at,
                    &format!("no task has the id {id}"),
                    "unknown task id",
                );
            }
        }
        out
    }
}
