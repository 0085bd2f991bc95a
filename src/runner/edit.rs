//! Changes to the plan's shape: adding, updating and removing tasks, and
//! replanning. Each checks what it is given first, so a refused edit
//! changes nothing. An add (at the end, or after a task), a removal and an
//! update change the list in place (`edit_list.rs`, [`Runner::append`]):
//! the indexes follow and only the tasks they change are marked touched. A
//! replan (and a reply's chain of steps, [`Runner::add_chain`]) builds the
//! new list aside, re-indexes it (refusing cycles) and only then replaces
//! the old one: O(tasks + edges).

use std::collections::{HashMap, HashSet};

use serde_json::json;

use crate::document::{PlanDocument, Retry, TaskDoc, TaskStatus};

use super::apply::join;
use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind};
use super::index::Index;
use super::ops::{AddArgs, ReplanArgs, ReplanStep, TaskRef};
use super::order::Order;
use super::results::{Added, OpResult, Removed, Replanned, Updated};
use super::{Applied, Caller, Runner};

impl Runner {
    /// `addTask`: a new pending task, after `after_task_id` (dependents rewired) or at the end.
    pub(super) fn add_task(&mut self, args: &AddArgs) -> Result<Applied, OpError> {
        self.require_active()?;
        let name = non_empty(&args.name, "name")?;
        self.check_role(args.assignee.as_deref())?;
        let after = args
            .after_task_id
            .as_ref()
            .map(|t| self.find(t))
            .transpose()?;
        let id = self.next_id(1)?;
        let dependencies = match (&args.dependencies, after) {
            (Some(deps), _) => self.resolve_deps(deps, None)?,
            (None, Some(a)) => vec![self.task(a).id],
            (None, None) => Vec::new(),
        };
        let task = TaskDoc {
            reasoning: args.reasoning.clone(),
            step: after.and_then(|a| self.task(a).step.clone()),
            assignee: args.assignee.clone().filter(|a| !a.is_empty()),
            description: args.description.clone(),
            ..TaskDoc::pending(id, name, dependencies)
        };
        let rewired = match after {
            Some(a) if !self.may_close_cycle(a, &task.dependencies) => {
                self.insert_in_place(a, task)
            }
            Some(a) => {
                // A cycle perhaps: the whole check, and its error.
                let mut doc = self.doc.clone();
                let rewired = self.insert_after(&mut doc, a, task);
                self.replace(doc)?;
                rewired
            }
            None => {
                self.append(task)?;
                Vec::new()
            }
        };
        let i = self.index.position[&id];
        let mut message = format!("Task {id} added");
        if let Some(a) = args.after_task_id.as_ref() {
            message.push_str(&format!(" after task {a}"));
        }
        if !rewired.is_empty() {
            message.push_str(&format!("; task(s) {} now depend on it", join(&rewired)));
        }
        let mut events = vec![Event::task(EventKind::Added, id, message.clone())];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Added(Added {
                new_task: self.task(i).clone(),
                message,
                rewired_tasks: rewired,
            }),
            events,
        })
    }

    /// `addTask` of each of `names` in turn, each after the one before (the
    /// first after `previous`): what as many [`Runner::add_task`] calls
    /// would do, with one copy and one re-index of the plan, not one per
    /// task (a reply that declares thousands of steps stays linear). The
    /// plan's status is refreshed once, at the end.
    pub(super) fn add_chain(
        &mut self,
        names: &[String],
        previous: Option<u32>,
    ) -> Result<Vec<Applied>, OpError> {
        self.require_active()?;
        let first = self.next_id(names.len())?;
        if let Some(previous) = previous {
            self.find(&TaskRef::Id(previous))?;
        }
        let mut doc = self.doc.clone();
        doc.tasks.reserve(names.len());
        let mut dependency = previous;
        for (id, name) in (first..).zip(names) {
            let name = non_empty(name, "name")?;
            doc.tasks
                .push(TaskDoc::pending(id, name, dependency.into_iter().collect()));
            dependency = Some(id);
        }
        self.replace(doc)?;
        let mut applied: Vec<Applied> = (first..)
            .take(names.len())
            .map(|id| {
                let message = format!("Task {id} added");
                Applied {
                    events: vec![Event::task(EventKind::Added, id, message.clone())],
                    data: OpResult::Added(Added {
                        new_task: self.task(self.index.position[&id]).clone(),
                        message,
                        rewired_tasks: Vec::new(),
                    }),
                }
            })
            .collect();
        if let Some(last) = applied.last_mut() {
            last.events.extend(self.refresh_status());
        }
        Ok(applied)
    }

    /// Appends `task` (a new pending task, in no step, with a fresh id, no
    /// task depending on it): the indexes are extended in place, it takes
    /// an order key after the last, and only it is marked touched (the list
    /// changed shape), so a store writes its row, not every task's and not
    /// the steps. O(its dependencies).
    /// Refused (changing nothing) when a dependency is not in the plan.
    fn append(&mut self, task: TaskDoc) -> Result<(), OpError> {
        self.doc.tasks.push(task);
        if let Err(error) = self.index.appended(&self.doc.tasks) {
            self.doc.tasks.pop();
            return Err(error);
        }
        // The new id is the largest the plan has had: no other is kept.
        self.doc.state.max_task_id = None;
        self.order.push();
        self.touched
            .inserted(self.doc.tasks[self.doc.tasks.len() - 1].id);
        Ok(())
    }

    /// Inserts `task` right after the task at `a` (and in its step): the
    /// pending tasks that waited for it wait for the new task instead, as in
    /// the planManager. The ids of the tasks rewired.
    pub(super) fn insert_after(&self, doc: &mut PlanDocument, a: usize, task: TaskDoc) -> Vec<u32> {
        let (x, id) = (self.task(a).id, task.id);
        let mut rewired = Vec::new();
        for &d in &self.index.dependents[a] {
            let dependent = &mut doc.tasks[d];
            if dependent.status == TaskStatus::Pending {
                replace_dep(&mut dependent.dependencies, x, &[id]);
                rewired.push(dependent.id);
            }
        }
        rewired.sort_unstable();
        rewired.dedup();
        if let Some(step) = &task.step {
            if let Some(step) = doc.steps.iter_mut().find(|s| &s.id == step) {
                let at = step
                    .tasks
                    .iter()
                    .position(|&t| t == x)
                    .map_or(step.tasks.len(), |p| p + 1);
                step.tasks.insert(at, id);
            }
        }
        doc.tasks.insert(a + 1, task);
        rewired
    }

    /// `updateTask`: change a pending task's name, dependencies, reasoning, assignee or description.
    pub(super) fn update_task(
        &mut self,
        args: &super::UpdateArgs,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.find(&args.task_id)?;
        // Only pending tasks are edited, and those have no holder; another
        // agent's task says so first (TASK_HELD) rather than "not editable".
        self.check_holder(i, caller)?;
        self.require_editable(i, "updated")?;
        let updates = args.merged();
        if updates == Default::default() {
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "nothing to update: {}",
                    super::advice::Advice::NOTHING_TO_UPDATE.mcp
                ),
            ));
        }
        let id = self.task(i).id;
        let mut task = self.task(i).clone();
        if let Some(name) = &updates.name {
            task.name = non_empty(name, "name")?;
        }
        if let Some(deps) = &updates.dependencies {
            task.dependencies = self.resolve_deps(deps, Some(id))?;
        }
        if let Some(reasoning) = &updates.reasoning {
            task.reasoning = Some(reasoning.clone());
        }
        if let Some(assignee) = &updates.assignee {
            if assignee.is_empty() {
                task.assignee = None;
            } else {
                self.check_role(Some(assignee))?;
                task.assignee = Some(assignee.clone());
            }
        }
        if let Some(description) = &updates.description {
            task.description = Some(description.clone());
        }
        self.update_in_place(i, task)?;
        let message = format!("Task {id} updated successfully");
        let mut events = vec![Event::task(EventKind::Updated, id, message.clone())];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Updated(Updated {
                updated_task: self.task(i).clone(),
                message,
            }),
            events,
        })
    }

    /// `removeTask`: drop a pending task; its dependents take over its dependencies.
    pub(super) fn remove_task(
        &mut self,
        task: &TaskRef,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        self.require_active()?;
        let i = self.find(task)?;
        self.check_holder(i, caller)?;
        self.require_editable(i, "removed")?;
        let (removed, rewired) = self.remove_in_place(i);
        let message = format!("Task {} removed successfully", removed.id);
        let mut event = Event::task(EventKind::Removed, removed.id, message.clone());
        event.task = Some(Box::new(removed.clone()));
        let mut events = vec![event];
        events.extend(self.refresh_status());
        Ok(Applied {
            data: OpResult::Removed(Removed {
                task_id: removed.id,
                message,
                rewired_tasks: rewired,
            }),
            events,
        })
    }

    /// `replan` (Plan-Act): keep completed, skipped and in-progress tasks;
    /// replace the pending and failed ones with `steps`.
    pub(super) fn replan(&mut self, args: &ReplanArgs) -> Result<Applied, OpError> {
        self.require_active()?;
        let mut doc = self.doc.clone();
        let removed = keep_started(&mut doc);
        let running: Vec<u32> = doc
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::InProgress)
            .map(|t| t.id)
            .collect();
        // New ids come after every id the plan has had, so none is reused.
        let new = NewTasks::of(&doc, &args.steps, self.next_id(args.steps.len())?)?;
        for (n, step) in args.steps.iter().enumerate() {
            let id = new.first_id + n as u32;
            // Each step waits for the one before; the first for the tasks in progress.
            let chained = if n == 0 {
                running.clone()
            } else {
                vec![id - 1]
            };
            let task = self.replan_task(step, id, chained, &doc, &new)?;
            doc.tasks.push(task);
        }
        self.replace(doc)?;
        Ok(self.replanned(removed, new.ids()))
    }

    /// The task of one step of a replan: a name, or a task object whose
    /// dependencies name kept tasks or new ones.
    fn replan_task(
        &self,
        step: &ReplanStep,
        id: u32,
        chained: Vec<u32>,
        doc: &PlanDocument,
        new: &NewTasks,
    ) -> Result<TaskDoc, OpError> {
        Ok(match step {
            ReplanStep::Name(name) => {
                TaskDoc::pending(id, non_empty(name, "a step's name")?, chained)
            }
            ReplanStep::Task(t) => {
                let name = t.name.as_deref().or(t.description.as_deref()).unwrap_or("");
                self.check_role(t.assignee.as_deref())?;
                let dependencies = match &t.dependencies {
                    None => chained,
                    Some(deps) => deps
                        .iter()
                        .map(|d| new.resolve(d, doc, id))
                        .collect::<Result<Vec<u32>, OpError>>()?,
                };
                TaskDoc {
                    reasoning: t.reasoning.clone(),
                    key: t.key.clone(),
                    assignee: t.assignee.clone(),
                    description: t.description.clone().filter(|_| t.name.is_some()),
                    optional: t.optional,
                    retry: Retry {
                        max: t.retry,
                        count: 0,
                    },
                    ..TaskDoc::pending(id, non_empty(name, "a step's name")?, dependencies)
                }
            }
        })
    }

    /// What a replan did, once installed: the tasks kept, removed and added.
    fn replanned(&mut self, removed: Vec<u32>, added: Vec<u32>) -> Applied {
        let added_count = added.len();
        let kept = self.doc.tasks.len() - added_count;
        let message = format!(
            "Plan updated: kept {kept} task(s), replaced {} with {added_count} new task(s)",
            removed.len(),
        );
        let new_tasks: Vec<TaskDoc> = added
            .iter()
            .map(|id| self.task(self.index.position[id]).clone())
            .collect();
        let data = OpResult::Replanned(Replanned {
            message: message.clone(),
            kept_tasks: kept,
            removed_tasks: removed,
            new_tasks,
        });
        let mut events = vec![Event::plan(EventKind::Replanned, message)];
        events.extend(self.refresh_status());
        Applied { data, events }
    }

    /// Installs an edited document, re-indexed; refuses it (changing nothing) if it has a cycle.
    /// Marks touched only the tasks that differ when the list (each
    /// position's task id) and the steps stayed as they were (an update
    /// that would close a cycle: refused), else everything, the order keys
    /// as first written: a store then writes every task and the steps.
    pub(super) fn replace(&mut self, mut doc: PlanDocument) -> Result<(), OpError> {
        self.keep_highest_id(&mut doc);
        let index = Index::build(&doc)?;
        let (old, new) = (&self.doc, &doc);
        let same_list = old.tasks.len() == new.tasks.len()
            && old.steps == new.steps
            && old.tasks.iter().zip(&new.tasks).all(|(a, b)| a.id == b.id);
        if same_list {
            for (a, b) in old.tasks.iter().zip(&new.tasks) {
                if a != b {
                    self.touched.task(a.id);
                }
            }
        } else {
            self.touched.everything();
            self.order = Order::dense(doc.tasks.len());
        }
        self.doc = doc;
        self.index = index;
        Ok(())
    }

    /// The largest id the plan has had: in its tasks (kept by the index),
    /// or removed with a task (`state.max_task_id`). O(1).
    pub(super) fn highest_id(&self) -> u32 {
        let in_tasks = self.index.max_id;
        in_tasks.max(self.doc.state.max_task_id.unwrap_or(0))
    }

    /// Keeps in `doc` (this plan, edited) the largest id the plan has had,
    /// when no task of `doc` has it any more: ids are never reused.
    fn keep_highest_id(&self, doc: &mut PlanDocument) {
        let had = self.highest_id();
        let has = doc.tasks.iter().map(|t| t.id).max().unwrap_or(0);
        doc.state.max_task_id = (had > has).then_some(had);
    }

    /// One more than the largest id the plan has had, when `count` new ids fit after it.
    fn next_id(&self, count: usize) -> Result<u32, OpError> {
        let next = u64::from(self.highest_id()) + 1;
        if next + count as u64 > u64::from(u32::MAX) + 1 {
            return Err(OpError::overflow(
                "task id",
                u64::from(u32::MAX),
                "no task ids are left for new tasks",
            ));
        }
        Ok(next as u32)
    }

    fn require_editable(&self, i: usize, verb: &str) -> Result<(), OpError> {
        let t = self.task(i);
        if t.status == TaskStatus::Pending {
            return Ok(());
        }
        Err(OpError::new(
            ErrorCode::TaskNotEditable,
            format!(
                "Task {} is {}; only pending tasks can be {verb}",
                t.id,
                t.status.as_str()
            ),
        )
        .with(json!({"task_id": t.id, "status": t.status.as_str()})))
    }

    /// Task ids for a dependency list: each must name another task of the plan.
    fn resolve_deps(&self, deps: &[TaskRef], itself: Option<u32>) -> Result<Vec<u32>, OpError> {
        let mut ids = Vec::with_capacity(deps.len());
        for dep in deps {
            let id = self.find(dep).map(|i| self.task(i).id).map_err(|_| {
                OpError::new(
                    ErrorCode::InvalidDependency,
                    format!("dependency {dep} names no task"),
                )
                .with(json!({"dependency": dep}))
            })?;
            if Some(id) == itself {
                return Err(OpError::new(
                    ErrorCode::InvalidDependency,
                    format!("task {id} cannot depend on itself"),
                )
                .with(json!({"dependency": dep})));
            }
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    fn check_role(&self, assignee: Option<&str>) -> Result<(), OpError> {
        match assignee {
            Some(role)
                if !role.is_empty()
                    && !self.doc.roles.is_empty()
                    && !self.doc.roles.iter().any(|r| r.id == role) =>
            {
                let roles: Vec<&str> = self.doc.roles.iter().map(|r| r.id.as_str()).collect();
                Err(
                    OpError::new(ErrorCode::UnknownRole, format!("no role named `{role}`"))
                        .with(json!({"assignee": role, "roles": roles})),
                )
            }
            _ => Ok(()),
        }
    }
}

/// Keeps the completed, skipped and in-progress tasks of `doc`, and only
/// them in dependencies and steps; the ids of the tasks dropped.
fn keep_started(doc: &mut PlanDocument) -> Vec<u32> {
    let keep = |t: &TaskDoc| {
        matches!(
            t.status,
            TaskStatus::Completed | TaskStatus::Skipped | TaskStatus::InProgress
        )
    };
    let removed: Vec<u32> = doc
        .tasks
        .iter()
        .filter(|t| !keep(t))
        .map(|t| t.id)
        .collect();
    doc.tasks.retain(keep);
    let kept_ids: HashSet<u32> = doc.tasks.iter().map(|t| t.id).collect();
    for task in &mut doc.tasks {
        task.dependencies.retain(|d| kept_ids.contains(d));
    }
    for step in &mut doc.steps {
        step.tasks.retain(|t| kept_ids.contains(t));
    }
    removed
}

/// The new tasks of a replan: their ids from `first_id` on, one a step,
/// and the keys they declare.
struct NewTasks {
    first_id: u32,
    count: usize,
    keys: HashMap<String, u32>,
}

impl NewTasks {
    /// The new tasks of `steps`; a key used twice, among them or by a kept
    /// task, is refused.
    fn of(doc: &PlanDocument, steps: &[ReplanStep], first_id: u32) -> Result<NewTasks, OpError> {
        let mut keys: HashMap<String, u32> = HashMap::new();
        for (n, step) in steps.iter().enumerate() {
            let ReplanStep::Task(task) = step else {
                continue;
            };
            let Some(key) = &task.key else {
                continue;
            };
            let taken = doc
                .tasks
                .iter()
                .any(|t| t.key.as_deref() == Some(key.as_str()));
            if taken || keys.insert(key.clone(), first_id + n as u32).is_some() {
                return Err(OpError::new(
                    ErrorCode::InvalidArgument,
                    format!("the key `{key}` is used twice"),
                )
                .with(json!({"key": key})));
            }
        }
        Ok(NewTasks {
            first_id,
            count: steps.len(),
            keys,
        })
    }

    /// The ids of the new tasks (the last may be `u32::MAX`).
    fn ids(&self) -> Vec<u32> {
        (0..self.count).map(|n| self.first_id + n as u32).collect()
    }

    /// A dependency of new task `itself`: a kept task, or a new task by key or id.
    fn resolve(&self, dep: &TaskRef, doc: &PlanDocument, itself: u32) -> Result<u32, OpError> {
        let new_ids = u64::from(self.first_id)..u64::from(self.first_id) + self.count as u64;
        let found = match dep {
            TaskRef::Id(id) if new_ids.contains(&u64::from(*id)) => Some(*id),
            TaskRef::Id(id) => doc.tasks.iter().find(|t| t.id == *id).map(|t| t.id),
            TaskRef::Key(key) => self.keys.get(key).copied().or_else(|| {
                doc.tasks
                    .iter()
                    .find(|t| t.key.as_deref() == Some(key.as_str()) || t.id.to_string() == *key)
                    .map(|t| t.id)
            }),
        };
        match found {
            Some(id) if id != itself => Ok(id),
            Some(_) => Err(OpError::new(
                ErrorCode::InvalidDependency,
                format!("a new task cannot depend on itself ({dep})"),
            )),
            None => Err(OpError::new(
                ErrorCode::InvalidDependency,
                format!("dependency {dep} names no kept task and no new task"),
            )
            .with(json!({"dependency": dep}))),
        }
    }
}

/// Replaces `old` in a dependency list by `new` (keeping order, no duplicates).
pub(super) fn replace_dep(deps: &mut Vec<u32>, old: u32, new: &[u32]) {
    let mut out = Vec::with_capacity(deps.len() + new.len());
    for &d in deps.iter() {
        if d == old {
            for &n in new {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        } else if !out.contains(&d) {
            out.push(d);
        }
    }
    *deps = out;
}

fn non_empty(text: &str, what: &str) -> Result<String, OpError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            format!("`{what}` must not be empty"),
        ));
    }
    Ok(trimmed.to_owned())
}
