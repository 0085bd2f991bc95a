//! The peers' formats: task-master's `tasks.json`, an OpenManus planning
//! plan, and Codex's `update_plan` arguments; and the `planc` objects that
//! carry what a format has no place for (docs/interop.md).

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::document::statuses::{
    peer_status, StatusTable, CODEX_STATUSES, OPENMANUS_STATUSES, TASKMASTER_STATUSES,
};
use crate::document::{PlanDocument, TaskDoc, TaskStatus};

/// A task's planc fields other than `held` (those the format writes
/// itself), leaving out what is null or a default; `None` when nothing is
/// left. The status is kept when the format would read it back as another.
pub(super) fn task_extension(task: &TaskDoc, held: &[&str], table: StatusTable) -> Option<Value> {
    let Ok(Value::Object(mut map)) = serde_json::to_value(task) else {
        return None;
    };
    let status = task.status.as_str();
    let lossless = peer_status(table, status)
        .and_then(|peer| table.iter().find(|(p, _)| *p == peer))
        .is_some_and(|(_, back)| *back == status);
    map.retain(|field, value| {
        if field == "status" {
            return !lossless;
        }
        !held.contains(&field.as_str())
            && !value.is_null()
            && *value != Value::Bool(false)
            && *value != json!({"max": null, "count": 0})
    });
    (!map.is_empty()).then_some(Value::Object(map))
}

/// The plan's planc fields other than the `held` meta fields.
pub(super) fn plan_extension(document: &PlanDocument, held: &[&str]) -> Value {
    let mut out = Map::new();
    if let Ok(Value::Object(mut meta)) = serde_json::to_value(&document.meta) {
        meta.retain(|field, value| {
            !held.contains(&field.as_str())
                && !value.is_null()
                && value.as_object().is_none_or(|o| !o.is_empty())
        });
        out.insert("meta".into(), Value::Object(meta));
    }
    if !document.roles.is_empty() {
        out.insert("roles".into(), json!(document.roles));
    }
    if !document.steps.is_empty() {
        out.insert("steps".into(), json!(document.steps));
    }
    out.insert("state".into(), json!(document.state));
    Value::Object(out)
}

/// The status `table`'s format writes for a task.
fn status(table: StatusTable, task: &TaskDoc) -> &'static str {
    peer_status(table, task.status.as_str()).unwrap_or("pending")
}

/// task-master's `tasks.json`, the tasks under `tag`. A task whose key is
/// `P.S` (P a task's id, S a number) is subtask S of task P.
pub(super) fn taskmaster(document: &PlanDocument, tag: &str) -> Value {
    let by_id: HashMap<u32, &TaskDoc> = document.tasks.iter().map(|t| (t.id, t)).collect();
    let parent_of = |t: &TaskDoc| -> Option<(u32, u32)> {
        let (p, s) = t.key.as_deref()?.split_once('.')?;
        let (p, s) = (p.parse::<u32>().ok()?, s.parse::<u32>().ok()?);
        by_id.contains_key(&p).then_some((p, s))
    };
    let mut subtasks: HashMap<u32, Vec<&TaskDoc>> = HashMap::new();
    for t in &document.tasks {
        if let Some((p, _)) = parent_of(t) {
            subtasks.entry(p).or_default().push(t);
        }
    }
    let fields = |t: &TaskDoc, id: Value, dependencies: Vec<Value>| {
        let mut object = Map::new();
        object.insert("id".into(), id);
        object.insert("title".into(), json!(t.name));
        // task-master requires a description: without one, the reasoning or
        // the title stands in, and the `planc` object says there was none.
        let description = t
            .description
            .as_ref()
            .or(t.reasoning.as_ref())
            .unwrap_or(&t.name);
        object.insert("description".into(), json!(description));
        let own = t.extra.get("status").and_then(Value::as_str).filter(|s| {
            TASKMASTER_STATUSES
                .iter()
                .any(|(peer, planc)| peer == s && *planc == t.status.as_str())
        });
        let written = own
            .map(str::to_owned)
            .unwrap_or_else(|| status(TASKMASTER_STATUSES, t).to_owned());
        object.insert("status".into(), json!(written));
        object.insert("dependencies".into(), json!(dependencies));
        object.insert(
            "priority".into(),
            json!(t.priority.map_or("medium", |p| p.as_str())),
        );
        for field in ["details", "testStrategy"] {
            object.insert(
                field.into(),
                t.extra.get(field).cloned().unwrap_or_else(|| json!("")),
            );
        }
        for (field, value) in &t.extra {
            if field != "status" {
                object.entry(field.clone()).or_insert_with(|| value.clone());
            }
        }
        let mut clone = t.clone();
        let held: &[&str] = if parent_of(t).is_some() {
            // A subtask's key is its place; its planc id is not.
            clone.key = None;
            &["name", "description", "dependencies", "priority", "extra"]
        } else {
            &[
                "id",
                "name",
                "description",
                "dependencies",
                "priority",
                "extra",
            ]
        };
        let mut ext = task_extension(&clone, held, TASKMASTER_STATUSES);
        // Stand-ins for what task-master requires and the task lacks.
        if t.description.is_none() {
            ext.get_or_insert_with(|| json!({}))["description"] = Value::Null;
        }
        if t.priority.is_none() {
            ext.get_or_insert_with(|| json!({}))["priority"] = Value::Null;
        }
        if let Some(ext) = ext {
            object.insert("planc".into(), ext);
        }
        object
    };
    let tasks: Vec<Value> = document
        .tasks
        .iter()
        .filter(|t| parent_of(t).is_none())
        .map(|t| {
            let children = subtasks.get(&t.id).map(Vec::as_slice).unwrap_or_default();
            let child_ids: Vec<u32> = children.iter().map(|c| c.id).collect();
            let deps = t
                .dependencies
                .iter()
                .filter(|d| !child_ids.contains(d))
                .map(|d| reference(*d, None, &by_id, &parent_of))
                .collect();
            let mut object = fields(t, json!(t.id), deps);
            let list: Vec<Value> = children
                .iter()
                .map(|c| {
                    let (_, s) = parent_of(c).expect("a subtask");
                    let deps = c
                        .dependencies
                        .iter()
                        .map(|d| reference(*d, Some(t.id), &by_id, &parent_of))
                        .collect();
                    Value::Object(fields(c, json!(s), deps))
                })
                .collect();
            object.insert("subtasks".into(), json!(list));
            Value::Object(object)
        })
        .collect();
    let mut metadata = Map::new();
    if let Some(created) = &document.meta.created_at {
        metadata.insert("created".into(), json!(created));
    }
    if let Some(updated) = document
        .meta
        .updated_at
        .as_ref()
        .or(document.meta.created_at.as_ref())
    {
        metadata.insert("updated".into(), json!(updated));
    }
    metadata.insert("description".into(), json!(document.meta.goal));
    json!({ tag: {
        "tasks": tasks,
        "metadata": metadata,
        "planc": plan_extension(document, &["goal", "created_at", "updated_at"]),
    }})
}

