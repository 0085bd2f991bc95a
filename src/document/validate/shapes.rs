//! The other shapes a plan document may have: seed 002's plan instance,
//! seed 003's steps plan, seed 004's plan and planner output, task-master's
//! `tasks.json`, an OpenManus planning plan and Codex's `update_plan`
//! arguments. Each is read into a draft (tasks with spans into the JSON),
//! checked like a `planc/1` document, and normalised to one.
//!
//! What a shape cannot hold, planc's exports keep in a `planc` object (on a
//! task or step, and on the plan): it fills in only what the shape's own
//! fields leave open, so a peer's own edits win. See docs/interop.md.

use std::collections::{HashMap, HashSet};

use jsonc_parser::ast::{Object, Value};
use serde_json::{json, Map, Value as Json};

use super::{get, span, TaskInfo, Validator};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::statuses::*;
use crate::document::{Priority, FORMAT};
use crate::span::Span;
use crate::suggest;

/// Which format a JSON plan is in (see [`detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// `planc/1`, seed 001 or seed 000: a `tasks` list of seed task objects.
    Planc,
    /// Seed 002's `PlanInstance`: `steps` holding `tasks`.
    PlanTool,
    /// Seed 003: `{id, goal, status, steps, current_step_index, iteration_count}`.
    Steps,
    /// Seed 004: `{title, steps, language}` (steps may be bare strings).
    PlanAct,
    /// task-master: `{tasks}` with `title`s, or tagged `{"master": {tasks}}`.
    TaskMaster,
    /// OpenManus: `{plan_id, title, steps: [text], step_statuses, step_notes}`.
    OpenManus,
    /// Codex: `{explanation?, plan: [{step, status}]}`.
    Codex,
}

/// Looks at the top-level keys only: the first rule that matches decides.
pub(super) fn detect(root: &Object) -> Shape {
    let has = |name: &str| get(root, name).is_some();
    if has("format") || has("meta") || has("overallGoal") || has("state") {
        return Shape::Planc;
    }
    if let Some(Value::Array(tasks)) = get(root, "tasks") {
        let titled = tasks.elements.iter().any(|t| {
            matches!(t, Value::Object(o) if get(o, "title").is_some() && get(o, "name").is_none())
        });
        return if titled {
            Shape::TaskMaster
        } else {
            Shape::Planc
        };
    }
    if has("tasks") {
        return Shape::Planc;
    }
    if matches!(get(root, "plan"), Some(Value::Array(_))) {
        return Shape::Codex;
    }
    if has("step_statuses") || has("step_notes") {
        return Shape::OpenManus;
    }
    if let Some(Value::Array(steps)) = get(root, "steps") {
        let grouped = steps.elements.iter().any(
            |s| matches!(s, Value::Object(o) if get(o, "step_id").is_some() || get(o, "tasks").is_some()),
        );
        if grouped
            || has("plan_id")
                && !steps
                    .elements
                    .iter()
                    .any(|s| matches!(s, Value::StringLit(_)))
        {
            return Shape::PlanTool;
        }
        if has("plan_id") {
            return Shape::OpenManus;
        }
        if has("goal") || has("current_step_index") || has("iteration_count") {
            return Shape::Steps;
        }
        return Shape::PlanAct;
    }
    // Tagged task-master: every member an object, one of them with `tasks`.
    let tagged = !root.properties.is_empty()
        && root
            .properties
            .iter()
            .all(|p| matches!(&p.value, Value::Object(_)))
        && root
            .properties
            .iter()
            .any(|p| matches!(&p.value, Value::Object(o) if get(o, "tasks").is_some()));
    if tagged {
        Shape::TaskMaster
    } else {
        Shape::Planc
    }
}

/// A reference from one task to another, as the shape spells it.
enum Ref {
    Id(u32),
    Key(String),
}

/// A task as read from a shape, before ids are settled.
struct Draft {
    /// The task's object (or string) in the JSON.
    at: Span,
    id: Option<(u32, Span)>,
    /// Names other tasks of this document may use for it.
    aliases: Vec<String>,
    /// `None`: wait for the task before it (linear shapes).
    deps: Option<Vec<(Ref, Span, bool)>>,
    fields: Map<String, Json>,
}

