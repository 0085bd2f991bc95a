//! The SQLite store's kept runner: each plan's runner (document and
//! indexes) stays in the process between changes, and a change runs on it
//! in place under the plan's lock — no copy of the document, no index built
//! again. What a refusal or a query may leave on it is checked, and the
//! runner dropped (read from the file again when next needed) when it could
//! hold what was not committed.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use crate::runner::error::OpError;
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::time::now_unix;
use crate::runner::{Applied, Caller, Runner};

use super::super::database::lock;
use super::super::sqlite_read_only;
use super::super::sqlite_rows::Writes;
use super::super::task_rows::{change_in_place, runner_of, InPlace};
use super::{writer_gone, Slot, SqliteStore};

/// How long a read waits for the changes queued before it to be committed
/// before it reads the database instead: a batch commits in milliseconds,
/// and reading a 100,000-task plan from its rows takes hundreds.
const SETTLE_WAIT: Duration = Duration::from_millis(500);

impl SqliteStore {
    /// Runs `change` on the plan's kept runner (read from the database
    /// when there is none), in place: the revision it ran on, and — when it
    /// changed anything — what to write and the record. A refusal or a
    /// change of nothing that left a trace (a task touched, the state
    /// changed) drops the runner, to be read again; one that left none
    /// keeps it.
    #[allow(clippy::type_complexity)]
    pub(super) fn change_cached(
        &self,
        plan_id: &str,
        slot: &mut Slot,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<(u64, Result<Option<(Writes, LogRecord)>, OpError>), OpError> {
        if slot.runner.is_none() {
            let (doc, keys) = self.read_rows(plan_id)?;
            let base = doc.state.revision;
            match runner_of(doc, keys) {
                Ok(runner) => slot.runner = Some(runner),
                Err(error) => return Ok((base, Err(error))),
            }
        }
        let Some(runner) = slot.runner.as_mut() else {
            return Err(writer_gone(&self.path));
        };
        let InPlace {
            base,
            outcome,
            trace,
            ..
        } = change_in_place(plan_id, runner, op, change);
        if self.shared.read_only && matches!(outcome, Ok(Some(_))) {
            slot.runner = None;
            return Err(sqlite_read_only::refused(&self.path));
        }
        if trace {
            slot.runner = None;
        }
        Ok((base, outcome))
    }

    /// Query `op` answered by the plan's kept runner, when there is one
    /// and it is the committed state: no change of the plan queued, no
    /// lease run out, the database at its revision (another process may
    /// have written). `None` otherwise: the caller reads the database. A
    /// query that left a trace (none should) drops the runner.
    pub(super) fn query_kept(
        &self,
        plan_id: &str,
        op: &Op,
        caller: &Caller,
    ) -> Result<Option<Result<Applied, OpError>>, OpError> {
        let now = now_unix();
        let Some(entry) = lock(&self.shared.entries).get(plan_id).cloned() else {
            return Ok(None);
        };
        let mut slot = lock(&entry.slot);
        if slot.queued != slot.settled {
            return Ok(None);
        }
        let Some(revision) = slot.runner.as_ref().map(|r| r.doc.state.revision) else {
            return Ok(None);
        };
        if self.read_revision(plan_id)? != Some(revision) {
            return Ok(None);
        }
        let Some(runner) = slot.runner.as_mut() else {
            return Ok(None);
        };
        if runner
            .index
            .leases
            .first()
            .is_some_and(|&(until, _)| until <= now)
        {
            return Ok(None);
        }
        let state = runner.doc.state.clone();
        let answer = runner.apply_as(op, &caller.clone().at(now));
        if !runner.take_touched().is_empty() || runner.doc.state != state {
            slot.runner = None;
        }
        Ok(Some(answer))
    }

    /// Runs `read` on plan `plan_id`'s kept runner, the committed state
    /// (`read` must leave it so: it may bring the paged reads' view up to
    /// date, nothing else): `true`; `false` (`read` not run) when there is no such plan,
    /// or changes of it stayed queued for [`SETTLE_WAIT`] (the caller then
    /// reads the database). A read waits for the changes queued before it
    /// to be committed, and when no runner is kept (none made yet, or one
    /// dropped) or the database moved past it (another process wrote),
    /// reads the plan from the rows once and keeps it as the runner the
    /// next changes and reads use. So an export or a page of a
    /// 100,000-task plan costs no second document, and a read after a
    /// change no pass over the rows (docs/performance.md, "Memory").
    pub(super) fn read_kept_runner(
        &self,
        plan_id: &str,
        read: &mut dyn FnMut(&mut Runner),
    ) -> Result<bool, OpError> {
        let entry = lock(&self.shared.entries).get(plan_id).cloned();
        let entry = match entry {
            Some(entry) => entry,
            // No entry is made for a plan that is not there.
            None if self.read_revision(plan_id)?.is_some() => self.entry(plan_id),
            None => return Ok(false),
        };
        let mut slot = lock(&entry.slot);
        let deadline = Instant::now() + SETTLE_WAIT;
        while slot.queued != slot.settled {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            slot = entry
                .settled
                .wait_timeout(slot, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let Some(committed) = self.read_revision(plan_id)? else {
            return Ok(false);
        };
        if slot.runner.as_ref().map(|r| r.doc.state.revision) != Some(committed) {
            if slot.runner.take().is_some() {
                // Another process moved the plan (no change of this one is
                // queued): what is computed from now on starts afresh.
                entry.epoch.fetch_add(1, Ordering::SeqCst);
            }
            let (doc, keys) = self.read_rows(plan_id)?;
            match runner_of(doc, keys) {
                Ok(runner) => slot.runner = Some(runner),
                Err(_) => return Ok(false),
            }
        }
        let Some(runner) = slot.runner.as_mut() else {
            return Ok(false);
        };
        read(runner);
        Ok(true)
    }
}
