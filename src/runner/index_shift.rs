//! Keeping the runner's indexes in step with a task inserted into or
//! removed from the middle of the list, without building them again: the
//! positions after it move by one (a pass over integers, no task read, no
//! copy of the document), and only the edges of the tasks involved change.

use std::collections::BTreeSet;

use crate::document::{Priority, TaskDoc, TaskStatus};

use super::index::{satisfies, takes_work, Index};
use super::ready::ReadySet;

impl Index {
    /// Makes room at position `p` for a task inserted there: every position
    /// from `p` on moves one on, and `p` gets an empty slot (no edges, no
    /// unmet dependency, the priority of `task`).
    pub fn open_gap(&mut self, p: usize, task: &TaskDoc) {
        let on = |i: usize| if i >= p { i + 1 } else { i };
        self.renumber(on);
        self.dependents.insert(p, Vec::new());
        self.unmet.insert(p, 0);
        self.ready.open_gap(p, Priority::rank(task.priority), on);
    }

    /// Takes out the slot at position `p` (its task removed, no edge of any
    /// other task naming it any more): every position after `p` moves one
    /// back.
    pub fn close_gap(&mut self, p: usize) {
        let back = |i: usize| if i > p { i - 1 } else { i };
        self.ready.close_gap(p, back);
        self.dependents.remove(p);
        self.unmet.remove(p);
        self.renumber(back);
    }

    /// Maps every position the indexes hold (but the ready set's) by `to`.
    fn renumber(&mut self, to: impl Fn(usize) -> usize + Copy) {
        for value in self.position.values_mut() {
            *value = to(*value);
        }
        for list in &mut self.dependents {
            for value in list.iter_mut() {
                *value = to(*value);
            }
        }
        self.in_progress = self.in_progress.iter().map(|&i| to(i)).collect();
        for held in self.held.values_mut() {
            *held = held.iter().map(|&i| to(i)).collect::<BTreeSet<_>>();
        }
        self.leases = self.leases.iter().map(|&(t, i)| (t, to(i))).collect();
    }

    /// Puts the pending task at `p` (its slot open, its dependencies in the
    /// plan) into the indexes: its id, edges, unmet count, status count and
    /// readiness.
    pub fn enter_new(&mut self, tasks: &[TaskDoc], p: usize) {
        let task = &tasks[p];
        self.position.insert(task.id, p);
        self.max_id = self.max_id.max(task.id);
        if let Some(key) = &task.key {
            self.keys.insert(key.clone(), task.id);
        }
        self.counts[task.status as usize] += 1;
        self.add_edges(tasks, p);
        if takes_work(task) && self.unmet[p] == 0 {
            self.ready.insert(p);
        }
    }

    /// Takes the pending task at `p` out of the indexes (its slot stays
    /// until [`Index::close_gap`]): its id, the edges to its dependencies,
    /// its status count and readiness. Its dependents are rewired by the
    /// caller.
    pub fn leave_removed(&mut self, tasks: &[TaskDoc], p: usize) {
        let task = &tasks[p];
        self.ready.remove(&p);
        self.position.remove(&task.id);
        if let Some(key) = &task.key {
            self.keys.remove(key);
        }
        self.counts[task.status as usize] -= 1;
        if task.status == TaskStatus::Failed && !task.optional {
            self.failed_required -= 1;
        }
        self.drop_edges(p, &task.dependencies);
        if self.max_id == task.id {
            self.max_id = tasks
                .iter()
                .map(|t| t.id)
                .filter(|&id| id != task.id)
                .max()
                .unwrap_or(0);
        }
    }

    /// The task at `d` had the dependencies `old` and has its own now:
    /// its edges, unmet count and readiness follow.
    pub fn redepend(&mut self, tasks: &[TaskDoc], d: usize, old: &[u32]) {
        self.drop_edges(d, old);
        self.add_edges(tasks, d);
        if takes_work(&tasks[d]) && self.unmet[d] == 0 {
            self.ready.insert(d);
        } else {
            self.ready.remove(&d);
        }
    }

    /// Adds the edges of the task at `d` to its dependencies (each
    /// dependents list stays in position order) and counts those unmet.
    fn add_edges(&mut self, tasks: &[TaskDoc], d: usize) {
        let mut unmet = 0;
        for dep in &tasks[d].dependencies {
            let Some(&j) = self.position.get(dep) else {
                continue;
            };
            let list = &mut self.dependents[j];
            let at = list.partition_point(|&x| x <= d);
            list.insert(at, d);
            if !satisfies(&tasks[j]) {
                unmet += 1;
            }
        }
        self.unmet[d] = unmet;
    }

    /// Takes out one edge of the task at `d` for each of `deps` (those
    /// still in the plan).
    fn drop_edges(&mut self, d: usize, deps: &[u32]) {
        for dep in deps {
            let Some(&j) = self.position.get(dep) else {
                continue;
            };
            if j == d {
                continue;
            }
            let list = &mut self.dependents[j];
            if let Some(at) = list.iter().position(|&x| x == d) {
                list.remove(at);
            }
        }
    }
}

impl ReadySet {
    /// Makes room at `p` for a task of priority rank `rank`, positions
    /// mapped by `on`.
    pub fn open_gap(&mut self, p: usize, rank: u8, on: impl Fn(usize) -> usize) {
        self.rank.insert(p, rank);
        self.set = self.set.iter().map(|&(r, i)| (r, on(i))).collect();
    }

    /// Takes out the slot at `p` (not in the set), positions mapped by `back`.
    pub fn close_gap(&mut self, p: usize, back: impl Fn(usize) -> usize) {
        self.rank.remove(p);
        self.set = self.set.iter().map(|&(r, i)| (r, back(i))).collect();
    }
}
