//! What the paged reads of a plan (`GET /api/plans/{id}/summary` and
//! `…/tasks`, `serve/task_pages_kept.rs`) need beside a kept runner's
//! indexes, kept in step with its changes: the read order (the tasks group
//! by group, each step where its first task stands), each group's counts
//! by status, the plan's holders and how many tasks each holds. Built once
//! (O(tasks)) when a read first asks for it, then brought up to date from
//! the tasks each change touched ([`Runner::take_touched`]): O(touched) a
//! change, so a summary costs O(groups + holders) and a window of the
//! tasks O(its tasks + groups) instead of a pass over the plan.
//!
//! A change of the task list (a [`Touched::is_everything`] change), a task
//! moved between groups, or a view that no longer agrees with the runner
//! (task count, steps, counts by status) has the view built again.

use std::collections::{BTreeSet, HashMap};

use crate::document::{PlanDocument, TaskDoc, TaskStatus};

use super::index::holder_key;
use super::{Runner, Touched};

/// One group of the read order: a step (or the tasks outside every
/// declared step) and its tasks' positions, in plan order.
#[derive(Clone, Debug)]
pub struct ViewGroup {
    step: Option<String>,
    name: String,
    positions: Vec<u32>,
    counts: [usize; 5],
}

impl ViewGroup {
    /// The step's id; `None` for the tasks outside every declared step.
    pub fn step(&self) -> Option<&str> {
        self.step.as_deref()
    }

    /// The step's name ("" outside every step).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The positions of its tasks in the document, in plan order.
    pub fn positions(&self) -> &[u32] {
        &self.positions
    }

    /// How many tasks it holds.
    pub fn total(&self) -> usize {
        self.positions.len()
    }

    /// How many of its tasks have `status`.
    pub fn count(&self, status: TaskStatus) -> usize {
        self.counts[status as usize]
    }

    /// How many of its tasks are done (completed or skipped).
    pub fn done(&self) -> usize {
        self.count(TaskStatus::Completed) + self.count(TaskStatus::Skipped)
    }
}

/// The read order and counts of one plan ([module docs](self)).
#[derive(Clone, Debug, Default)]
pub struct TaskView {
    /// Whether the view is kept (made, and brought up to date since):
    /// an empty view is not.
    kept: bool,
    /// The declared steps (id, name) the view was made with.
    steps: Vec<(String, String)>,
    groups: Vec<ViewGroup>,
    /// Position → its group.
    group_of: Vec<u32>,
    /// Position → its status as the view last saw it.
    status: Vec<TaskStatus>,
    /// Position → its holder (0: none; k: `holders[k - 1]`).
    holder: Vec<u32>,
    /// Each holder's agent (`None`: a holder without one) and how many
    /// tasks it holds (0 once it holds none).
    holders: Vec<(Option<String>, usize)>,
    holder_ids: HashMap<Option<String>, u32>,
    /// Position → whether its step names no declared step (it is in the
    /// group outside every step, though its `step` is set).
    stray: Vec<bool>,
    strays: usize,
    counts: [usize; 5],
}

impl TaskView {
    /// The view of `doc`: O(tasks).
    fn build(doc: &PlanDocument) -> TaskView {
        let mut view = TaskView {
            kept: true,
            steps: doc
                .steps
                .iter()
                .map(|s| (s.id.clone(), s.name.clone()))
                .collect(),
            ..TaskView::default()
        };
        let names: HashMap<&str, &str> = doc
            .steps
            .iter()
            .map(|s| (s.id.as_str(), s.name.as_str()))
            .collect();
        let mut place: HashMap<Option<&str>, u32> = HashMap::new();
        for (i, task) in doc.tasks.iter().enumerate() {
            let step = task.step.as_deref().filter(|s| names.contains_key(s));
            let group = *place.entry(step).or_insert_with(|| {
                view.groups.push(ViewGroup {
                    step: step.map(str::to_owned),
                    name: step
                        .and_then(|s| names.get(s).copied())
                        .unwrap_or("")
                        .to_owned(),
                    positions: Vec::new(),
                    counts: [0; 5],
                });
                (view.groups.len() - 1) as u32
            });
            view.push(i, group, task);
        }
        view
    }

