//! Seeds 002, 003 and 004: a plan instance of steps holding tasks, and
//! plans of steps in a line.

use jsonc_parser::ast::{Object, Value};
use serde_json::{json, Map, Value as Json};

use super::{has_goal, Draft, Plan, Shape, StatusTable};
use crate::document::statuses::*;
use crate::document::validate::{get, span, Validator};

impl Validator {
    pub(super) fn plan_tool(&mut self, root: &Object<'_>, plan: &mut Plan) {
        plan.extension = self.extension(root);
        self.plan_tool_meta(root, plan);
        let Some(steps) = self.array(root, "steps", "the plan") else {
            return;
        };
        for step in &steps.elements {
            let Value::Object(step) = step else {
                self.type_error(step, "a step", "an object");
                continue;
            };
            let step_id = self.string(step, "step_id", "a step", true);
            let step_name = self.text(step, "name", "a step");
            let Some(tasks) = self.array(step, "tasks", "a step") else {
                continue;
            };
            let grouped = step_id
                .as_deref()
                .filter(|s| *s != crate::document::PLAN_STEP_ID);
            let first = plan.tasks.len();
            for task in &tasks.elements {
                let Value::Object(task) = task else {
                    self.type_error(task, "a task", "an object");
                    continue;
                };
                let draft = self.plan_tool_task(task, grouped);
                plan.tasks.push(draft);
            }
            if let Some(step) = grouped {
                plan.steps.push(json!({
                    "id": step,
                    "name": step_name.unwrap_or_else(|| step.to_owned()),
                    "members": [first, plan.tasks.len()],
                }));
            }
        }
    }

    /// A plan instance's id, name, description, source and status.
    fn plan_tool_meta(&mut self, root: &Object<'_>, plan: &mut Plan) {
        if let Some(id) = self.text(root, "plan_id", "the plan") {
            plan.meta.insert("id".into(), id.into());
        }
        let name = self.text(root, "name", "the plan");
        let description = self.text(root, "description", "the plan");
        plan.meta.insert("title".into(), name.clone().into());
        if let Some(goal) = description.or(name) {
            plan.meta.insert("goal".into(), goal.into());
        }
        if let Some(source) = self.text(root, "workflow_template_source", "the plan") {
            plan.meta.insert("source".into(), source.into());
        }
        let plan_statuses: StatusTable = &[
            ("running", "running"),
            ("completed", "completed"),
            ("error", "failed"),
        ];
        if let Some((status, raw)) = self.peer_status(root, "status", plan_statuses, "running") {
            if !raw.is_empty() {
                plan.state.insert("status".into(), status.into());
            }
        }
    }

    /// A task of a plan instance, in the step `grouped` (`None`: the
    /// `(plan)` step, tasks outside any step).
    fn plan_tool_task(&mut self, task: &Object<'_>, grouped: Option<&str>) -> Draft {
        let mut draft = Draft::new(span(task));
        let key = self.string(task, "task_id", "a task", true);
        if let Some(name) = self.string(task, "name", "a task", true) {
            draft.set("name", name);
        }
        let assignee = self.text(task, "assignee", "a task");
        let description = self.text(task, "description", "a task");
        let status = self.peer_status(task, "status", PLAN_TOOL_STATUSES, "pending");
        let result = self
            .text(task, "result_summary", "a task")
            .filter(|r| !r.is_empty());
        draft.set("assignee", assignee);
        draft.set("result", result);
        if let Some(key) = key {
            draft.aliases.push(key.clone());
            draft.set("key", key);
        }
        if let Some(step) = grouped {
            draft.set("step", step);
        }
        let ext = self.extension(task);
        // The export writes the reasoning as the description when
        // there is none: give it back as the reasoning only.
        let echoed = description.is_some()
            && ext.get("reasoning").and_then(Json::as_str) == description.as_deref()
            && !ext.contains_key("description");
        if !echoed {
            draft.set("description", description);
        }
        let Some((status, raw)) = status else {
            return draft;
        };
        draft.set("status", status);
        let native = if raw.is_empty() {
            "ready".to_owned()
        } else {
            raw
        };
        self.overlay(&mut draft, ext, span(task), &native, PLAN_TOOL_STATUSES);
        draft
    }

