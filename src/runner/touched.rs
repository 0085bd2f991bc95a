//! Which tasks a change touched: the positions in `tasks` whose task an
//! operation may have changed, or every task (a change of the list — an
//! insertion in the middle, a removal, a replan, an update that moved a
//! task between steps — that moves or rebuilds it). A store writes only
//! these tasks of a change; `resetPlan`, an update that leaves the list and
//! the steps as they were and an `addTask` at the end of the plan (the list
//! grows, no task moves: [`Touched::appended`]) mark only the tasks they
//! changed.

use std::collections::BTreeSet;

/// The tasks touched since the set was last taken ([`super::Runner::take_touched`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Every task: the list itself may have changed.
    all: bool,
    /// Positions of the tasks touched, when not `all`.
    positions: BTreeSet<usize>,
    /// Whether a task was appended: the list is longer than it was (its
    /// positions, touched, are past the old end).
    grown: bool,
}

impl Touched {
    /// Marks the task at position `i`.
    pub(super) fn task(&mut self, i: usize) {
        if !self.all {
            self.positions.insert(i);
        }
    }

    /// Marks the task appended at position `i` (the list grew).
    pub(super) fn appended(&mut self, i: usize) {
        self.task(i);
        self.grown = true;
    }

    /// Whether a task was appended ([`Touched::appended`]): undoing the
    /// change means shortening the list again, not only rewriting rows.
    pub fn is_grown(&self) -> bool {
        self.grown
    }

    /// Marks every task (the list may have changed).
    pub(super) fn everything(&mut self) {
        self.all = true;
        self.positions.clear();
    }

    /// Whether every task may have changed.
    pub fn is_everything(&self) -> bool {
        self.all
    }

    /// Whether no task was touched.
    pub fn is_empty(&self) -> bool {
        !self.all && self.positions.is_empty()
    }

    /// The positions touched, in plan order (empty when every task was).
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.positions.iter().copied()
    }

    /// Whether the task at `i` is marked (or every task is).
    pub fn contains(&self, i: usize) -> bool {
        self.all || self.positions.contains(&i)
    }
}
