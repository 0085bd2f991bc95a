//! The plan's run state (`state`, or the planManager's `currentTaskID`):
//! its status, current task, revision, iterations and step rounds.

use std::collections::HashSet;

use jsonc_parser::ast::{Object, Value};
use serde_json::json;

use super::{get, span, strict, Validator};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::{PlanStatus, TaskDoc, TaskStatus};
use crate::suggest;

impl Validator {
    /// The run state, normalised: what `state` (or the planManager's
    /// `currentTaskID`) says, and what it leaves out worked out from the tasks.
    pub(super) fn state(
        &mut self,
        root: &Object<'_>,
        ids: &HashSet<u32>,
        tasks: &[TaskDoc],
    ) -> serde_json::Value {
        let any_started = tasks.iter().any(|t| t.status != TaskStatus::Pending);
        let mut status = if any_started { "running" } else { "idle" }.to_owned();
        let mut current: Option<u32> = None;
        let mut revision = 0;
        let mut iterations = 0;
        let mut step_rounds = Vec::new();
        if let Some(value) = get(root, "currentTaskID") {
            current = self.current_task(value, ids);
        }
        match get(root, "state") {
            None => {}
            Some(Value::Object(state)) => {
                if self.strict {
                    self.fields(state, "`state`", &strict::rules().state, &[]);
                }
                if let Some(named) = self.plan_status(get(state, "status")) {
                    status = named;
                }
                if let Some(value) = get(state, "current_task_id") {
                    current = self.current_task(value, ids);
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

    /// `state.status`, when it names a plan status (an unknown one is
    /// reported, with the closest name).
    fn plan_status(&mut self, value: Option<&Value<'_>>) -> Option<String> {
        let s = match value? {
            Value::StringLit(s) => s,
            other => {
                self.type_error(other, "`state.status`", "a string");
                return None;
            }
        };
        if PlanStatus::from_name(&s.value).is_some() {
            return Some(s.value.to_string());
        }
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
        None
    }

    /// The current task: `null`, or the id of one of the tasks.
    fn current_task(&mut self, value: &Value<'_>, ids: &HashSet<u32>) -> Option<u32> {
        if let Value::NullKeyword(_) = value {
            return None;
        }
        let id = self.integer(value, "the current task id")? as u32;
        if ids.contains(&id) {
            return Some(id);
        }
        self.error(
            Code::UnknownRef,
            span(value),
            &format!("the current task {id} is not in `tasks`"),
            "unknown task id",
        );
        None
    }

    /// `state.step_rounds`: `[{"task_id", "rounds"}]`, the rounds an agent
    /// has spent on each task in progress.
    fn step_rounds(&mut self, value: &Value<'_>, ids: &HashSet<u32>) -> Vec<serde_json::Value> {
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
