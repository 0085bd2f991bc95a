//! The PostgreSQL store's kept runners: each plan's runner (document and
//! indexes) stays in the process, and a change runs on it in place under
//! the plan's in-process lock, as in the SQLite store (`task_rows.rs`). Other
//! processes change the plan too, so the runner is checked against the
//! plan's row: a change is written as computed only if the row is still
//! the version it was computed on (the writer checks under the plan's
//! lock), a query or a read answered only if the row's version is the
//! runner's. When the row moved, the runner is brought up to it by reading
//! only the tasks written since (`kept_rows.rs`), and a change is computed
//! again on it — by the writer's request, under the plan's lock, so it
//! cannot lose to another server's again.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::change::{compute, Computed, Made, Redo};
use super::phases::{self, Phase};
use super::rows::{self, PlanWrite};
use super::slot::{Entry, Lost, Slot};
use super::writer::{Job, Reject, ToCaller};
use super::{PostgresStore, PER_TRANSACTION};
use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::store::database::{kept_entry, lock};
use crate::runner::store::plan_store::{plan_not_found, StoredEvent};
use crate::runner::time::now_unix;
use crate::runner::{Applied, Caller, Runner, Touched};

/// How often a change is computed ahead (the runner brought up to the
/// rows each time) and found outdated — another server changed the plan
/// meanwhile — before it is made under the plan's advisory lock. Changes
/// made again ahead still share the writer's statements; one made under
/// the lock is a transaction of its own.
pub(super) const AHEAD_ATTEMPTS: usize = 3;

/// Waits until every change of the plan queued so far has settled; when
/// `block`, none is queued meanwhile (the runner is marked stale first).
fn settled<'a>(
    entry: &'a Entry,
    mut slot: MutexGuard<'a, Slot>,
    block: bool,
) -> MutexGuard<'a, Slot> {
    if block && slot.settled < slot.queued {
        slot.stale = true;
    }
    while slot.settled < slot.queued {
        slot = entry
            .settled
            .wait(slot)
            .unwrap_or_else(PoisonError::into_inner);
    }
    slot
}

impl PostgresStore {
    /// The plan's in-process entry.
    pub(super) fn entry(&self, plan_id: &str) -> Arc<Entry> {
        kept_entry(&mut lock(&self.shared.entries), plan_id, super::MAX_CACHED)
    }

