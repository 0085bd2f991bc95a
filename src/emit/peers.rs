//! The peers' formats: task-master's `tasks.json`, an OpenManus planning
//! plan, and Codex's `update_plan` arguments (docs/interop.md).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use crate::document::agent_tag::{agent_prefix, step_agent};
use crate::document::statuses::{
    peer_status, StatusTable, CODEX_STATUSES, OPENMANUS_STATUSES, TASKMASTER_STATUSES,
};
use crate::document::{json_text, PlanDocument, TaskDoc, TaskStatus};

use super::extension::{PlanExtension, TaskExtension};
use super::Each;

/// The status `table`'s format writes for a task.
fn status(table: StatusTable, task: &TaskDoc) -> &'static str {
    peer_status(table, task.status.as_str()).unwrap_or("pending")
}

/// task-master's `tasks.json`, the tasks under `tag`. A task whose key is
/// `P.S` (P a task's id, S a number) is subtask S of task P.
pub(super) fn taskmaster(document: &PlanDocument, tag: &str) -> String {
    let mut tasks = TaskMaster {
        by_id: document.tasks.iter().map(|t| (t.id, t)).collect(),
        subtasks: HashMap::new(),
    };
    for t in &document.tasks {
        if let Some((p, _)) = tasks.parent_of(t) {
            tasks.subtasks.entry(p).or_default().push(t);
        }
    }
    let meta = &document.meta;
    let body = TaggedTasks {
        tasks: Each(|| {
            document
                .tasks
                .iter()
                .filter(|t| tasks.parent_of(t).is_none())
                .map(|t| TaskMasterTask {
                    tasks: &tasks,
                    task: t,
                    parent: None,
                })
        }),
        metadata: Metadata {
            created: meta.created_at.as_deref(),
            updated: meta.updated_at.as_deref().or(meta.created_at.as_deref()),
            description: &meta.goal,
        },
        planc: PlanExtension::new(document, &["goal", "created_at", "updated_at"]),
    };
    json_text(&BTreeMap::from([(tag, body)]))
}

/// What task-master keeps under a tag.
#[derive(Serialize)]
struct TaggedTasks<'a, T> {
    tasks: T,
    metadata: Metadata<'a>,
    planc: PlanExtension<'a>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<&'a str>,
    description: &'a str,
}

/// The tasks by id, and the subtasks of each task in document order.
struct TaskMaster<'a> {
    by_id: HashMap<u32, &'a TaskDoc>,
    subtasks: HashMap<u32, Vec<&'a TaskDoc>>,
}

impl TaskMaster<'_> {
    /// The task and the number a subtask has under it.
    fn parent_of(&self, task: &TaskDoc) -> Option<(u32, u32)> {
        let (p, s) = task.key.as_deref()?.split_once('.')?;
        let (p, s) = (p.parse::<u32>().ok()?, s.parse::<u32>().ok()?);
        self.by_id.contains_key(&p).then_some((p, s))
    }

    /// How a task-master task names the task `id`: a number for a task, for
    /// a sibling subtask of `parent` its number, else `"P.S"` (or `"N"` from
    /// a subtask).
    fn reference(&self, id: u32, parent: Option<u32>) -> Reference {
        match self.by_id.get(&id).and_then(|t| self.parent_of(t)) {
            Some((p, s)) if Some(p) == parent => Reference::Number(s),
            Some((p, s)) => Reference::Subtask(p, s),
            None if parent.is_some() => Reference::Text(id),
            None => Reference::Number(id),
        }
    }
}

/// A dependency as task-master writes it.
enum Reference {
    Number(u32),
    /// `"P.S"`
    Subtask(u32, u32),
    /// `"N"`
    Text(u32),
}

impl Serialize for Reference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Reference::Number(n) => serializer.serialize_u32(n),
            Reference::Subtask(p, s) => serializer.collect_str(&format_args!("{p}.{s}")),
            Reference::Text(n) => serializer.collect_str(&n),
        }
    }
}

/// The members task-master's tasks always have; a task's `extra` cannot
/// take their place.
const TASKMASTER_MEMBERS: [&str; 8] = [
    "id",
    "title",
    "description",
    "status",
    "dependencies",
    "priority",
    "details",
    "testStrategy",
];

