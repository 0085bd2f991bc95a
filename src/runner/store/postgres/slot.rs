//! A plan as the PostgreSQL store keeps it in this process: its runner and
//! what is known of it against the plan's rows (the slot), and bringing
//! that runner up to the rows. The flow of a change through it is in
//! `kept.rs`; the writer (`writer.rs`) settles changes on it.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Condvar, Mutex};

use postgres::{GenericClient, Statement};

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
    /// Whether the writer is taking the plan's lock for a batch (from
    /// before it asks for the lock until it holds it and brought the runner
    /// up): a change made through [`PlanStore::apply`] meanwhile is queued
    /// without being computed ahead, and the writer computes it under the
    /// lock (it would be computed again there anyway: the plan is nearly
    /// always moved by the other server when the lock comes), so the runner
    /// keeps the tasks the writer read ahead.
    ///
    /// [`PlanStore::apply`]: crate::runner::store::plan_store::PlanStore::apply
    pub(super) in_flight: bool,
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
        lose_into(&mut self.lost, self.runner.as_ref(), touched);
    }

    /// What [`Self::lost`] becomes once every queued change is lost: the
    /// tasks to read again (with those written since [`Self::committed`])
    /// to bring the runner up under the plan's lock.
    pub(super) fn lost_with_pending(&self) -> Lost {
        let mut lost = self.lost.clone();
        for touched in &self.pending {
            lose_into(&mut lost, self.runner.as_ref(), touched);
        }
        lost
    }
}

/// Adds the tasks `touched` (changed on `runner`, not committed) to `lost`.
fn lose_into(lost: &mut Lost, runner: Option<&Runner>, touched: &Touched) {
    // A task inserted or removed and not committed is no row (or a row
    // still): the runner's list is not the plan's, which only reading it
    // whole undoes; so are steps changed.
    let runner = match runner {
        Some(runner) if !touched.is_reshaped() && !touched.steps_changed() => runner,
        _ => {
            lost.all = true;
            return;
        }
    };
    for id in touched.ids() {
        match runner.index.position.get(&id) {
            Some(&i) => {
                lost.keys.insert(runner.order.key(i));
            }
            None => lost.all = true,
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

/// A plan's rows read by the writer in the round trip that took its lock
/// (`begin.rs`): what changed since revision `since`, and the tasks at the
/// keys `lost`; `None` without the plan.
pub(super) struct ReadAhead {
    pub(super) since: u64,
    pub(super) lost: BTreeSet<i64>,
    pub(super) changed: Option<rows::Changed>,
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
        client: &mut impl GenericClient,
        reads: &Reads<'_>,
        shown: &str,
        plan_id: &str,
    ) -> Result<(), OpError> {
        self.bring_up_with(client, reads, shown, plan_id, None)
    }

    /// [`Self::bring_up`], with the rows `ahead` read under the plan's lock
    /// used instead of reading them when they are what it would read (the
    /// tasks written since the runner's committed revision and those it
    /// lost).
    pub(super) fn bring_up_with(
        &mut self,
        client: &mut impl GenericClient,
        reads: &Reads<'_>,
        shown: &str,
        plan_id: &str,
        ahead: Option<ReadAhead>,
    ) -> Result<(), OpError> {
        let read = |e: postgres::Error| sql_error(shown, "read", &e);
        let invalid = |e: String| not_a_state(shown, plan_id, &e);
        if self.runner.is_some() && !self.lost.all {
            let changed = match ahead {
                Some(ahead)
                    if ahead.since == self.committed && self.lost.keys.is_subset(&ahead.lost) =>
                {
                    ahead.changed
                }
                _ => {
                    let lost: Vec<i64> = self.lost.keys.iter().copied().collect();
                    rows::read_changed(client, reads.changed, plan_id, self.committed, &lost)
                        .map_err(read)?
                }
            };
            let changed = changed.ok_or_else(|| plan_not_found(plan_id))?;
            if changed.born == self.born && changed.reshaped <= self.committed {
                let rows = Rows {
                    header: changed.header.map_err(invalid)?,
                    steps: changed.steps.transpose().map_err(invalid)?,
                    gone: changed.gone,
                    tasks: changed.tasks.map_err(invalid)?,
                };
                if let Some(runner) = self.runner.as_mut() {
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