    /// Takes in the task at position `i` (the next) into `group`.
    fn push(&mut self, i: usize, group: u32, task: &TaskDoc) {
        self.groups[group as usize].positions.push(i as u32);
        self.group_of.push(group);
        self.status.push(task.status);
        self.holder.push(0);
        let stray = task.step.is_some() && self.groups[group as usize].step.is_none();
        self.stray.push(stray);
        self.strays += usize::from(stray);
        self.count(i, task, 1);
    }

    /// Counts the task at `i` (`task`, as it is now) in (`sign` 1) or out
    /// (-1) of the counts, its status and holder noted as the view's.
    fn count(&mut self, i: usize, task: &TaskDoc, sign: isize) {
        let group = &mut self.groups[self.group_of[i] as usize];
        if sign > 0 {
            group.counts[task.status as usize] += 1;
            self.counts[task.status as usize] += 1;
            self.status[i] = task.status;
            self.holder[i] = match &task.holder {
                None => 0,
                Some(holder) => self.holder_id(holder.agent.as_deref()),
            };
            if let Some(h) = self.holder[i].checked_sub(1) {
                self.holders[h as usize].1 += 1;
            }
        } else {
            let status = self.status[i] as usize;
            group.counts[status] -= 1;
            self.counts[status] -= 1;
            if let Some(h) = self.holder[i].checked_sub(1) {
                self.holders[h as usize].1 -= 1;
            }
        }
    }

    /// The number of holder `agent` (from 1), made when new.
    fn holder_id(&mut self, agent: Option<&str>) -> u32 {
        let key = agent.map(str::to_owned);
        if let Some(&id) = self.holder_ids.get(&key) {
            return id;
        }
        self.holders.push((key.clone(), 0));
        let id = self.holders.len() as u32;
        self.holder_ids.insert(key, id);
        id
    }

    /// Brings the view up to `doc` after a change that touched `touched`
    /// (`position`: each task id's position now): `false` when it cannot
    /// be (it is to be built again). A list that changed shape is followed
    /// only when no row went and every task inserted is past the old end
    /// (appended), so no task moved.
    fn absorb(
        &mut self,
        doc: &PlanDocument,
        position: &HashMap<u32, usize>,
        touched: &Touched,
    ) -> bool {
        if touched.is_everything() || touched.gone_keys().next().is_some() {
            return false;
        }
        let old_len = self.status.len();
        if touched
            .inserted_ids()
            .any(|id| position.get(&id).is_none_or(|&i| i < old_len))
        {
            return false;
        }
        let mut positions = Vec::new();
        for id in touched.ids() {
            let Some(&i) = position.get(&id) else {
                return false;
            };
            positions.push(i);
        }
        // Appended tasks are taken in in order.
        positions.sort_unstable();
        for i in positions {
            let Some(task) = doc.tasks.get(i) else {
                return false;
            };
            let declared = task
                .step
                .as_deref()
                .filter(|s| self.steps.iter().any(|(id, _)| id == s));
            if i == self.status.len() {
                match self
                    .groups
                    .iter()
                    .position(|g| g.step.as_deref() == declared)
                {
                    Some(group) => self.push(i, group as u32, task),
                    // A new group comes last: its first task is the last.
                    None => return false,
                }
                continue;
            }
            let Some(&group) = self.group_of.get(i) else {
                return false;
            };
            let stray = task.step.is_some() && declared.is_none();
            if self.groups[group as usize].step.as_deref() != declared || self.stray[i] != stray {
                return false;
            }
            self.count(i, task, -1);
            self.count(i, task, 1);
        }
        self.status.len() == doc.tasks.len()
    }

    /// Whether the view still agrees with `runner` where that is cheap to
    /// tell: as many tasks, the same steps, the same counts by status.
    fn agrees(&self, runner: &Runner) -> bool {
        self.status.len() == runner.doc.tasks.len()
            && self.counts == runner.index.counts
            && self.steps.len() == runner.doc.steps.len()
            && self
                .steps
                .iter()
                .zip(&runner.doc.steps)
                .all(|((id, name), step)| *id == step.id && *name == step.name)
    }