/// A task-master task, or a subtask of the task `parent`.
struct TaskMasterTask<'t, 'a> {
    tasks: &'t TaskMaster<'a>,
    task: &'a TaskDoc,
    parent: Option<u32>,
}

impl<'t, 'a> TaskMasterTask<'t, 'a> {
    /// A task's subtasks; `None` for a subtask (task-master nests one level).
    fn children(&self) -> Option<&'t [&'a TaskDoc]> {
        match self.parent {
            None => Some(
                self.tasks
                    .subtasks
                    .get(&self.task.id)
                    .map(Vec::as_slice)
                    .unwrap_or_default(),
            ),
            Some(_) => None,
        }
    }

    /// task-master's status: the one `extra` keeps when it still means the
    /// task's planc status (`review`, `deferred`, `blocked`), else planc's.
    fn status(&self) -> &'a str {
        let t = self.task;
        let own = t.extra.get("status").and_then(Value::as_str).filter(|s| {
            TASKMASTER_STATUSES
                .iter()
                .any(|(peer, planc)| peer == s && *planc == t.status.as_str())
        });
        own.unwrap_or_else(|| status(TASKMASTER_STATUSES, t))
    }

    /// The `planc` object: what task-master's members cannot hold (`None`
    /// when there is nothing).
    fn extension(&self) -> Option<TaskExtension<'a>> {
        let held: &'static [&'static str] = match self.parent {
            // A subtask's key is its place; its planc id is not.
            Some(_) => &["name", "description", "dependencies", "priority", "extra"],
            None => &[
                "id",
                "name",
                "description",
                "dependencies",
                "priority",
                "extra",
            ],
        };
        let mut extension = TaskExtension::new(self.task, held, TASKMASTER_STATUSES).stand_ins();
        if self.parent.is_some() {
            extension = extension.keyless();
        }
        (!extension.is_empty()).then_some(extension)
    }
}

impl Serialize for TaskMasterTask<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.task;
        let tasks = self.tasks;
        let children = self.children();
        let mut map = serializer.serialize_map(None)?;
        match self.parent {
            None => map.serialize_entry("id", &t.id)?,
            Some(_) => {
                let (_, number) = tasks.parent_of(t).unwrap_or_default();
                map.serialize_entry("id", &number)?;
            }
        }
        map.serialize_entry("title", &t.name)?;
        // task-master requires a description: without one, the reasoning or
        // the title stands in, and the `planc` object says there was none.
        let description = t
            .description
            .as_ref()
            .or(t.reasoning.as_ref())
            .unwrap_or(&t.name);
        map.serialize_entry("description", description)?;
        map.serialize_entry("status", self.status())?;
        map.serialize_entry(
            "dependencies",
            &Each(|| {
                t.dependencies
                    .iter()
                    // A task's own subtasks are not its dependencies.
                    .filter(|d| children.is_none_or(|c| c.iter().all(|c| c.id != **d)))
                    .map(|d| tasks.reference(*d, self.parent))
            }),
        )?;
        match self.parent {
            None => {
                map.serialize_entry("priority", t.priority.map_or("medium", |p| p.as_str()))?;
            }
            // A subtask without a priority has its parent's (task-master's
            // `next`), and planc reads it so: one the same as the parent's
            // need not be written.
            Some(p) => {
                let parent = tasks.by_id.get(&p).and_then(|p| p.priority);
                if let Some(priority) = t.priority.filter(|own| Some(*own) != parent) {
                    map.serialize_entry("priority", priority.as_str())?;
                }
            }
        }
        for field in ["details", "testStrategy"] {
            match (t.extra.get(field), self.parent) {
                (Some(value), _) => map.serialize_entry(field, value)?,
                // task-master's tasks always have them; its subtasks need not.
                (None, None) => map.serialize_entry(field, "")?,
                (None, Some(_)) => {}
            }
        }
        let extension = self.extension();
        let subtasks = children.map(|children| {
            Each(move || {
                children.iter().map(move |c| TaskMasterTask {
                    tasks,
                    task: c,
                    parent: Some(t.id),
                })
            })
        });
        // The other formats' fields in their order; the `planc` object and
        // the subtasks take the place of an `extra` member of their name.
        for (field, value) in t.extra.iter() {
            if field == "status" || TASKMASTER_MEMBERS.contains(&field.as_str()) {
                continue;
            }
            match (field.as_str(), &extension, &subtasks) {
                ("planc", Some(extension), _) => map.serialize_entry(field, extension)?,
                ("subtasks", _, Some(subtasks)) => map.serialize_entry(field, subtasks)?,
                _ => map.serialize_entry(field, value)?,
            }
        }
        if let Some(extension) = extension.filter(|_| !t.extra.contains_key("planc")) {
            map.serialize_entry("planc", &extension)?;
        }
        if let Some(subtasks) = subtasks.filter(|_| !t.extra.contains_key("subtasks")) {
            map.serialize_entry("subtasks", &subtasks)?;
        }
        map.end()
    }
}

