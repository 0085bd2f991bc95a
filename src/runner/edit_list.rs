//! Changes of the task list made in place: a task inserted after another
//! (`addTask` with `after_task_id`), a task removed (`removeTask`), and a
//! task edited (`updateTask`: its dependencies may change). The
//! document is changed where it stands — no copy, no index built again —
//! the indexes follow (`index_shift.rs`), and only the task, the tasks whose
//! dependencies are rewired, the order keys that go and the steps (when a
//! step's list changed) are marked touched, so a store writes those rows
//! alone. The list itself is a vector: its tail moves in memory, and the
//! positions the indexes hold after it are renumbered (a pass over
//! integers, O(tasks) of small work).

use std::collections::HashSet;

use crate::document::{TaskDoc, TaskStatus};

use super::edit::replace_dep;
use super::error::OpError;
use super::Runner;

impl Runner {
    /// Whether a task with dependencies `deps` inserted after the task at
    /// `a` may close a cycle: some of `deps` waits (transitively) for a
    /// pending task that waits for `a`, which would wait for the new task.
    /// Never for the default dependency (`a` itself); otherwise a walk from
    /// those tasks over what waits for them.
    pub(super) fn may_close_cycle(&self, a: usize, deps: &[u32]) -> bool {
        if deps.is_empty() || deps == [self.task(a).id] {
            return false;
        }
        let targets: HashSet<u32> = deps.iter().copied().collect();
        let mut stack = self.rewired_by_insert(a);
        let mut seen = HashSet::new();
        while let Some(d) = stack.pop() {
            if targets.contains(&self.task(d).id) {
                return true;
            }
            if seen.insert(d) {
                stack.extend(&self.index.dependents[d]);
            }
        }
        false
    }

    /// The positions of the pending tasks that wait for the task at `a`:
    /// those an insertion after it makes wait for the new task instead.
    fn rewired_by_insert(&self, a: usize) -> Vec<usize> {
        let mut rewired: Vec<usize> = self.index.dependents[a]
            .iter()
            .copied()
            .filter(|&d| self.task(d).status == TaskStatus::Pending)
            .collect();
        rewired.dedup();
        rewired
    }

    /// Inserts `task` (pending, a fresh id, its dependencies in the plan,
    /// closing no cycle) right after the task at `a` and in its step; the
    /// pending tasks that waited for `a` wait for the new task instead, as
    /// in the planManager. The ids of the tasks rewired.
    pub(super) fn insert_in_place(&mut self, a: usize, task: TaskDoc) -> Vec<u32> {
        let (x, id, p) = (self.task(a).id, task.id, a + 1);
        let rewire = self.rewired_by_insert(a);
        if let Some(step) = &task.step {
            if let Some(step) = self.doc.steps.iter_mut().find(|s| &s.id == step) {
                let at = step
                    .tasks
                    .iter()
                    .position(|&t| t == x)
                    .map_or(step.tasks.len(), |p| p + 1);
                step.tasks.insert(at, id);
                self.touched.steps();
            }
        }
        self.doc.tasks.insert(p, task);
        self.index.open_gap(p, &self.doc.tasks[p]);
        let inserted = self.order.insert(p);
        for (i, old_key) in inserted.moved {
            self.touched.gone(old_key);
            self.touch(i);
        }
        self.index.enter_new(&self.doc.tasks, p);
        let mut rewired = Vec::with_capacity(rewire.len());
        for d in rewire {
            let d = if d >= p { d + 1 } else { d };
            let old = self.doc.tasks[d].dependencies.clone();
            replace_dep(&mut self.doc.tasks[d].dependencies, x, &[id]);
            self.index.redepend(&self.doc.tasks, d, &old);
            self.touch(d);
            rewired.push(self.doc.tasks[d].id);
        }
        // The new id is the largest the plan has had: no other is kept.
        self.doc.state.max_task_id = None;
        self.touched.inserted(id);
        rewired.sort_unstable();
        rewired.dedup();
        rewired
    }

    /// Removes the pending task at `i`: the tasks that waited for it wait
    /// for its dependencies instead, and it leaves every step. The task
    /// removed and the ids of the tasks rewired.
    pub(super) fn remove_in_place(&mut self, i: usize) -> (TaskDoc, Vec<u32>) {
        let had = self.highest_id();
        let removed = self.task(i).clone();
        let mut dependents = self.index.dependents[i].clone();
        dependents.dedup();
        self.index.leave_removed(&self.doc.tasks, i);
        let mut rewired = Vec::with_capacity(dependents.len());
        for d in dependents {
            let old = self.doc.tasks[d].dependencies.clone();
            replace_dep(
                &mut self.doc.tasks[d].dependencies,
                removed.id,
                &removed.dependencies,
            );
            self.index.redepend(&self.doc.tasks, d, &old);
            self.touch(d);
            rewired.push(self.doc.tasks[d].id);
        }
        rewired.sort_unstable();
        rewired.dedup();
        self.doc.tasks.remove(i);
        self.index.close_gap(i);
        let key = self.order.remove(i);
        self.touched.gone(key);
        for step in &mut self.doc.steps {
            let before = step.tasks.len();
            step.tasks.retain(|&t| t != removed.id);
            if step.tasks.len() != before {
                self.touched.steps();
            }
        }
        // The largest id the plan has had is kept when no task has it now.
        self.doc.state.max_task_id = (!self.index.position.contains_key(&had)).then_some(had);
        (removed, rewired)
    }

    /// Puts `task` (the task at `i`, edited by `updateTask`: its id, place,
    /// status and step as they were) in place: only its row is touched, and
    /// its edges follow when its dependencies changed. Dependencies that
    /// would close a cycle — a walk from the task over what waits for it
    /// finds one of them — are checked whole, and refused.
    pub(super) fn update_in_place(&mut self, i: usize, task: TaskDoc) -> Result<(), OpError> {
        let old = &self.doc.tasks[i];
        let redepend = old.dependencies != task.dependencies;
        if redepend && self.waited_by(i, &task.dependencies) {
            let mut doc = self.doc.clone();
            doc.tasks[i] = task;
            return self.replace(doc);
        }
        if *old != task {
            self.touch(i);
        }
        let old = std::mem::replace(&mut self.doc.tasks[i], task).dependencies;
        if redepend {
            self.index.redepend(&self.doc.tasks, i, &old);
        }
        Ok(())
    }

    /// Whether one of `ids` waits (transitively) for the task at `i`.
    fn waited_by(&self, i: usize, ids: &[u32]) -> bool {
        let targets: HashSet<u32> = ids.iter().copied().collect();
        let mut stack = vec![i];
        let mut seen = HashSet::new();
        while let Some(d) = stack.pop() {
            if d != i && targets.contains(&self.task(d).id) {
                return true;
            }
            if seen.insert(d) {
                stack.extend(&self.index.dependents[d]);
            }
        }
        false
    }
}
