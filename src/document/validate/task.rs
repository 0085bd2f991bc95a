//! One task of a `planc/1`-like document: each field read and checked, and
//! the task typed when it has no error.

use std::collections::HashMap;

use jsonc_parser::ast::{Object, Value};
use serde_json::Map;

use super::{get, span, strict, TaskInfo, Validator};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{Holder, Priority, Retry, TaskDoc, TaskStatus};
use crate::span::Span;
use crate::suggest;

impl Validator {
    /// A task: what the cross-task checks need when its id is valid, and
    /// the task typed when none of its fields has an error.
    pub(super) fn task(
        &mut self,
        task: &Object<'_>,
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
            extra: extra.into(),
            holder: holder.map(Box::new),
        };
        Some((info, Some(value)))
    }

    /// A task's `id`: a whole number from 1.
    fn task_id(&mut self, task: &Object<'_>, value: Option<&Value<'_>>) -> Option<u32> {
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
    fn task_status(&mut self, value: Option<&Value<'_>>) -> Option<TaskStatus> {
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
    fn task_dependencies(&mut self, value: Option<&Value<'_>>) -> Vec<(u32, Span)> {
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
    fn task_holder(&mut self, value: Option<&Value<'_>>) -> Option<Holder> {
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
    fn task_retry(&mut self, value: Option<&Value<'_>>) -> Retry {
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
    pub(super) fn task_priority(&mut self, value: Option<&Value<'_>>) -> Option<&'static str> {
        match value {
            None | Some(Value::NullKeyword(_)) => None,
            Some(Value::StringLit(s)) => match Priority::from_name(&s.value) {
                Some(p) => Some(p.as_str()),
                None => {
                    self.error(
                        Code::InvalidValue,
                        span(&s.range),
                        &format!(
                            "unknown priority `{}`; it is `critical`, `high`, `medium` or `low`",
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
    fn task_extra(&mut self, task: &Object<'_>) -> Map<String, serde_json::Value> {
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

    /// Task keys are unique.
    fn check_key(&mut self, task: &Object<'_>, key: &str, keys: &mut HashMap<String, Span>) {
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
}
