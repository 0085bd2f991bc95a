//! The peers: task-master's `tasks.json`, an OpenManus planning plan and
//! Codex's `update_plan` arguments.

use jsonc_parser::ast::{Object, Value};
use serde_json::{Map, Value as Json};

use super::{extension_meta, has_goal, Draft, Plan, Ref};
use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::document::agent_tag::step_agent;
use crate::document::statuses::*;
use crate::document::validate::{get, span, Validator};
use crate::span::Span;

impl Validator {
    pub(super) fn taskmaster(
        &mut self,
        root: &Object<'_>,
        plan: &mut Plan,
        tag: Option<&str>,
    ) -> Option<()> {
        let (tag_name, list_holder) = if get(root, "tasks").is_some() {
            (None, root)
        } else {
            self.taskmaster_tag(root, tag)?
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
            let (id, priority) = self.taskmaster_subtask(task, None, plan);
            self.taskmaster_subtasks(task, parent, (id, priority), plan);
        }
        Some(())
    }

    /// The tag of a tagged `tasks.json` to read (`tag`, else `master`, else
    /// the only one), with its name; reported when the file has no such tag.
    fn taskmaster_tag<'r, 'a>(
        &mut self,
        root: &'r Object<'a>,
        tag: Option<&'r str>,
    ) -> Option<(Option<&'r str>, &'r Object<'a>)> {
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
        if found.is_none() {
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
                    "its tags are {}; planc reads the tag `--tag` names, else `master`, or the only tag of a file with one",
                    tags.iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
        Some((wanted, found?))
    }

    /// The subtasks of `task` (read as the task at `parent` in the plan, of
    /// id `id` and priority `priority`): tasks keyed `ID.N`, which the parent
    /// waits for.
    fn taskmaster_subtasks(
        &mut self,
        task: &Object<'_>,
        parent: usize,
        (id, priority): (Option<u32>, Option<&'static str>),
        plan: &mut Plan,
    ) {
        let subtasks = match get(task, "subtasks") {
            Some(Value::Array(subtasks)) => subtasks,
            None | Some(Value::NullKeyword(_)) => return,
            Some(other) => {
                self.type_error(other, "`subtasks`", "an array");
                return;
            }
        };
        for subtask in &subtasks.elements {
            let Value::Object(subtask) = subtask else {
                self.type_error(subtask, "a subtask", "an object");
                continue;
            };
            let at = span(subtask);
            let parent_of = Some((id.unwrap_or(0), priority));
            if let (Some(key), _) = self.taskmaster_subtask(subtask, parent_of, plan) {
                // The parent is done when its subtasks are: it waits for them.
                if let Some(deps) = plan.tasks[parent].deps.as_mut() {
                    deps.push((Ref::Key(format!("{}.{key}", id.unwrap_or(0))), at, false));
                }
            }
        }
    }

    /// One task-master task, or a subtask of `parent` (its id and priority,
    /// which a subtask without one has: task-master's `next` reads it so);
    /// returns its id and priority.
    fn taskmaster_subtask(
        &mut self,
        task: &Object<'_>,
        parent: Option<(u32, Option<&'static str>)>,
        plan: &mut Plan,
    ) -> (Option<u32>, Option<&'static str>) {
        let inherited = parent.and_then(|(_, priority)| priority);
        let parent = parent.map(|(id, _)| id);
        let mut draft = Draft::new(span(task));
        let id_value = get(task, "id");
        let id = self.taskmaster_id(task, id_value);
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
            if SET_ASIDE_STATUSES.contains(&raw.as_str()) {
                extra.insert("status".into(), raw.clone().into());
            }
        }
        let priority = self.task_priority(get(task, "priority")).or(inherited);
        if let Some(priority) = priority {
            draft.set("priority", priority);
        }
        draft.deps = Some(self.taskmaster_dependencies(get(task, "dependencies"), parent));
        self.taskmaster_extra(task, &mut extra);
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
        (id, priority)
    }

    /// A task-master id: a whole number from 1, or a string holding one.
    fn taskmaster_id(&mut self, task: &Object<'_>, id_value: Option<&Value<'_>>) -> Option<u32> {
        match id_value {
            Some(value @ Value::StringLit(s)) => match s.value.parse::<u32>() {
                Ok(i) if i > 0 => Some(i),
                _ => {
                    self.type_error(value, "a task's `id`", "a whole number from 1");
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
        }
    }

    /// A task-master task's `dependencies`: ids of tasks, or in a subtask of
    /// `parent` numbers of its sibling subtasks; a string is a task's key.
    fn taskmaster_dependencies(
        &mut self,
        value: Option<&Value<'_>>,
        parent: Option<u32>,
    ) -> Vec<(Ref, Span, bool)> {
        let mut deps = Vec::new();
        match value {
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
        deps
    }

    /// The fields of a task-master task planc has no place for, into `extra`.
    fn taskmaster_extra(&mut self, task: &Object<'_>, extra: &mut Map<String, Json>) {
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
    }

    /// The elements of the array `key` of `root` (none when it is missing;
    /// a type error, and none, when it is not an array).
    fn elements<'a>(&mut self, root: &'a Object<'_>, key: &str, what: &str) -> Vec<&'a Value<'a>> {
        match get(root, key) {
            Some(Value::Array(a)) => a.elements.iter().collect(),
            Some(other) => {
                self.type_error(other, what, "an array");
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    pub(super) fn openmanus(&mut self, root: &Object<'_>, plan: &mut Plan) {
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
        let statuses = self.elements(root, "step_statuses", "`step_statuses`");
        let notes = self.elements(root, "step_notes", "`step_notes`");
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
            // OpenManus gives the step to the agent its `[AGENT]` tag names.
            if let Some((agent, rest)) = step_agent(&text.value) {
                draft.set("assignee", agent);
                if let Some(rest) = rest.filter(|r| !r.is_empty()) {
                    draft.set("name", rest.to_owned());
                }
            }
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

    pub(super) fn codex(&mut self, root: &Object<'_>, plan: &mut Plan) {
        let explanation = self.text(root, "explanation", "the plan");
        let goal = explanation.unwrap_or_else(|| "Carry out the plan's steps in order".to_owned());
        plan.meta.insert("goal".into(), goal.into());
        let Some(steps) = self.array(root, "plan", "the plan") else {
            return;
        };
        let mut running: Option<Span> = None;
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
                Some(value) => {
                    if let Some((status, _)) =
                        self.peer_status(step, "status", CODEX_STATUSES, "pending")
                    {
                        draft.set("status", status);
                        if status == "in_progress" {
                            self.codex_running(&mut running, span(value));
                        }
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

    /// Codex keeps at most one step `in_progress`: a warning at each step
    /// `in_progress` (its status at `at`) after the first (`running`, which
    /// the first sets).
    fn codex_running(&mut self, running: &mut Option<Span>, at: Span) {
        let Some(first) = *running else {
            *running = Some(at);
            return;
        };
        let mut warning = Diagnostic::new(
            Code::InvalidStatus,
            "a second step is `in_progress`: Codex keeps at most one",
        )
        .label(self.file, at, "also in progress")
        .label(self.file, first, "the first step in progress")
        .help(
            "Codex's `update_plan` wants at most one step `in_progress`; planc reads both as running",
        );
        warning.severity = Severity::Warning;
        self.diagnostics.push(warning);
    }
}
