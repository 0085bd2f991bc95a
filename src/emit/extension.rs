//! The `planc` objects of the seed and peer formats: what a format has no
//! place for (docs/interop.md), written straight from the document.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::document::statuses::{peer_status, StatusTable};
use crate::document::{Holder, Meta, PlanDocument, Priority, Retry, TaskDoc, TaskStatus};

/// A task's planc fields other than `held` (those the format writes
/// itself), leaving out what is null or a default. The status is kept when
/// the format would read it back as another.
#[derive(Clone, Copy)]
pub(super) struct TaskExtension<'a> {
    task: &'a TaskDoc,
    held: &'a [&'a str],
    table: StatusTable,
    /// The key is left out (a task-master subtask's key is its place).
    keyless: bool,
    /// `attachments` is left out of `extra` (Plan-Act's steps write it).
    attachments_held: bool,
    /// `description` and `priority` are written null when the task has
    /// none, so task-master's stand-ins read back as absent.
    stand_ins: bool,
}

/// One member of a [`TaskExtension`].
enum Field<'a> {
    Id(u32),
    Text(&'a str),
    Status(TaskStatus),
    Ids(&'a [u32]),
    True,
    Retry(&'a Retry),
    Priority(Priority),
    /// A task's `extra`, and whether its `attachments` are held.
    Extra(&'a Map<String, Value>, bool),
    Holder(&'a Holder),
    Null,
}

impl<'a> TaskExtension<'a> {
    /// The planc object of `task` in the format whose statuses are `table`
    /// and which writes the `held` fields itself.
    pub(super) fn new(task: &'a TaskDoc, held: &'a [&'a str], table: StatusTable) -> Self {
        TaskExtension {
            task,
            held,
            table,
            keyless: false,
            attachments_held: false,
            stand_ins: false,
        }
    }

    /// Without the task's key.
    pub(super) fn keyless(self) -> Self {
        TaskExtension {
            keyless: true,
            ..self
        }
    }

    /// Without `attachments` in `extra`.
    pub(super) fn attachments_held(self) -> Self {
        TaskExtension {
            attachments_held: true,
            ..self
        }
    }

    /// With task-master's stand-ins marked.
    pub(super) fn stand_ins(self) -> Self {
        TaskExtension {
            stand_ins: true,
            ..self
        }
    }

    /// Whether there is nothing to write.
    pub(super) fn is_empty(&self) -> bool {
        self.fields().next().is_none()
    }

    /// Whether the format reads the task's status back as the same one.
    fn lossless(&self) -> bool {
        let status = self.task.status.as_str();
        peer_status(self.table, status)
            .and_then(|peer| self.table.iter().find(|(p, _)| *p == peer))
            .is_some_and(|(_, back)| *back == status)
    }

    /// The members, in the order of the task's fields, then the stand-ins.
    fn fields(&self) -> impl Iterator<Item = (&'static str, Field<'a>)> + '_ {
        let t = self.task;
        let text = |value: &'a Option<String>| value.as_deref().map(Field::Text);
        let key = if self.keyless { None } else { text(&t.key) };
        let extra = extra_members(&t.extra, self.attachments_held)
            .next()
            .is_some()
            .then_some(Field::Extra(&t.extra, self.attachments_held));
        let members = [
            ("id", Some(Field::Id(t.id))),
            ("name", Some(Field::Text(&t.name))),
            (
                "status",
                (!self.lossless()).then_some(Field::Status(t.status)),
            ),
            ("dependencies", Some(Field::Ids(&t.dependencies))),
            ("reasoning", text(&t.reasoning)),
            ("result", text(&t.result)),
            ("key", key),
            ("step", text(&t.step)),
            ("assignee", text(&t.assignee)),
            ("description", text(&t.description)),
            ("optional", t.optional.then_some(Field::True)),
            (
                "retry",
                (t.retry != Retry::default()).then_some(Field::Retry(&t.retry)),
            ),
            ("priority", t.priority.map(Field::Priority)),
            ("extra", extra),
            ("holder", t.holder.as_deref().map(Field::Holder)),
        ];
        let stand_ins = [
            ("description", t.description.is_none()),
            ("priority", t.priority.is_none()),
        ]
        .map(|(field, missing)| (field, (self.stand_ins && missing).then_some(Field::Null)));
        members
            .into_iter()
            // The status is kept or not by the table alone.
            .filter(|(field, _)| *field == "status" || !self.held.contains(field))
            .chain(stand_ins)
            .filter_map(|(field, value)| Some((field, value?)))
    }
}

impl Serialize for TaskExtension<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.fields())
    }
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Id(id) => id.serialize(serializer),
            Field::Text(text) => text.serialize(serializer),
            Field::Status(status) => status.serialize(serializer),
            Field::Ids(ids) => ids.serialize(serializer),
            Field::True => true.serialize(serializer),
            Field::Retry(retry) => retry.serialize(serializer),
            Field::Priority(priority) => priority.serialize(serializer),
            Field::Extra(extra, attachments_held) => {
                serializer.collect_map(extra_members(extra, *attachments_held))
            }
            Field::Holder(holder) => holder.serialize(serializer),
            Field::Null => serializer.serialize_unit(),
        }
    }
}