    /// The slot's runner, brought up to the plan's row when the row moved
    /// (nothing queued): one small read when it had not.
    fn current<'a>(
        &self,
        plan_id: &str,
        slot: &'a mut Slot,
    ) -> Result<Option<&'a mut Runner>, OpError> {
        if slot.queued != slot.settled {
            return Ok(None);
        }
        self.with_conn(|conn| {
            let read = self.error("read");
            if let (false, Some(runner)) = (slot.stale, slot.runner.as_ref()) {
                let version = conn
                    .client
                    .query_opt(&conn.statements.version, &[&plan_id])
                    .map_err(&read)?
                    .ok_or_else(|| plan_not_found(plan_id))?;
                let (revision, born): (i64, i64) = (version.get(0), version.get(1));
                if (revision as u64, born) == (runner.doc.state.revision, slot.born) {
                    return Ok(());
                }
            }
            phases::count(Phase::UpRead, 1);
            let statements = &conn.statements;
            let mut tx = conn
                .client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .map_err(&read)?;
            slot.bring_up(&mut tx, &statements.reads(), &self.shared.shown, plan_id)?;
            tx.commit().map_err(&read)
        })?;
        Ok(slot.runner.as_mut())
    }

    /// The plan's committed document, from its kept runner when the row
    /// has not moved (else the runner is brought up first); read whole when
    /// changes of it are queued or it cannot be kept.
    pub(super) fn load_kept(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        let entry = self.entry(plan_id);
        let mut slot = lock(&entry.slot);
        // A plan the runner cannot index (a document edited by hand, say)
        // is still read whole.
        if let Ok(Some(runner)) = self.current(plan_id, &mut slot) {
            return Ok(runner.doc.clone());
        }
        drop(slot);
        let read = self.error("read");
        let stored = self.with_conn(|conn| {
            rows::read_plan(&mut conn.client, &conn.statements.read, plan_id).map_err(&read)
        })?;
        let stored = stored.ok_or_else(|| plan_not_found(plan_id))?;
        stored.doc.map_err(|e| self.not_a_state(plan_id, &e))
    }

    /// Query `op` answered by the plan's kept runner, brought up to the
    /// plan's row; `None` when changes of the plan are queued or a lease
    /// ran out (the caller reads the plan).
    pub(super) fn query_kept(
        &self,
        plan_id: &str,
        op: &Op,
        caller: &Caller,
    ) -> Result<Option<Result<Applied, OpError>>, OpError> {
        let now = now_unix();
        let entry = self.entry(plan_id);
        let mut slot = lock(&entry.slot);
        let Some(runner) = self.current(plan_id, &mut slot)? else {
            return Ok(None);
        };
        let ran_out = runner.index.leases.first();
        if ran_out.is_some_and(|&(until, _)| until <= now) {
            return Ok(None);
        }
        let state = runner.doc.state.clone();
        let answer = runner.apply_as(op, &caller.clone().at(now));
        let touched = runner.take_touched();
        if !touched.is_empty() || runner.doc.state != state {
            slot.lose(&touched);
        }
        Ok(Some(answer))
    }

    /// A change of plan `plan_id`: computed on its kept runner and handed to
    /// the writer; computed again (the runner brought up to the rows) when
    /// the row had moved, and made under the plan's lock when it moved
    /// [`AHEAD_ATTEMPTS`] times.
    ///
    /// With `redo`, the same change as `change`, the writer computes it
    /// again itself when the row had moved (no round trip to this thread
    /// under the plan's lock).
    pub(super) fn transact_kept(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
        redo: Option<&Redo>,
    ) -> Result<Option<StoredEvent>, OpError> {
        let entry = self.entry(plan_id);
        for _ in 0..self.shared.ahead_attempts.load(Ordering::Relaxed) {
            if let Some(answer) = self.change_ahead(plan_id, &entry, op, change, redo)? {
                return answer;
            }
        }
        self.change_locked(plan_id, &entry, op, change)
    }

    /// Change `op` made by `caller` on plan `plan_id` ([`Self::transact_kept`]
    /// with a [`Redo`]): its answer.
    pub(super) fn apply_change(
        &self,
        plan_id: &str,
        op: &Op,
        caller: &Caller,
    ) -> Result<Applied, OpError> {
        let applied = Arc::new(Mutex::new(None));
        let redo = Redo::of(op, caller, Arc::clone(&applied));
        let change = Arc::clone(&redo.change);
        self.transact_kept(
            plan_id,
            op.name(),
            &mut |runner| change(runner),
            Some(&redo),
        )?;
        let answer = lock(&applied).take();
        answer.ok_or_else(|| {
            OpError::new(
                ErrorCode::StateIo,
                "the store committed a change without running it",
            )
        })
    }

    /// The change computed on the kept runner (brought up first if it is
    /// stale) and committed by the writer if the row did not move: its
    /// answer, or `None` when the row had moved.
    #[allow(clippy::type_complexity)]
    fn change_ahead(
        &self,
        plan_id: &str,
        entry: &Arc<Entry>,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
        redo: Option<&Redo>,
    ) -> Result<Option<Result<Option<StoredEvent>, OpError>>, OpError> {
        let Some((queue, _)) = &self.writer else {
            return Err(self.writer_gone());
        };
        let (reply, answer) = channel();
        let record = {
            let mut slot = lock(&entry.slot);
            if slot.stale || slot.runner.is_none() {
                slot = settled(entry, slot, true);
                phases::count(Phase::UpAhead, 1);
                self.with_conn(|conn| {
                    let reads = conn.statements.reads();
                    slot.bring_up(&mut conn.client, &reads, &self.shared.shown, plan_id)
                })?;
            }
            let epoch = entry.epoch.load(Ordering::SeqCst);
            let born = slot.born;
            let made = match compute(&mut slot, plan_id, op, change)? {
                Computed::Made(made) => *made,
                Computed::Answer(base, outcome) => {
                    // An answer about the kept state: it stands if that was
                    // the row's. The changes queued before it settled, the
                    // row's version is read without the slot held (the
                    // writer may need it meanwhile, to bring the runner up
                    // under the plan's lock): the epoch, read after the
                    // version, says the changes queued before it were
                    // committed as computed, so that revision `base` of
                    // the row is the state it was computed on.
                    drop(settled(entry, slot, false));
                    let checking = Instant::now();
                    let version = self.version(plan_id)?;
                    phases::took(Phase::RefusedCheck, checking);
                    phases::count(Phase::Refused, 1);
                    if entry.epoch.load(Ordering::SeqCst) == epoch && version == Some((base, born))
                    {
                        phases::count(Phase::RefusedStood, 1);
                        return Ok(Some(outcome.map(|()| None)));
                    }
                    lock(&entry.slot).stale = true;
                    return Ok(None);
                }
            };
            let record = made.record.clone();
            let job = Job {
                plan_id: plan_id.to_owned(),
                entry: Arc::clone(entry),
                epoch,
                base: made.base,
                born,
                writes: made.writes,
                record: made.record,
                record_text: made.record_text,
                redo: redo.cloned(),
                reply,
            };
            self.enqueue(queue, &mut slot, job, made.touched)?;
            record
        };
        self.answer(plan_id, entry, record, &answer, op, change)
    }

    /// The writer's answer to a change queued with `record`: its event once
    /// committed, `None` when it was outdated; computed again first when the
    /// writer asks (the row had moved: it holds the plan's lock and brought
    /// the runner up to the rows).
    #[allow(clippy::type_complexity)]
    fn answer(
        &self,
        plan_id: &str,
        entry: &Entry,
        mut record: LogRecord,
        answer: &Receiver<ToCaller>,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<Result<Option<StoredEvent>, OpError>>, OpError> {
        loop {
            match answer.recv() {
                Ok(ToCaller::Done(Ok(position))) => {
                    return Ok(Some(Ok(Some(StoredEvent {
                        plan_id: plan_id.to_owned(),
                        seq: record.revision,
                        position,
                        record,
                    }))))
                }
                Ok(ToCaller::Done(Err(Reject::Failed(error)))) => return Err(error),
                Ok(ToCaller::Done(Err(_))) => return Ok(None),
                Ok(ToCaller::Recompute(back)) => {
                    let mut slot = lock(&entry.slot);
                    match compute(&mut slot, plan_id, op, change) {
                        Ok(Computed::Made(made)) => {
                            record = made.record.clone();
                            let _ = back.send(Some((made.writes, made.record, made.record_text)));
                        }
                        Ok(Computed::Answer(_, outcome)) => {
                            let _ = back.send(None);
                            return Ok(Some(outcome.map(|()| None)));
                        }
                        Err(error) => {
                            let _ = back.send(None);
                            return Err(error);
                        }
                    }
                }
                Ok(ToCaller::Redone(made)) => record = made,
                Ok(ToCaller::Answered(outcome)) => return Ok(Some(outcome.map(|()| None))),
                Err(_) => return Err(self.writer_gone()),
            }
        }
    }

    /// Hands `job` (which touched `touched`) to the writer, counted as
    /// queued for its plan.
    fn enqueue(
        &self,
        queue: &Sender<Job>,
        slot: &mut Slot,
        job: Job,
        touched: Touched,
    ) -> Result<(), OpError> {
        slot.pending.push_back(touched);
        slot.queued += 1;
        self.shared.queued.fetch_add(1, Ordering::SeqCst);
        if queue.send(job).is_err() {
            self.shared.queued.fetch_sub(1, Ordering::SeqCst);
            slot.queued -= 1;
            let touched = slot.pending.pop_back().unwrap_or_default();
            slot.lose(&touched);
            return Err(self.writer_gone());
        }
        Ok(())
    }

    /// The change made under the plan's advisory lock, on the kept runner
    /// brought up to the rows as they are then, and committed before the
    /// lock is let go (four round trips and the rows read; no other server
    /// can move the plan meanwhile).
    fn change_locked(
        &self,
        plan_id: &str,
        entry: &Entry,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        let mut slot = settled(entry, lock(&entry.slot), true);
        let slot = &mut *slot;
        let write = self.error("write");
        self.with_conn(|conn| {
            let statements = &conn.statements;
            let mut tx = conn.client.transaction().map_err(&write)?;
            tx.execute(&statements.lock, &[&plan_id]).map_err(&write)?;
            phases::count(Phase::UpWriter, 1);
            slot.stale = true;
            slot.bring_up(&mut tx, &statements.reads(), &self.shared.shown, plan_id)?;
            let born = slot.born;
            let Made {
                base,
                writes,
                record,
                record_text,
                touched,
            } = match compute(slot, plan_id, op, change)? {
                Computed::Made(made) => *made,
                Computed::Answer(_, outcome) => return outcome.map(|()| None),
            };
            let committed = (|| {
                let plan = PlanWrite::new(plan_id, base, born, &writes);
                let event = (plan_id, record.revision, record_text.as_str());
                let (written, xid) =
                    rows::write(&mut tx, &statements.write, &[], &[plan], &[event])
                        .map_err(&write)?;
                if written.is_empty() {
                    return Err(plan_not_found(plan_id));
                }
                tx.commit().map_err(&write)?;
                Ok(xid)
            })();
            let xid = match committed {
                Ok(xid) => xid,
                Err(error) => {
                    slot.lose(&touched);
                    return Err(error);
                }
            };
            slot.committed = writes.revision;
            self.shared.notify();
            self.shared
                .committed_on_rows
                .fetch_add(1, Ordering::Relaxed);
            Ok(Some(StoredEvent {
                plan_id: plan_id.to_owned(),
                seq: record.revision,
                position: (xid * PER_TRANSACTION + 1) as u64,
                record,
            }))
        })
    }

    /// Plan `plan_id`'s row version (revision, `born`); `None` without it.
    fn version(&self, plan_id: &str) -> Result<Option<(u64, i64)>, OpError> {
        let read = self.error("read");
        self.with_conn(|conn| {
            let row = conn
                .client
                .query_opt(&conn.statements.version, &[&plan_id])
                .map_err(&read)?;
            Ok(row.map(|row| (row.get::<_, i64>(0) as u64, row.get::<_, i64>(1))))
        })
    }

    /// Has plan `plan_id`'s slot keep `doc` as the plan created (or started
    /// over) with `born`, or nothing when `doc` is `None` (deleted); under
    /// the slot's lock, nothing of the plan queued.
    pub(super) fn replace_kept(
        &self,
        plan_id: &str,
        write: impl FnOnce() -> Result<Option<(PlanDocument, i64)>, OpError>,
    ) -> Result<(), OpError> {
        let entry = self.entry(plan_id);
        let mut slot = settled(&entry, lock(&entry.slot), true);
        entry.epoch.fetch_add(1, Ordering::SeqCst);
        slot.runner = None;
        slot.stale = false;
        slot.lost = Lost::default();
        if let Some((doc, born)) = write()? {
            slot.committed = doc.state.revision;
            slot.born = born;
            slot.runner = Runner::new(doc).ok();
        }
        Ok(())
    }
}