    /// The groups of the read order.
    pub fn groups(&self) -> &[ViewGroup] {
        &self.groups
    }

    /// How many tasks have each status (by `TaskStatus as usize`).
    pub fn counts(&self) -> [usize; 5] {
        self.counts
    }

    /// How many tasks are done (completed or skipped).
    pub fn done(&self) -> usize {
        self.counts[TaskStatus::Completed as usize] + self.counts[TaskStatus::Skipped as usize]
    }

    /// Each holder's agent and how many tasks it holds (those holding
    /// some), sorted (no agent first).
    pub fn holders(&self) -> Vec<(Option<&str>, usize)> {
        let mut holders: Vec<(Option<&str>, usize)> = self
            .holders
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(agent, n)| (agent.as_deref(), *n))
            .collect();
        holders.sort();
        holders
    }

    /// How many tasks have a holder.
    pub fn held(&self) -> usize {
        self.holders.iter().map(|(_, n)| n).sum()
    }

    /// How many tasks have a step no declared step has (in the group
    /// outside every step though their `step` is set).
    pub fn strays(&self) -> usize {
        self.strays
    }

    /// The status of the task at position `i` (`i` in the plan).
    pub fn status(&self, i: usize) -> TaskStatus {
        self.status[i]
    }

    /// Where the task at position `i` stands in the read order: its group
    /// and its index in that group. O(log group).
    pub fn place(&self, i: usize) -> (usize, usize) {
        let group = self.group_of[i] as usize;
        let index = self.groups[group]
            .positions
            .partition_point(|&p| (p as usize) < i);
        (group, index)
    }
}

/// A kept runner as the paged reads see it: the document, the view and
/// the runner's own indexes (positions, tasks in progress, holders).
#[derive(Clone, Copy, Debug)]
pub struct KeptPlan<'a> {
    runner: &'a Runner,
    view: &'a TaskView,
}

impl<'a> KeptPlan<'a> {
    /// The plan's document.
    pub fn doc(&self) -> &'a PlanDocument {
        &self.runner.doc
    }

    /// The read order and counts.
    pub fn view(&self) -> &'a TaskView {
        self.view
    }

    /// The position of task `id`.
    pub fn position(&self, id: u32) -> Option<usize> {
        self.runner.index.position.get(&id).copied()
    }

    /// The positions of the tasks in progress.
    pub fn in_progress(&self) -> &'a BTreeSet<usize> {
        &self.runner.index.in_progress
    }

    /// The positions of the tasks `agent` holds (`None` when it holds
    /// none), when every holder is indexed ([`KeptPlan::holders_indexed`]).
    pub fn held_by(&self, agent: &str) -> Option<&'a BTreeSet<usize>> {
        self.runner.index.held.get(holder_key(Some(agent)))
    }

    /// The positions of every held task, by holder.
    pub fn held(&self) -> impl Iterator<Item = usize> + 'a {
        self.runner.index.held.values().flatten().copied()
    }

    /// Whether the runner's holders index holds every task that has a
    /// holder (it holds those in progress; a document may give a holder to
    /// a task in another status).
    pub fn holders_indexed(&self) -> bool {
        let indexed: usize = self.runner.index.held.values().map(BTreeSet::len).sum();
        indexed == self.view.held()
    }
}

impl Runner {
    /// Brings the kept view up to the tasks `touched` (a change just made):
    /// dropped, to be built again, when it cannot be.
    pub(super) fn keep_view(&mut self, touched: &Touched) {
        if self.view.kept && !self.view.absorb(&self.doc, &self.index.position, touched) {
            self.view = TaskView::default();
        }
    }

    /// The plan as the paged reads see it, its view brought up to date
    /// (built when there is none, or when it no longer agrees).
    pub fn kept_plan(&mut self) -> KeptPlan<'_> {
        let pending = self.touched.clone();
        self.keep_view(&pending);
        if !(self.view.kept && self.view.agrees(self)) {
            self.view = TaskView::build(&self.doc);
        }
        KeptPlan {
            runner: self,
            view: &self.view,
        }
    }
}