/// An OpenManus planning plan: steps in a line, statuses and notes beside them.
#[derive(Serialize)]
struct OpenManus<'a, Steps, Statuses, Notes, Tasks> {
    plan_id: &'a str,
    title: &'a str,
    steps: Steps,
    step_statuses: Statuses,
    step_notes: Notes,
    planc: PlanExtension<'a, Tasks>,
}

pub(super) fn openmanus(document: &PlanDocument, order: &[&TaskDoc]) -> String {
    json_text(&OpenManus {
        plan_id: &document.meta.id,
        title: document
            .meta
            .title
            .as_deref()
            .unwrap_or(&document.meta.goal),
        steps: Each(|| order.iter().map(|t| openmanus_step(t))),
        step_statuses: Each(|| order.iter().map(|t| status(OPENMANUS_STATUSES, t))),
        step_notes: Each(|| {
            order
                .iter()
                .map(|t| t.result.as_deref().unwrap_or_default())
        }),
        planc: PlanExtension::with_tasks(
            document,
            &["id", "title"],
            Each(|| {
                order.iter().map(|t| {
                    let held: &'static [&'static str] = match openmanus_prefix(t) {
                        Some(_) => &["name", "result", "assignee"],
                        None => &["name", "result"],
                    };
                    TaskExtension::new(t, held, OPENMANUS_STATUSES)
                })
            }),
        ),
    })
}

/// The `[AGENT]` prefix that gives an OpenManus step to the task's assignee:
/// when the assignee can be written so, and the name's own tag does not
/// already name it.
fn openmanus_prefix(task: &TaskDoc) -> Option<String> {
    let assignee = task.assignee.as_deref()?;
    let prefix = agent_prefix(assignee)?;
    match step_agent(&task.name) {
        // A tag inside the name names the agent already; a leading one would
        // be read as the prefix and taken off, so it gets one before it.
        Some((agent, None)) if agent == assignee => None,
        _ => Some(prefix),
    }
}

/// A task as an OpenManus step: its name, after its agent's tag.
fn openmanus_step(task: &TaskDoc) -> Cow<'_, str> {
    match openmanus_prefix(task) {
        Some(prefix) => Cow::Owned(prefix + &task.name),
        None => Cow::Borrowed(&task.name),
    }
}

/// Codex's `update_plan` arguments.
#[derive(Serialize)]
struct Codex<'a, T> {
    explanation: &'a str,
    plan: T,
}

#[derive(Serialize)]
struct CodexStep<'a> {
    step: &'a str,
    status: &'static str,
}

/// Codex's `update_plan` arguments. At most one step is `in_progress`: the
/// first running task in the line; other running tasks are written `pending`.
pub(super) fn codex(document: &PlanDocument, order: &[&TaskDoc]) -> String {
    let running = order
        .iter()
        .position(|t| t.status == TaskStatus::InProgress);
    json_text(&Codex {
        explanation: &document.meta.goal,
        plan: Each(|| {
            order.iter().enumerate().map(|(i, t)| CodexStep {
                step: &t.name,
                status: if t.status == TaskStatus::InProgress && Some(i) != running {
                    "pending"
                } else {
                    status(CODEX_STATUSES, t)
                },
            })
        }),
    })
}
