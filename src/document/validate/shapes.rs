//! The other shapes a plan document may have: the Plan Tool's plan instance,
//! the steps system's steps plan, Plan-Act's plan and planner output, task-master's
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

mod peers;
mod seeds;
use crate::diagnostic::{Code, Diagnostic};
use crate::document::statuses::*;
use crate::document::FORMAT;
use crate::span::Span;
use crate::suggest;

/// Which format a JSON plan is in (see [`detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// `planc/1`, the PlanManager API or the planManager: a `tasks` list of seed task objects.
    Planc,
    /// The Plan Tool's `PlanInstance`: `steps` holding `tasks`.
    PlanTool,
    /// The steps system: `{id, goal, status, steps, current_step_index, iteration_count}`.
    Steps,
    /// Plan-Act: `{title, steps, language}` (steps may be bare strings).
    PlanAct,
    /// task-master: `{tasks}` with `title`s, or tagged `{"master": {tasks}}`.
    TaskMaster,
    /// OpenManus: `{plan_id, title, steps: [text], step_statuses, step_notes}`.
    OpenManus,
    /// Codex: `{explanation?, plan: [{step, status}]}`.
    Codex,
}

/// Looks at the top-level keys only: the first rule that matches decides.
pub(super) fn detect(root: &Object<'_>) -> Shape {
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
        root: &Object<'_>,
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
        let before = self.diagnostics.len();
        let finished = self.finish(root, plan, fallback_id);
        if matches!(shape, Shape::TaskMaster | Shape::OpenManus | Shape::Codex) {
            // A peer's file is the peer's to keep (its own tools and models
            // write it): a dependency implied by another is harmless there,
            // and a warning would fail `--deny warnings` on every real
            // task-master file (docs/interop.md).
            let mut at = 0;
            self.diagnostics.retain(|d| {
                at += 1;
                at <= before || d.code != Code::RedundantDependency
            });
        }
        finished
    }

    /// A string member, or `None` (wrong types reported).
    fn text(&mut self, object: &Object<'_>, field: &str, what: &str) -> Option<String> {
        self.string(object, field, what, false)
    }

    /// A status spelt as `table` says, as the planc status it stands for.
    fn peer_status(
        &mut self,
        object: &Object<'_>,
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
                let names = peer_statuses(table);
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
    fn extension(&mut self, object: &Object<'_>) -> Map<String, Json> {
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

    /// Settles ids and references, runs the cross-task checks, and writes `planc/1`.
    fn finish(&mut self, root: &Object<'_>, mut plan: Plan, fallback_id: &str) -> Option<Json> {
        settle_ids(&mut plan.tasks);
        let (infos, resolved) = self.resolve_dependencies(&plan.tasks);
        self.cross_task_with(&infos);
        let ids: HashSet<u32> = infos.iter().map(|t| t.id).collect();
        let extension = fill_from_extension(&mut plan);
        let steps = settled_steps(&mut plan, &extension, &ids);
        let written = written_tasks(std::mem::take(&mut plan.tasks), resolved);
        let roles = plan.roles.take().unwrap_or_else(|| {
            Json::Array(
                written
                    .assignees
                    .iter()
                    .map(|a| json!({"id": a, "description": null}))
                    .collect(),
            )
        });
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
        Some(json!({
            "format": FORMAT,
            "meta": plan_meta(&plan.meta, goal, fallback_id),
            "roles": roles,
            "steps": steps,
            "state": plan_state(&plan.state, &written, &ids),
            "tasks": written.tasks,
        }))
    }

    /// Each task's dependencies as ids (a key is looked up among the ids and
    /// aliases; a task with none listed waits for the one before), for the
    /// cross-task checks and as written.
    fn resolve_dependencies(&mut self, tasks: &[Draft]) -> (Vec<TaskInfo>, Vec<Vec<u32>>) {
        let aliases = aliases(tasks);
        let mut infos = Vec::new();
        let mut previous: Option<u32> = None;
        let mut resolved: Vec<Vec<u32>> = Vec::new();
        for draft in tasks {
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
                deps,
            });
        }
        (infos, resolved)
    }
}

/// Ids: the shape's or the `planc` object's; the others count on from the largest.
fn settle_ids(tasks: &mut [Draft]) {
    let mut used: HashSet<u32> = tasks.iter().filter_map(|t| t.id.map(|i| i.0)).collect();
    let mut next = used.iter().max().copied().unwrap_or(0);
    for draft in tasks {
        if draft.id.is_none() {
            next += 1;
            while used.contains(&next) {
                next += 1;
            }
            used.insert(next);
            draft.id = Some((next, draft.at));
        }
    }
}

/// The names a dependency may use for a task: its aliases and its key, the
/// first task to claim a name keeping it.
fn aliases(tasks: &[Draft]) -> HashMap<&str, u32> {
    let mut aliases: HashMap<&str, u32> = HashMap::new();
    for draft in tasks {
        let id = draft.id.expect("settled").0;
        for alias in &draft.aliases {
            aliases.entry(alias.as_str()).or_insert(id);
        }
        if let Some(Json::String(key)) = draft.fields.get("key") {
            aliases.entry(key.as_str()).or_insert(id);
        }
    }
    aliases
}

