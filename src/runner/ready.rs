//! The executable tasks in the order work is taken: by priority (high,
//! medium, low; a task without one is medium), then in plan order.

use std::collections::BTreeSet;

use crate::document::{Priority, TaskDoc};

/// Positions of executable tasks, ordered by (priority, position).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadySet {
    /// Position → its priority's rank (fixed until the index is rebuilt).
    pub(super) rank: Vec<u8>,
    pub(super) set: BTreeSet<(u8, usize)>,
}

impl ReadySet {
    /// An empty set for `tasks` (their priorities are read once).
    pub fn new(tasks: &[TaskDoc]) -> ReadySet {
        ReadySet {
            rank: tasks.iter().map(|t| Priority::rank(t.priority)).collect(),
            set: BTreeSet::new(),
        }
    }

    /// Reads the priority of a task appended to the plan (its position is
    /// the next one): O(1), the set kept.
    pub fn push_rank(&mut self, task: &TaskDoc) {
        self.rank.push(Priority::rank(task.priority));
    }

    /// Adds the task at position `i`.
    pub fn insert(&mut self, i: usize) -> bool {
        self.set.insert((self.rank[i], i))
    }

    /// Removes the task at position `i`.
    pub fn remove(&mut self, i: &usize) -> bool {
        self.set.remove(&(self.rank[*i], *i))
    }

    /// Whether the task at position `i` is executable.
    pub fn contains(&self, i: &usize) -> bool {
        self.set.contains(&(self.rank[*i], *i))
    }

    /// The positions in the order work is taken.
    pub fn iter(&self) -> impl Iterator<Item = &usize> + '_ {
        self.set.iter().map(|(_, i)| i)
    }

    /// The task taken next.
    pub fn first(&self) -> Option<&usize> {
        self.set.first().map(|(_, i)| i)
    }

    /// How many tasks are executable.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether no task is executable.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}