/// How a task-master task names the task `id`: a number for a task, for a
/// sibling subtask of `parent` its number, else `"P.S"` (or `"N"` from a subtask).
fn reference(
    id: u32,
    parent: Option<u32>,
    by_id: &HashMap<u32, &TaskDoc>,
    parent_of: &dyn Fn(&TaskDoc) -> Option<(u32, u32)>,
) -> Value {
    match by_id.get(&id).and_then(|t| parent_of(t)) {
        Some((p, s)) if Some(p) == parent => json!(s),
        Some((p, s)) => json!(format!("{p}.{s}")),
        None if parent.is_some() => json!(id.to_string()),
        None => json!(id),
    }
}

/// An OpenManus planning plan: steps in a line, statuses and notes beside them.
pub(super) fn openmanus(document: &PlanDocument, order: &[&TaskDoc]) -> Value {
    let mut plan = plan_extension(document, &["id", "title"]);
    let tasks: Vec<Value> = order
        .iter()
        .map(|t| {
            let mut ext = task_extension(t, &["name", "result"], OPENMANUS_STATUSES)
                .unwrap_or_else(|| json!({}));
            ext["id"] = json!(t.id);
            ext["dependencies"] = json!(t.dependencies);
            ext
        })
        .collect();
    plan["tasks"] = json!(tasks);
    json!({
        "plan_id": document.meta.id,
        "title": document.meta.title.clone().unwrap_or_else(|| document.meta.goal.clone()),
        "steps": order.iter().map(|t| &t.name).collect::<Vec<_>>(),
        "step_statuses": order.iter().map(|t| status(OPENMANUS_STATUSES, t)).collect::<Vec<_>>(),
        "step_notes": order.iter().map(|t| t.result.clone().unwrap_or_default()).collect::<Vec<_>>(),
        "planc": plan,
    })
}

/// Codex's `update_plan` arguments. At most one step is `in_progress`: the
/// first running task in the line; other running tasks are written `pending`.
pub(super) fn codex(document: &PlanDocument, order: &[&TaskDoc]) -> Value {
    let mut running = false;
    let plan: Vec<Value> = order
        .iter()
        .map(|t| {
            let mut written = status(CODEX_STATUSES, t);
            if t.status == TaskStatus::InProgress {
                if running {
                    written = "pending";
                }
                running = true;
            }
            json!({"step": t.name, "status": written})
        })
        .collect();
    json!({"explanation": document.meta.goal, "plan": plan})
}