impl Draft {
    fn new(at: Span) -> Draft {
        Draft {
            at,
            id: None,
            aliases: Vec::new(),
            deps: Some(Vec::new()),
            fields: Map::new(),
        }
    }

    fn set(&mut self, field: &str, value: impl Into<Json>) {
        self.fields.insert(field.to_owned(), value.into());
    }
}

/// A plan as read from a shape.
#[derive(Default)]
struct Plan {
    meta: Map<String, Json>,
    state: Map<String, Json>,
    steps: Vec<Json>,
    roles: Option<Json>,
    tasks: Vec<Draft>,
    /// The plan's `planc` object.
    extension: Map<String, Json>,
}

/// Whether a plan's `planc` object gives the goal.
fn has_goal(extension: &Map<String, Json>) -> bool {
    extension_meta(extension, "goal").is_some()
}

/// A `meta` field of a plan's `planc` object.
fn extension_meta<'a>(extension: &'a Map<String, Json>, field: &str) -> Option<&'a Json> {
    extension.get("meta").and_then(|m| m.get(field))
}

impl Validator {
    /// Reads a document of any shape but [`Shape::Planc`] into `planc/1`.
    pub(super) fn shaped(
        &mut self,
        root: &Object,
        shape: Shape,
        fallback_id: &str,
        tag: Option<&str>,
    ) -> Option<Json> {
        let mut plan = Plan::default();
        match shape {
            // `document` reads these (`load_json_with` never passes them here).
            Shape::Planc => return None,
            Shape::PlanTool => self.plan_tool(root, &mut plan),
            Shape::Steps | Shape::PlanAct => self.linear(root, &mut plan, shape),
            Shape::TaskMaster => self.taskmaster(root, &mut plan, tag)?,
            Shape::OpenManus => self.openmanus(root, &mut plan),
            Shape::Codex => self.codex(root, &mut plan),
        }
        self.finish(root, plan, fallback_id)
    }

    /// A string member, or `None` (wrong types reported).
    fn text(&mut self, object: &Object, field: &str, what: &str) -> Option<String> {
        self.string(object, field, what, false)
    }