/// The members of a task's `extra`, without `attachments` if it is held.
/// The exports have always written them so: the last member takes the
/// place of `attachments` (a swap removal), and the others keep theirs.
fn extra_members(
    extra: &Map<String, Value>,
    attachments_held: bool,
) -> impl Iterator<Item = (&String, &Value)> {
    let held = extra
        .keys()
        .position(|k| k == "attachments")
        .filter(|_| attachments_held);
    let count = extra.len();
    let last = extra.iter().next_back();
    extra
        .iter()
        .enumerate()
        .filter_map(move |(index, member)| match held {
            None => Some(member),
            Some(h) if index == h => last.filter(|_| h + 1 < count),
            Some(_) if index + 1 == count => None,
            Some(_) => Some(member),
        })
}

/// The plan's planc fields other than the `held` meta fields, and, for
/// OpenManus, its tasks' planc objects.
pub(super) struct PlanExtension<'a, T = ()> {
    document: &'a PlanDocument,
    held: &'a [&'a str],
    tasks: Option<T>,
}

impl<'a> PlanExtension<'a> {
    /// The plan's planc object, without tasks.
    pub(super) fn new(document: &'a PlanDocument, held: &'a [&'a str]) -> Self {
        PlanExtension {
            document,
            held,
            tasks: None,
        }
    }
}

impl<'a, T: Serialize> PlanExtension<'a, T> {
    /// With `tasks` last.
    pub(super) fn with_tasks(document: &'a PlanDocument, held: &'a [&'a str], tasks: T) -> Self {
        PlanExtension {
            document,
            held,
            tasks: Some(tasks),
        }
    }
}

impl<T: Serialize> Serialize for PlanExtension<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let document = self.document;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(
            "meta",
            &MetaExtension {
                meta: &document.meta,
                held: self.held,
            },
        )?;
        if !document.roles.is_empty() {
            map.serialize_entry("roles", &document.roles)?;
        }
        if !document.steps.is_empty() {
            map.serialize_entry("steps", &document.steps)?;
        }
        map.serialize_entry("state", &document.state)?;
        if let Some(tasks) = &self.tasks {
            map.serialize_entry("tasks", tasks)?;
        }
        map.end()
    }
}

/// The meta fields other than `held`, leaving out what is null and the
/// parameters when there are none.
struct MetaExtension<'a> {
    meta: &'a Meta,
    held: &'a [&'a str],
}

impl Serialize for MetaExtension<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let m = self.meta;
        let mut map = serializer.serialize_map(None)?;
        macro_rules! member {
            ($field:literal, $value:expr) => {
                if !self.held.contains(&$field) {
                    if let Some(value) = $value {
                        map.serialize_entry($field, &value)?;
                    }
                }
            };
        }
        member!("id", Some(&m.id));
        member!("title", m.title.as_ref());
        member!("goal", Some(&m.goal));
        member!("language", Some(&m.language));
        member!("max_iterations", m.max_iterations);
        member!("transition_rounds", m.transition_rounds);
        member!("fallback_rounds", m.fallback_rounds);
        member!("params", (!m.params.is_empty()).then_some(&m.params));
        member!("source", m.source.as_ref());
        member!("created_at", m.created_at.as_ref());
        member!("updated_at", m.updated_at.as_ref());
        member!("retry", m.retry);
        map.end()
    }
}
