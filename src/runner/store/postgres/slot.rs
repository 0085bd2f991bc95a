//! A plan as the PostgreSQL store keeps it in this process: its runner and
//! what is known of it against the plan's rows (the slot), and bringing
//! that runner up to the rows. The flow of a change through it is in
//! `kept.rs`; the writer (`writer.rs`) settles changes on it.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Condvar, Mutex};

use postgres::Statement;

use super::phases::{self, Phase};
use super::rows;
use super::{not_a_state, sql_error, Statements};
use crate::runner::error::OpError;
use crate::runner::store::kept_rows::{put_rows, Rows};
use crate::runner::store::plan_store::plan_not_found;
use crate::runner::store::task_rows::runner_of;
use crate::runner::{Runner, Touched};

/// One plan in this process.
#[derive(Default)]
pub(super) struct Entry {
    pub(super) slot: Mutex<Slot>,
    /// Rung when a queued change of the plan is settled.
    pub(super) settled: Condvar,
    /// Bumped whenever the runner is found not to be the plan's state:
    /// changes queued before are not written.
    pub(super) epoch: AtomicU64,
}

/// A plan's kept runner and what is known of it.
#[derive(Default)]
pub(super) struct Slot {
    /// The plan's latest state, indexed: committed, or what the queued
    /// changes make.
    pub(super) runner: Option<Runner>,
    /// The `born` of the plan's row the runner is of.
    pub(super) born: i64,
    /// A revision of the plan whose committed tasks the runner holds, but
    /// for those in `pending` and `lost`: bringing it up reads the tasks
    /// written after it.
    pub(super) committed: u64,
    /// The tasks each queued change touched, in queue order.
    pub(super) pending: VecDeque<Touched>,
    /// The tasks changed on the runner by changes that were not committed.
    pub(super) lost: Lost,
    /// Whether the runner may not be the plan's state (a change of it was
    /// not written, or left a trace): brought up to the rows before use.
    pub(super) stale: bool,
    /// Changes queued so far, and settled so far (in queue order).
    pub(super) queued: u64,
    pub(super) settled: u64,
}

impl Slot {
    /// Settles the plan's oldest queued change: committed (at `revision`)
    /// or not.
    pub(super) fn settle(&mut self, committed: Option<u64>) {
        self.settled += 1;
        let touched = self.pending.pop_front().unwrap_or_default();
        match committed {
            Some(revision) => self.committed = self.committed.max(revision),
            None => self.lose(&touched),
        }
    }

    /// Marks the tasks `touched` as changed on the runner but not committed.
    pub(super) fn lose(&mut self, touched: &Touched) {
        self.stale = true;
        // A task inserted or removed and not committed is no row (or a row
        // still): the runner's list is not the plan's, which only reading
        // it whole undoes; so are steps changed.
        let runner = match &self.runner {
            Some(runner) if !touched.is_reshaped() && !touched.steps_changed() => runner,
            _ => {
                self.lost.all = true;
                return;
            }
        };
        for id in touched.ids() {
            match runner.index.position.get(&id) {
                Some(&i) => {
                    self.lost.keys.insert(runner.order.key(i));
                }
                None => self.lost.all = true,
            }
        }
    }
}

/// The tasks changed on a kept runner by changes that were not committed:
/// their order keys, or all of them.
#[derive(Clone, Debug, Default)]
pub(super) struct Lost {
    /// Whether the runner is to be read whole.
    pub(super) all: bool,
    /// The keys of the tasks to read again.
    pub(super) keys: BTreeSet<i64>,
}

impl Lost {
    /// Whether nothing was lost.
    pub(super) fn is_empty(&self) -> bool {
        !self.all && self.keys.is_empty()
    }
}

/// The statements that bring a kept runner up to the rows.
pub(super) struct Reads<'a> {
    /// [`rows::READ_PLAN`].
    pub plan: &'a Statement,
    /// [`rows::READ_CHANGED`].
    pub changed: &'a Statement,
}

impl Statements {
    /// The statements that bring a kept runner up to the rows.
    pub(super) fn reads(&self) -> Reads<'_> {
        Reads {
            plan: &self.read,
            changed: &self.changed,
        }
    }
}

impl Slot {
    /// Brings the runner (nothing queued) up to the plan's rows as
    /// `client` reads them: only the tasks written since the runner's
    /// committed revision, and those it lost, when the plan is the same
    /// one and its list did not change; else the whole plan (store `shown`).
    pub(super) fn bring_up(
        &mut self,
        client: &mut impl rows::Query,
        reads: &Reads<'_>,
        shown: &str,
        plan_id: &str,
    ) -> Result<(), OpError> {
        let read = |e: postgres::Error| sql_error(shown, "read", &e);
        let invalid = |e: String| not_a_state(shown, plan_id, &e);
        if self.runner.is_some() && !self.lost.all {
            let lost: Vec<i64> = self.lost.keys.iter().copied().collect();
            let changed = rows::read_changed(client, reads.changed, plan_id, self.committed, &lost)
                .map_err(read)?
                .ok_or_else(|| plan_not_found(plan_id))?;
            if changed.born == self.born && changed.reshaped <= self.committed {
                let rows = Rows {
                    header: changed.header.map_err(invalid)?,
                    steps: changed.steps.transpose().map_err(invalid)?,
                    gone: changed.gone,
                    tasks: changed.tasks.map_err(invalid)?,
                };
                if let Some(runner) = self.runner.as_mut() {
                    if phases::on() {
                        count_rows(runner, &rows, lost.len());
                    }
                    if let Err(error) = put_rows(runner, rows) {
                        self.runner = None;
                        return Err(error);
                    }
                    (self.committed, self.lost, self.stale) =
                        (changed.revision, Lost::default(), false);
                    return Ok(());
                }
            }
        }
        self.runner = None;
        phases::count(Phase::UpWhole, 1);
        let stored = rows::read_plan(client, reads.plan, plan_id)
            .map_err(read)?
            .ok_or_else(|| plan_not_found(plan_id))?;
        let doc = stored.doc.map_err(invalid)?;
        self.runner = Some(runner_of(doc, stored.keys)?);
        (self.born, self.committed) = (stored.born, stored.revision);
        (self.lost, self.stale) = (Lost::default(), false);
        Ok(())
    }
}

/// Counts what a bring-up that reads only what changed read
/// ([`phases`]): the task rows, those the runner held already as read, the
/// keys asked for because a change not committed touched them
/// (`lost`), and a bring-up that found no task row.
fn count_rows(runner: &Runner, rows: &Rows, lost: usize) {
    let same = rows
        .tasks
        .iter()
        .filter(|(key, task)| {
            runner
                .order
                .find(*key)
                .ok()
                .and_then(|i| runner.doc.tasks.get(i))
                == Some(task)
        })
        .count();
    phases::count(Phase::RowsRead, rows.tasks.len() as u64);
    phases::count(Phase::RowsSame, same as u64);
    phases::count(Phase::RowsLost, lost as u64);
    if rows.tasks.is_empty() && rows.gone.is_empty() {
        phases::count(Phase::UpEmpty, 1);
    }
}
