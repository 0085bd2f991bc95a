//! Which tasks a change touched: the ids of the tasks an operation may have
//! changed or inserted, the order keys whose rows go (a task removed, or
//! moved to another key: `order.rs`), whether the steps changed, or every
//! task (a replan, or an edit that rebuilt the list). A store writes only
//! these tasks of a change; an insertion after a task, a removal and an
//! `addTask` at the end of the plan mark the task, the tasks whose
//! dependencies they rewired and the keys that go, and say the list changed
//! shape ([`Touched::is_reshaped`]).

use std::collections::BTreeSet;

/// The tasks touched since the set was last taken ([`super::Runner::take_touched`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Every task: the list itself may have changed.
    all: bool,
    /// Ids of the tasks touched (written at their order key), when not `all`.
    ids: BTreeSet<u32>,
    /// Order keys whose rows go (a task removed, or moved to another key).
    gone: BTreeSet<i64>,
    /// Ids of the tasks inserted or appended (also in `ids`).
    inserted: BTreeSet<u32>,
    /// Whether the list changed shape (a task inserted, appended or
    /// removed): undoing the change means more than rewriting rows.
    reshaped: bool,
    /// Whether a step's task list changed.
    steps: bool,
}

impl Touched {
    /// Marks the task with id `id`.
    pub(super) fn task(&mut self, id: u32) {
        if !self.all {
            self.ids.insert(id);
        }
    }

    /// Marks the task `id`, just inserted or appended: the list changed shape.
    pub(super) fn inserted(&mut self, id: u32) {
        self.task(id);
        if !self.all {
            self.inserted.insert(id);
        }
        self.reshaped = true;
    }

    /// Marks the row at order key `key` as gone (its task removed or moved
    /// to another key): the list changed shape.
    pub(super) fn gone(&mut self, key: i64) {
        if !self.all {
            self.gone.insert(key);
        }
        self.reshaped = true;
    }

    /// Marks the steps as changed.
    pub(super) fn steps(&mut self) {
        self.steps = true;
    }

    /// Whether the list changed shape (a task inserted, appended or
    /// removed): undoing the change means more than rewriting rows.
    pub fn is_reshaped(&self) -> bool {
        self.reshaped
    }

    /// Whether the steps may have changed (or every task was touched).
    pub fn steps_changed(&self) -> bool {
        self.all || self.steps
    }

    /// Marks every task (the list may have changed).
    pub(super) fn everything(&mut self) {
        self.all = true;
        self.ids.clear();
        self.gone.clear();
        self.inserted.clear();
    }

    /// Whether every task may have changed.
    pub fn is_everything(&self) -> bool {
        self.all
    }

    /// Whether no task was touched.
    pub fn is_empty(&self) -> bool {
        !self.all && self.ids.is_empty() && self.gone.is_empty() && !self.steps
    }

    /// The ids of the tasks touched, in id order (empty when every task was).
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids.iter().copied()
    }

    /// The ids of the tasks inserted or appended, in id order (empty when
    /// every task was touched).
    pub fn inserted_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.inserted.iter().copied()
    }

    /// The order keys whose rows go, in order (empty when every task was).
    pub fn gone_keys(&self) -> impl Iterator<Item = i64> + '_ {
        self.gone.iter().copied()
    }

    /// Whether the task `id` is marked (or every task is).
    pub fn contains(&self, id: u32) -> bool {
        self.all || self.ids.contains(&id)
    }
}
