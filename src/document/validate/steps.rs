//! The plan's `steps`: named groups of tasks.

use std::collections::HashSet;

use jsonc_parser::ast::{Object, Value};
use serde_json::json;

use super::{get, span, strict, Validator};
use crate::diagnostic::Code;

impl Validator {
    /// The steps normalised (`name` defaults to the id); a task id a step
    /// names must be one of `ids`.
    pub(super) fn steps(
        &mut self,
        root: &Object<'_>,
        ids: &HashSet<u32>,
    ) -> Vec<serde_json::Value> {
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
}
