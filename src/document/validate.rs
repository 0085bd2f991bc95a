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

use super::{PlanDocument, TaskDoc, FORMAT};

use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};
use crate::suggest;

mod cross_task;
mod meta;
mod roles;
mod shapes;
mod state;
mod steps;
mod strict;
mod task;

use cross_task::TaskInfo;

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
    options: &LoadOptions<'_>,
) -> (Option<PlanDocument>, Vec<Diagnostic>) {
    let root = match parse(text, file) {
        Ok(root) => root,
        Err(diagnostic) => return (None, vec![diagnostic]),
    };
    let mut v = Validator {
        file,
        diagnostics: Vec::new(),
        role_names: HashSet::new(),
        suggestions: suggest::Budget::default(),
        strict: false,
    };
    let document = v.load(root.as_ref(), options);
    (document, v.diagnostics)
}

/// The text's JSON value (`None` when it holds none), or the one diagnostic
/// that stops the reading: the text is too large or too deep, or not JSON.
fn parse(text: &str, file: FileId) -> Result<Option<Value<'_>>, Diagnostic> {
    if let Some(diagnostic) = crate::syntax::check_json_limits(text, file) {
        return Err(diagnostic);
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
    match parsed {
        Ok(result) => Ok(result.value),
        Err(error) => {
            let range = error.range();
            Err(
                Diagnostic::new(Code::Syntax, format!("invalid JSON: {}", error.kind())).label(
                    file,
                    Span::new(range.start, range.end.max(range.start)),
                    "here",
                ),
            )
        }
    }
}

fn span(node: &impl Ranged) -> Span {
    let range = node.range();
    Span::new(range.start, range.end)
}

fn kind(value: &Value<'_>) -> &'static str {
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

impl Validator {
    fn error(&mut self, code: Code, at: Span, message: &str, label: &str) {
        self.diagnostics
            .push(Diagnostic::new(code, message).label(self.file, at, label));
    }

    /// The document at `root`, read in its shape and checked, its
    /// diagnostics sorted and capped; typed when none is an error.
    fn load(
        &mut self,
        root: Option<&Value<'_>>,
        options: &LoadOptions<'_>,
    ) -> Option<PlanDocument> {
        let Some(root) = root else {
            self.error(
                Code::InvalidDocument,
                Span::at(0),
                "the file holds no JSON value",
                "expected a plan object",
            );
            return None;
        };
        let Value::Object(object) = root else {
            self.type_error(root, "the plan", "an object");
            return None;
        };
        let document = match shapes::detect(object) {
            shapes::Shape::Planc => self.document(object, options.fallback_id),
            shape => self
                .shaped(object, shape, options.fallback_id, options.tag)
                .and_then(|full| self.split_tasks(full, object)),
        };
        let has_errors = self.diagnostics.iter().any(Diagnostic::is_error);
        crate::diagnostic::sort(&mut self.diagnostics);
        crate::diagnostic::cap_per_code(&mut self.diagnostics);
        crate::diagnostic::sort(&mut self.diagnostics);
        if has_errors {
            return None;
        }
        self.typed(document?, object)
    }

    /// A normalised document as (everything but the tasks, the tasks typed).
    fn split_tasks(
        &mut self,
        mut full: serde_json::Value,
        at: &Object<'_>,
    ) -> Option<(serde_json::Value, Vec<TaskDoc>)> {
        let tasks = std::mem::replace(&mut full["tasks"], json!([]));
        match serde_json::from_value::<Vec<TaskDoc>>(tasks) {
            Ok(tasks) => Some((full, tasks)),
            Err(error) => {
                self.does_not_fit(at, &error);
                None
            }
        }
    }

    /// The document normalised, typed: the tasks are typed already (a
    /// `serde_json::Value` per task was most of the memory and time of a
    /// large document); the rest of the document goes through serde.
    fn typed(
        &mut self,
        (rest, tasks): (serde_json::Value, Vec<TaskDoc>),
        at: &Object<'_>,
    ) -> Option<PlanDocument> {
        match serde_json::from_value::<PlanDocument>(rest) {
            Ok(doc) => Some(PlanDocument { tasks, ..doc }),
            Err(error) => {
                self.does_not_fit(at, &error);
                None
            }
        }
    }

    fn does_not_fit(&mut self, at: &Object<'_>, error: &serde_json::Error) {
        self.error(
            Code::InvalidDocument,
            span(at),
            &format!("the document does not fit `planc/1`: {error}"),
            "in this document",
        );
    }

    /// A field planc does not read: reported (it is kept in the task's `extra`).
    fn unknown_field(&mut self, property: &jsonc_parser::ast::ObjectProp<'_>, known: &[&str]) {
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

    fn type_error(&mut self, value: &Value<'_>, what: &str, expected: &str) {
        self.error(
            Code::InvalidDocument,
            span(value),
            &format!("{what} must be {expected}, not {}", kind(value)),
            &format!("expected {expected}"),
        );
    }

    fn missing(&mut self, object: &Object<'_>, what: &str, field: &str) {
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
        object: &Object<'_>,
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

    fn integer(&mut self, value: &Value<'_>, what: &str) -> Option<u64> {
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
        root: &Object<'_>,
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

    /// A JSON value as serde_json sees it (params are free-form).
    fn plain(&mut self, value: &Value<'_>) -> serde_json::Value {
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
}