    /// A status spelt as `table` says, as the planc status it stands for.
    fn peer_status(
        &mut self,
        object: &Object,
        field: &str,
        table: StatusTable,
        default: &'static str,
    ) -> Option<(&'static str, String)> {
        match get(object, field) {
            None | Some(Value::NullKeyword(_)) => Some((default, String::new())),
            Some(Value::StringLit(s)) => {
                if let Some((_, planc)) = table.iter().find(|(n, _)| *n == s.value) {
                    return Some((planc, s.value.to_string()));
                }
                let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
                let label = match suggest::closest(&s.value, names.iter().copied()) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "unknown status".to_owned(),
                };
                self.diagnostics.push(
                    Diagnostic::new(Code::InvalidStatus, format!("unknown status `{}`", s.value))
                        .label(self.file, span(&s.range), label)
                        .help(format!(
                            "here a status is one of {}",
                            names
                                .iter()
                                .map(|n| format!("`{n}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                );
                None
            }
            Some(other) => {
                self.type_error(other, &format!("`{field}`"), "a string");
                None
            }
        }
    }

    /// The `planc` object of a task or plan: planc's fields the shape has no place for.
    fn extension(&mut self, object: &Object) -> Map<String, Json> {
        match get(object, "planc") {
            None | Some(Value::NullKeyword(_)) => Map::new(),
            Some(Value::Object(_)) => match self.plain(get(object, "planc").expect("checked")) {
                Json::Object(map) => map,
                _ => Map::new(),
            },
            Some(other) => {
                self.type_error(other, "`planc`", "an object");
                Map::new()
            }
        }
    }

    /// Fills what the shape left open from a task's `planc` object. Its
    /// status counts when the shape's own status is what planc writes for it.
    fn overlay(
        &mut self,
        draft: &mut Draft,
        ext: Map<String, Json>,
        at: Span,
        native: &str,
        table: StatusTable,
    ) {
        for (field, value) in ext {
            match field.as_str() {
                "id" => match value
                    .as_u64()
                    .filter(|&i| (1..=u32::MAX as u64).contains(&i))
                {
                    Some(id) => draft.id = Some((id as u32, at)),
                    None => self.error(
                        Code::InvalidDocument,
                        at,
                        "`planc.id` must be a whole number from 1",
                        "in this `planc` object",
                    ),
                },
                "dependencies" => match value.as_array() {
                    Some(list) => {
                        let mut deps = Vec::new();
                        for d in list {
                            match d.as_u64() {
                                Some(d) => deps.push((Ref::Id(d as u32), at, true)),
                                None => self.error(
                                    Code::InvalidDocument,
                                    at,
                                    "`planc.dependencies` must hold task ids",
                                    "in this `planc` object",
                                ),
                            }
                        }
                        draft.deps = Some(deps);
                    }
                    None => self.error(
                        Code::InvalidDocument,
                        at,
                        "`planc.dependencies` must be an array of task ids",
                        "in this `planc` object",
                    ),
                },
                "status" => {
                    let own = value
                        .as_str()
                        .and_then(|s| peer_status(table, s))
                        .is_some_and(|peer| peer == native);
                    if own {
                        draft.fields.insert(field, value);
                    }
                }
                // A null says planc had no value: the format's is a stand-in.
                _ if value.is_null() => {
                    draft.fields.remove(&field);
                }
                _ => {
                    if !draft.fields.contains_key(&field) {
                        draft.fields.insert(field, value);
                    }
                }
            }
        }
    }

    fn plan_tool(&mut self, root: &Object, plan: &mut Plan) {
        plan.extension = self.extension(root);
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
                .filter(|s| *s != crate::emit::PLAN_STEP_ID);
            let first = plan.tasks.len();
            for task in &tasks.elements {
                let Value::Object(task) = task else {
                    self.type_error(task, "a task", "an object");
                    continue;
                };
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
                    plan.tasks.push(draft);
                    continue;
                };
                draft.set("status", status);
                let native = if raw.is_empty() {
                    "ready".to_owned()
                } else {
                    raw
                };
                self.overlay(&mut draft, ext, span(task), &native, PLAN_TOOL_STATUSES);
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

    fn array<'v, 'a>(
        &mut self,
        object: &'v Object<'a>,
        field: &str,
        what: &str,
    ) -> Option<&'v jsonc_parser::ast::Array<'a>> {
        match get(object, field) {
            Some(Value::Array(array)) => Some(array),
            Some(other) => {
                self.type_error(other, &format!("`{field}`"), "an array");
                None
            }
            None => {
                self.missing(object, what, field);
                None
            }
        }
    }

    /// Seed 003's steps plan and seed 004's plan: steps in a line.
    fn linear(&mut self, root: &Object, plan: &mut Plan, shape: Shape) {
        plan.extension = self.extension(root);
        if shape == Shape::Steps {
            if let Some(id) = self.text(root, "id", "the plan") {
                plan.meta.insert("id".into(), id.into());
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
            if let Some((status, raw)) = self.peer_status(root, "status", plan_statuses, "running")
            {
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
        } else {
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
        let Some(steps) = self.array(root, "steps", "the plan") else {
            return;
        };
        for step in &steps.elements {
            let mut draft = Draft::new(span(step));
            draft.deps = None;
            let step = match step {
                Value::StringLit(s) => {
                    draft.set("name", s.value.to_string());
                    draft.set("status", "pending");
                    plan.tasks.push(draft);
                    continue;
                }
                Value::Object(step) => step,
                other => {
                    self.type_error(other, "a step", "an object or a string");
                    continue;
                }
            };
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
            for field in ["progress", "attachments"] {
                if let Some(value) = get(step, field) {
                    let value = self.plain(value);
                    let empty = value.is_null() || value.as_array().is_some_and(Vec::is_empty);
                    if !empty {
                        extra.insert(field.to_owned(), value);
                    }
                }
            }
            let Some((status, raw)) = status else {
                plan.tasks.push(draft);
                continue;
            };
            if status == "failed" && error.is_some() {
                result = error;
            }
            // Seed 003 writes an empty result for a step without one.
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
            self.overlay(&mut draft, ext, span(step), &native, LINEAR_STATUSES);
            if let Some(step_id) = step_id {
                draft.aliases.push(step_id.clone());
                draft.fields.entry("key").or_insert(step_id.into());
            }
            plan.tasks.push(draft);
        }
    }

    fn taskmaster(&mut self, root: &Object, plan: &mut Plan, tag: Option<&str>) -> Option<()> {
        let (tag_name, list_holder) = if get(root, "tasks").is_some() {
            (None, root)
        } else {
            let tags: Vec<&str> = root.properties.iter().map(|p| p.name.as_str()).collect();
            let wanted = tag.or_else(|| {
                if tags.contains(&"master") || tags.len() != 1 {
                    Some("master")
                } else {
                    tags.first().copied()
                }
            });
            let found = root
                .properties
                .iter()
                .find(|p| Some(p.name.as_str()) == wanted)
                .and_then(|p| match &p.value {
                    Value::Object(o) => Some(o),
                    _ => None,
                });
            let Some(found) = found else {
                let at = span(root);
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::InvalidDocument,
                        format!(
                            "the task-master file has no tag `{}`",
                            wanted.unwrap_or("master")
                        ),
                    )
                    .label(
                        self.file,
                        Span::new(at.start(), at.start() + 1),
                        "in this file",
                    )
                    .help(format!(
                        "its tags are {}; choose one with --tag",
                        tags.iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                );
                return None;
            };
            (wanted, found)
        };
        plan.extension = self.extension(list_holder);
        let tag_name = tag_name.unwrap_or("master");
        if extension_meta(&plan.extension, "id").is_none() {
            plan.meta.insert("id".into(), tag_name.into());
        }
        let description = match get(list_holder, "metadata") {
            Some(Value::Object(metadata)) => self.text(metadata, "description", "`metadata`"),
            Some(Value::NullKeyword(_)) | None => None,
            Some(other) => {
                self.type_error(other, "`metadata`", "an object");
                None
            }
        };
        let goal =
            description.unwrap_or_else(|| format!("the tasks of task-master tag `{tag_name}`"));
        plan.meta.insert("goal".into(), goal.into());
        let tasks = self.array(list_holder, "tasks", "the tag")?;
        for task in &tasks.elements {
            let Value::Object(task) = task else {
                self.type_error(task, "a task", "an object");
                continue;
            };
            let parent = plan.tasks.len();
            let id = self.taskmaster_task(task, None, plan);
            let Some(Value::Array(subtasks)) = get(task, "subtasks") else {
                if let Some(other) =
                    get(task, "subtasks").filter(|v| !matches!(v, Value::NullKeyword(_)))
                {
                    self.type_error(other, "`subtasks`", "an array");
                }
                continue;
            };
            for subtask in &subtasks.elements {
                let Value::Object(subtask) = subtask else {
                    self.type_error(subtask, "a subtask", "an object");
                    continue;
                };
                let at = span(subtask);
                if let Some(key) = self.taskmaster_task(subtask, id, plan) {
                    // The parent is done when its subtasks are: it waits for them.
                    if let Some(deps) = plan.tasks[parent].deps.as_mut() {
                        deps.push((Ref::Key(format!("{}.{key}", id.unwrap_or(0))), at, false));
                    }
                }
            }
        }
        Some(())
    }

    /// One task-master task (or subtask of `parent`); returns its id.
    fn taskmaster_task(
        &mut self,
        task: &Object,
        parent: Option<u32>,
        plan: &mut Plan,
    ) -> Option<u32> {
        let mut draft = Draft::new(span(task));
        let id_value = get(task, "id");
        let id = match id_value {
            Some(Value::StringLit(s)) => match s.value.parse::<u32>() {
                Ok(i) if i > 0 => Some(i),
                _ => {
                    self.type_error(
                        id_value.expect("found"),
                        "a task's `id`",
                        "a whole number from 1",
                    );
                    None
                }
            },
            Some(value) => self.integer(value, "a task's `id`").and_then(|i| {
                (1..=u32::MAX as u64)
                    .contains(&i)
                    .then_some(i as u32)
                    .or_else(|| {
                        self.type_error(value, "a task's `id`", "a whole number from 1");
                        None
                    })
            }),
            None => {
                self.missing(task, "a task", "id");
                None
            }
        };
        match (parent, id) {
            (None, Some(id)) => {
                draft.id = Some((id, id_value.map(span).unwrap_or_default()));
                draft.aliases.push(id.to_string());
            }
            (Some(p), Some(id)) => {
                let key = format!("{p}.{id}");
                draft.aliases.push(key.clone());
                draft.set("key", key);
            }
            _ => {}
        }
        if let Some(title) = self.string(task, "title", "a task", true) {
            draft.set("name", title);
        }
        let description = self.text(task, "description", "a task");
        draft.set("description", description.filter(|d| !d.is_empty()));
        let status = self.peer_status(task, "status", TASKMASTER_STATUSES, "pending");
        let mut extra = Map::new();
        if let Some((status, raw)) = &status {
            draft.set("status", *status);
            if matches!(raw.as_str(), "review" | "deferred" | "blocked") {
                extra.insert("status".into(), raw.clone().into());
            }
        }
        match get(task, "priority") {
            None | Some(Value::NullKeyword(_)) => {}
            Some(Value::StringLit(s)) => match Priority::from_name(&s.value) {
                Some(p) => draft.set("priority", p.as_str()),
                None => self.error(
                    Code::InvalidValue,
                    span(&s.range),
                    &format!(
                        "unknown priority `{}`; it is `high`, `medium` or `low`",
                        s.value
                    ),
                    "unknown priority",
                ),
            },
            Some(other) => self.type_error(other, "`priority`", "a string"),
        }
        let mut deps = Vec::new();
        match get(task, "dependencies") {
            None | Some(Value::NullKeyword(_)) => {}
            Some(Value::Array(list)) => {
                for dep in &list.elements {
                    let at = span(dep);
                    match (dep, parent) {
                        // In a subtask a number names a sibling subtask.
                        (Value::NumberLit(n), Some(p)) => {
                            deps.push((Ref::Key(format!("{p}.{}", n.value)), at, true))
                        }
                        (Value::NumberLit(_), None) => {
                            if let Some(d) = self.integer(dep, "a dependency") {
                                deps.push((Ref::Id(d as u32), at, true));
                            }
                        }
                        (Value::StringLit(s), _) => {
                            deps.push((Ref::Key(s.value.to_string()), at, true))
                        }
                        (other, _) => self.type_error(other, "a dependency", "a task id"),
                    }
                }
            }
            Some(other) => self.type_error(other, "`dependencies`", "an array of task ids"),
        }
        draft.deps = Some(deps);
        const KNOWN: [&str; 9] = [
            "id",
            "title",
            "description",
            "status",
            "priority",
            "dependencies",
            "subtasks",
            "planc",
            "parentId",
        ];
        for property in &task.properties {
            let name = property.name.as_str();
            if !KNOWN.contains(&name) {
                let value = self.plain(&property.value);
                // planc writes empty `details` and `testStrategy` for a task without them.
                if !(value == "" && matches!(name, "details" | "testStrategy")) {
                    extra.insert(name.to_owned(), value);
                }
            }
        }
        if !extra.is_empty() {
            draft.set("extra", extra);
        }
        let ext = self.extension(task);
        let native = status
            .map(|(_, raw)| raw)
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "pending".into());
        self.overlay(&mut draft, ext, span(task), &native, TASKMASTER_STATUSES);
        plan.tasks.push(draft);
        id
    }

    fn openmanus(&mut self, root: &Object, plan: &mut Plan) {
        plan.extension = self.extension(root);
        if let Some(id) = self.text(root, "plan_id", "the plan") {
            plan.meta.insert("id".into(), id.into());
        }
        if let Some(title) = self.string(root, "title", "the plan", true) {
            plan.meta.insert("title".into(), title.clone().into());
            if !has_goal(&plan.extension) {
                plan.meta.insert("goal".into(), title.into());
            }
        }
        let Some(steps) = self.array(root, "steps", "the plan") else {
            return;
        };
        let statuses = match get(root, "step_statuses") {
            Some(Value::Array(a)) => a.elements.iter().collect(),
            Some(other) => {
                self.type_error(other, "`step_statuses`", "an array");
                Vec::new()
            }
            None => Vec::new(),
        };
        let notes = match get(root, "step_notes") {
            Some(Value::Array(a)) => a.elements.iter().collect(),
            Some(other) => {
                self.type_error(other, "`step_notes`", "an array");
                Vec::new()
            }
            None => Vec::new(),
        };
        let ext_tasks: Vec<Json> = match plan.extension.remove("tasks") {
            Some(Json::Array(list)) if list.len() == steps.elements.len() => list,
            _ => Vec::new(),
        };
        for (n, step) in steps.elements.iter().enumerate() {
            let mut draft = Draft::new(span(step));
            draft.deps = None;
            let Value::StringLit(text) = step else {
                self.type_error(step, "a step", "a string");
                continue;
            };
            draft.set("name", text.value.to_string());
            let mut native = "not_started".to_owned();
            draft.set("status", "pending");
            match statuses.get(n) {
                Some(Value::StringLit(s)) => {
                    match OPENMANUS_STATUSES.iter().find(|(o, _)| *o == s.value) {
                        Some((o, p)) => {
                            native = (*o).to_owned();
                            draft.set("status", *p);
                        }
                        None => self.error(
                            Code::InvalidStatus,
                            span(&s.range),
                            &format!("unknown status `{}`", s.value),
                            "one of `not_started`, `in_progress`, `completed`, `blocked`",
                        ),
                    }
                }
                Some(other) => self.type_error(other, "a step status", "a string"),
                None => {}
            }
            match notes.get(n) {
                Some(Value::StringLit(s)) if !s.value.is_empty() => {
                    draft.set("result", s.value.to_string())
                }
                Some(Value::StringLit(_) | Value::NullKeyword(_)) | None => {}
                Some(other) => self.type_error(other, "a step note", "a string"),
            }
            let ext = match ext_tasks.get(n) {
                Some(Json::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            self.overlay(&mut draft, ext, span(step), &native, OPENMANUS_STATUSES);
            plan.tasks.push(draft);
        }
    }

    fn codex(&mut self, root: &Object, plan: &mut Plan) {
        let explanation = self.text(root, "explanation", "the plan");
        let goal = explanation.unwrap_or_else(|| "Carry out the plan's steps in order".to_owned());
        plan.meta.insert("goal".into(), goal.into());
        let Some(steps) = self.array(root, "plan", "the plan") else {
            return;
        };
        for step in &steps.elements {
            let mut draft = Draft::new(span(step));
            draft.deps = None;
            let Value::Object(step) = step else {
                self.type_error(step, "a plan item", "an object");
                continue;
            };
            if let Some(name) = self.string(step, "step", "a plan item", true) {
                draft.set("name", name);
            }
            match get(step, "status") {
                None => self.missing(step, "a plan item", "status"),
                Some(_) => {
                    if let Some((status, _)) =
                        self.peer_status(step, "status", CODEX_STATUSES, "pending")
                    {
                        draft.set("status", status);
                    }
                }
            }
            for property in &step.properties {
                let name = property.name.as_str();
                if name != "step" && name != "status" {
                    self.unknown_field(property, &["step", "status"]);
                }
            }
            plan.tasks.push(draft);
        }
        for property in &root.properties {
            let name = property.name.as_str();
            if name != "plan" && name != "explanation" {
                self.unknown_field(property, &["plan", "explanation"]);
            }
        }
    }

    /// Settles ids and references, runs the cross-task checks, and writes `planc/1`.
    fn finish(&mut self, root: &Object, mut plan: Plan, fallback_id: &str) -> Option<Json> {
        // Ids: the shape's or the `planc` object's; the others count on from the largest.
        let mut used: HashSet<u32> = plan
            .tasks
            .iter()
            .filter_map(|t| t.id.map(|i| i.0))
            .collect();
        let mut next = used.iter().max().copied().unwrap_or(0);
        for draft in &mut plan.tasks {
            if draft.id.is_none() {
                next += 1;
                while used.contains(&next) {
                    next += 1;
                }
                used.insert(next);
                draft.id = Some((next, draft.at));
            }
        }
        let mut aliases: HashMap<&str, u32> = HashMap::new();
        for draft in &plan.tasks {
            let id = draft.id.expect("settled").0;
            for alias in &draft.aliases {
                aliases.entry(alias.as_str()).or_insert(id);
            }
            if let Some(Json::String(key)) = draft.fields.get("key") {
                aliases.entry(key.as_str()).or_insert(id);
            }
        }
        let mut infos = Vec::new();
        let mut previous: Option<u32> = None;
        let mut resolved: Vec<Vec<u32>> = Vec::new();
        for draft in &plan.tasks {
            let (id, id_span) = draft.id.expect("settled");
            let mut deps = Vec::new();
            match &draft.deps {
                None => deps.extend(previous.map(|p| (p, draft.at, true))),
                Some(list) => {
                    for (reference, at, direct) in list {
                        match reference {
                            Ref::Id(d) => deps.push((*d, *at, *direct)),
                            Ref::Key(k) => match aliases.get(k.as_str()) {
                                Some(&d) => deps.push((d, *at, *direct)),
                                None => self.error(
                                    Code::UnknownRef,
                                    *at,
                                    &format!("no task is called `{k}`"),
                                    "unknown task",
                                ),
                            },
                        }
                    }
                }
            }
            previous = Some(id);
            resolved.push(deps.iter().map(|d| d.0).collect());
            let name = match draft.fields.get("key") {
                Some(Json::String(key)) => key.clone(),
                _ => id.to_string(),
            };
            infos.push(TaskInfo {
                id,
                id_span,
                name,
                deps: deps
                    .into_iter()
                    .map(|(d, at, direct)| (d, at, direct))
                    .collect(),
            });
        }
        self.cross_task_with(&infos);
        let ids: HashSet<u32> = infos.iter().map(|t| t.id).collect();

        let ext = std::mem::take(&mut plan.extension);
        // The plan's `planc` object fills what the shape has no place for.
        if let Some(Json::Object(meta)) = ext.get("meta") {
            for (field, value) in meta {
                plan.meta
                    .entry(field.clone())
                    .or_insert_with(|| value.clone());
            }
        }
        if let Some(Json::Object(state)) = ext.get("state") {
            for (field, value) in state {
                plan.state
                    .entry(field.clone())
                    .or_insert_with(|| value.clone());
            }
        }
        if let Some(roles) = ext.get("roles") {
            plan.roles = Some(roles.clone());
        }
        let mut steps: Vec<Json> = Vec::new();
        for step in std::mem::take(&mut plan.steps) {
            let members = &step["members"];
            let (from, to) = (
                members[0].as_u64().unwrap_or(0) as usize,
                members[1].as_u64().unwrap_or(0) as usize,
            );
            let tasks: Vec<u32> = plan.tasks[from..to]
                .iter()
                .map(|t| t.id.expect("settled").0)
                .collect();
            steps.push(json!({"id": step["id"], "name": step["name"], "tasks": tasks}));
        }
        if let Some(Json::Array(ext_steps)) = ext.get("steps") {
            if steps.is_empty() {
                for step in ext_steps {
                    let mut step = step.clone();
                    if let Some(Json::Array(tasks)) = step.get_mut("tasks") {
                        tasks.retain(|t| t.as_u64().is_some_and(|t| ids.contains(&(t as u32))));
                    }
                    steps.push(step);
                }
            }
        }
        let _ = root;

        let mut tasks = Vec::new();
        let mut assignees: Vec<String> = Vec::new();
        let mut running = None;
        for (draft, deps) in plan.tasks.into_iter().zip(resolved) {
            let id = draft.id.expect("settled").0;
            let mut f = draft.fields;
            let status = f
                .remove("status")
                .as_ref()
                .and_then(Json::as_str)
                .unwrap_or("pending")
                .to_owned();
            if status == "in_progress" && running.is_none() {
                running = Some(id);
            }
            if let Some(Json::String(a)) = f.get("assignee") {
                if !assignees.contains(a) {
                    assignees.push(a.clone());
                }
            }
            let mut task = Map::new();
            task.insert("id".into(), id.into());
            task.insert("name".into(), f.remove("name").unwrap_or_default());
            task.insert("status".into(), status.into());
            task.insert("dependencies".into(), deps.into());
            for field in [
                "reasoning",
                "result",
                "key",
                "step",
                "assignee",
                "description",
            ] {
                task.insert(field.into(), f.remove(field).unwrap_or(Json::Null));
            }
            task.insert(
                "optional".into(),
                f.remove("optional").unwrap_or(Json::Bool(false)),
            );
            task.insert(
                "retry".into(),
                f.remove("retry")
                    .unwrap_or_else(|| json!({"max": 0, "count": 0})),
            );
            if let Some(p) = f.remove("priority").filter(|p| !p.is_null()) {
                task.insert("priority".into(), p);
            }
            let mut extra = match f.remove("extra") {
                Some(Json::Object(map)) => map,
                _ => Map::new(),
            };
            // Anything else the `planc` object held is kept too.
            for (field, value) in f {
                extra.entry(field).or_insert(value);
            }
            if !extra.is_empty() {
                task.insert("extra".into(), Json::Object(extra));
            }
            tasks.push(Json::Object(task));
        }
        let roles = plan.roles.unwrap_or_else(|| {
            Json::Array(
                assignees
                    .into_iter()
                    .map(|a| json!({"id": a, "description": null}))
                    .collect(),
            )
        });
        let any_started = tasks.iter().any(|t| t["status"] != "pending");
        let meta = |field: &str| plan.meta.get(field).cloned().unwrap_or(Json::Null);
        let goal = plan.meta.get("goal").cloned().unwrap_or_else(|| {
            self.diagnostics.push(
                Diagnostic::new(Code::MissingGoal, "the plan has no goal").label(
                    self.file,
                    Span::new(span(root).start(), span(root).start() + 1),
                    "no goal here",
                ),
            );
            Json::Null
        });
        let id = plan
            .meta
            .get("id")
            .cloned()
            .filter(|i| i.as_str().is_some_and(|s| !s.is_empty()))
            .unwrap_or_else(|| fallback_id.into());
        let state = &plan.state;
        let status = state
            .get("status")
            .cloned()
            .unwrap_or_else(|| if any_started { "running" } else { "idle" }.into());
        Some(json!({
            "format": FORMAT,
            "meta": {
                "id": id,
                "title": meta("title"),
                "goal": goal,
                "language": plan.meta.get("language").cloned().unwrap_or_else(|| "en".into()),
                "max_iterations": meta("max_iterations"),
                "params": plan.meta.get("params").cloned().unwrap_or_else(|| json!({})),
                "source": meta("source"),
                "created_at": meta("created_at"),
                "updated_at": meta("updated_at"),
            },
            "roles": roles,
            "steps": steps,
            "state": {
                "status": status,
                "current_task_id": state.get("current_task_id").cloned().filter(|c| c.as_u64().is_some_and(|c| ids.contains(&(c as u32)))).or(running.map(Json::from)).unwrap_or(Json::Null),
                "revision": state.get("revision").cloned().unwrap_or_else(|| 0.into()),
                "iteration_count": state.get("iteration_count").cloned().unwrap_or_else(|| 0.into()),
            },
            "tasks": tasks,
        }))
    }
}