/// The plan's `planc` object fills what the shape has no place for: meta
/// and state fields, the roles. The object, for its steps.
fn fill_from_extension(plan: &mut Plan) -> Map<String, Json> {
    let extension = std::mem::take(&mut plan.extension);
    if let Some(Json::Object(meta)) = extension.get("meta") {
        for (field, value) in meta {
            plan.meta
                .entry(field.clone())
                .or_insert_with(|| value.clone());
        }
    }
    if let Some(Json::Object(state)) = extension.get("state") {
        for (field, value) in state {
            plan.state
                .entry(field.clone())
                .or_insert_with(|| value.clone());
        }
    }
    if let Some(roles) = extension.get("roles") {
        plan.roles = Some(roles.clone());
    }
    extension
}

/// The shape's steps with their tasks' settled ids; a shape without steps
/// takes the `planc` object's, less the tasks that are gone.
fn settled_steps(plan: &mut Plan, extension: &Map<String, Json>, ids: &HashSet<u32>) -> Vec<Json> {
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
    if let Some(Json::Array(extension_steps)) = extension.get("steps") {
        if steps.is_empty() {
            for step in extension_steps {
                let mut step = step.clone();
                if let Some(Json::Array(tasks)) = step.get_mut("tasks") {
                    tasks.retain(|t| t.as_u64().is_some_and(|t| ids.contains(&(t as u32))));
                }
                steps.push(step);
            }
        }
    }
    steps
}

/// The tasks as `planc/1` writes them, and what the plan learns from them.
struct WrittenTasks {
    tasks: Vec<Json>,
    /// Every assignee, in the order first named: the roles when the plan
    /// declares none.
    assignees: Vec<String>,
    /// The first task in progress: the current task when the plan names none.
    running: Option<u32>,
}

/// Writes each task with its resolved dependencies.
fn written_tasks(drafts: Vec<Draft>, resolved: Vec<Vec<u32>>) -> WrittenTasks {
    let mut written = WrittenTasks {
        tasks: Vec::new(),
        assignees: Vec::new(),
        running: None,
    };
    for (draft, deps) in drafts.into_iter().zip(resolved) {
        let id = draft.id.expect("settled").0;
        let task = task_json(id, draft.fields, deps);
        if task["status"] == "in_progress" && written.running.is_none() {
            written.running = Some(id);
        }
        if let Some(a) = task["assignee"].as_str() {
            if !written.assignees.iter().any(|known| known == a) {
                written.assignees.push(a.to_owned());
            }
        }
        written.tasks.push(task);
    }
    written
}

/// One task of `planc/1` from a draft's fields: every field in its place,
/// the ones the format has no place for kept in `extra`.
fn task_json(id: u32, mut f: Map<String, Json>, deps: Vec<u32>) -> Json {
    let status = f
        .remove("status")
        .as_ref()
        .and_then(Json::as_str)
        .unwrap_or("pending")
        .to_owned();
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
            .unwrap_or_else(|| json!({"max": null, "count": 0})),
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
    Json::Object(task)
}

/// The plan's `meta`: its id (else `fallback_id`), its goal, and null or the
/// default for each field the shape left out.
fn plan_meta(meta: &Map<String, Json>, goal: Json, fallback_id: &str) -> Json {
    let field = |name: &str| meta.get(name).cloned().unwrap_or(Json::Null);
    let id = meta
        .get("id")
        .cloned()
        .filter(|i| i.as_str().is_some_and(|s| !s.is_empty()))
        .unwrap_or_else(|| fallback_id.into());
    json!({
        "id": id,
        "title": field("title"),
        "goal": goal,
        "language": meta.get("language").cloned().unwrap_or_else(|| "en".into()),
        "max_iterations": field("max_iterations"),
        "transition_rounds": field("transition_rounds"),
        "fallback_rounds": field("fallback_rounds"),
        "params": meta.get("params").cloned().unwrap_or_else(|| json!({})),
        "source": field("source"),
        "created_at": field("created_at"),
        "updated_at": field("updated_at"),
    })
}

/// The plan's `state`: what the shape says, where it names tasks that
/// exist; else what the tasks imply (running once any has started, the
/// first task in progress current).
fn plan_state(state: &Map<String, Json>, written: &WrittenTasks, ids: &HashSet<u32>) -> Json {
    let known = |id: Option<u64>| id.is_some_and(|id| ids.contains(&(id as u32)));
    let any_started = written.tasks.iter().any(|t| t["status"] != "pending");
    let status = state
        .get("status")
        .cloned()
        .unwrap_or_else(|| if any_started { "running" } else { "idle" }.into());
    let current = state
        .get("current_task_id")
        .cloned()
        .filter(|c| known(c.as_u64()))
        .or(written.running.map(Json::from))
        .unwrap_or(Json::Null);
    let step_rounds = state
        .get("step_rounds")
        .cloned()
        .filter(|r| {
            r.as_array().is_some_and(|r| {
                r.iter()
                    .all(|e| known(e["task_id"].as_u64()) && e["rounds"].is_u64())
            })
        })
        .unwrap_or_else(|| json!([]));
    json!({
        "status": status,
        "current_task_id": current,
        "revision": state.get("revision").cloned().unwrap_or_else(|| 0.into()),
        "iteration_count": state.get("iteration_count").cloned().unwrap_or_else(|| 0.into()),
        "step_rounds": step_rounds,
    })
}