    /// The steps system's steps plan and Plan-Act's plan: steps in a line.
    pub(super) fn linear(&mut self, root: &Object<'_>, plan: &mut Plan, shape: Shape) {
        plan.extension = self.extension(root);
        if shape == Shape::Steps {
            self.steps_meta(root, plan);
        } else {
            self.plan_act_meta(root, plan);
        }
        let Some(steps) = self.array(root, "steps", "the plan") else {
            return;
        };
        for step in &steps.elements {
            let mut draft = Draft::new(span(step));
            draft.deps = None;
            match step {
                Value::StringLit(s) => {
                    draft.set("name", s.value.to_string());
                    draft.set("status", "pending");
                    plan.tasks.push(draft);
                }
                Value::Object(step) => {
                    self.linear_step(step, &mut draft);
                    plan.tasks.push(draft);
                }
                other => self.type_error(other, "a step", "an object or a string"),
            }
        }
    }

    /// A steps plan's id, goal, status and iteration count.
    fn steps_meta(&mut self, root: &Object<'_>, plan: &mut Plan) {
        if let Some(id) = self.text(root, "id", "the plan") {
            // planc writes the steps system's `plan_<ms>` id and keeps the
            // plan's own in its `planc` object.
            let own = super::extension_meta(&plan.extension, "id").cloned();
            plan.meta
                .insert("id".into(), own.unwrap_or_else(|| id.into()));
        }
        match self.text(root, "goal", "the plan") {
            Some(goal) => {
                plan.meta.insert("goal".into(), goal.into());
            }
            None => self.missing(root, "the plan", "goal"),
        }
        let plan_statuses: StatusTable = &[
            ("running", "running"),
            ("paused", "paused"),
            ("completed", "completed"),
            ("failed", "failed"),
        ];
        if let Some((status, raw)) = self.peer_status(root, "status", plan_statuses, "running") {
            if !raw.is_empty() {
                plan.state.insert("status".into(), status.into());
            }
        }
        if let Some(value) = get(root, "iteration_count") {
            if let Some(n) = self.integer(value, "`iteration_count`") {
                plan.state.insert("iteration_count".into(), n.into());
            }
        }
        if let Some(value) = get(root, "current_step_index") {
            self.integer(value, "`current_step_index`");
        }
    }

    /// A Plan-Act plan's title (its goal unless `planc` keeps one) and language.
    fn plan_act_meta(&mut self, root: &Object<'_>, plan: &mut Plan) {
        let title = self.string(root, "title", "the plan", true);
        if let Some(title) = title {
            plan.meta.insert("title".into(), title.clone().into());
            if !has_goal(&plan.extension) {
                plan.meta.insert("goal".into(), title.into());
            }
        }
        if let Some(language) = self.text(root, "language", "the plan") {
            plan.meta.insert("language".into(), language.into());
        }
    }

    /// A step object of a linear plan, into `draft`.
    fn linear_step(&mut self, step: &Object<'_>, draft: &mut Draft) {
        if let Some(name) = self.string(step, "description", "a step", true) {
            draft.set("name", name);
        }
        let step_id = self.text(step, "id", "a step");
        let mut result = self.text(step, "result", "a step");
        let error = self.text(step, "error", "a step");
        let status = self.peer_status(step, "status", LINEAR_STATUSES, "pending");
        if let Some(value) = get(step, "success") {
            if !matches!(value, Value::BooleanLit(_) | Value::NullKeyword(_)) {
                self.type_error(value, "`success`", "true, false or null");
            }
        }
        let mut extra = Map::new();
        // The progress planc writes is made from its own steps, not kept.
        let written_by_planc = get(step, "planc").is_some();
        for field in ["progress", "attachments"] {
            if field == "progress" && written_by_planc {
                continue;
            }
            if let Some(value) = get(step, field) {
                let value = self.plain(value);
                let empty = value.is_null() || value.as_array().is_some_and(Vec::is_empty);
                if !empty {
                    extra.insert(field.to_owned(), value);
                }
            }
        }
        let Some((status, raw)) = status else {
            return;
        };
        if status == "failed" && error.is_some() {
            result = error;
        }
        // The steps system writes an empty result for a step without one.
        let result = result.filter(|r| !r.is_empty());
        draft.set("status", status);
        draft.set("result", result);
        if !extra.is_empty() {
            draft.set("extra", extra);
        }
        let ext = self.extension(step);
        let native = if raw.is_empty() {
            "pending".to_owned()
        } else {
            raw
        };
        self.overlay(draft, ext, span(step), &native, LINEAR_STATUSES);
        if let Some(step_id) = step_id {
            draft.aliases.push(step_id.clone());
            draft.fields.entry("key").or_insert(step_id.into());
        }
    }
}
