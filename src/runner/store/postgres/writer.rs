//! The group commit of the PostgreSQL store: its writer thread, committing
//! the changes queued meanwhile in one transaction (see the store's
//! documentation, "Group commit").

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use postgres::Statement;

use super::begin::Open;
use super::change::{compute, Computed, Redo};
use super::phases::{self, Phase};
use super::pipe::Pipe;
use super::rows::{self, EventWrite, PlanWrite};
use super::slot::{Entry, Reads};
use super::{sql_error, Shared, MAX_CACHED, PER_TRANSACTION};
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::LogRecord;
use crate::runner::store::database::lock;
use crate::runner::store::task_rows::RowWrites;
use crate::runner::Touched;

/// The most changes one transaction commits.
pub(super) const MAX_BATCH: usize = 1000;
/// The writer threads of a store handle. One: a batch is one transaction,
/// and the changes queued while it commits make the next batch — fewer,
/// larger transactions, so fewer commits and WAL flushes a change.
pub(super) const WRITERS: usize = 1;
const _: () = assert!((MAX_BATCH as i64) < PER_TRANSACTION);

/// The writer's connection (its write and `COMMIT` pipelined) and its
/// statements.
struct WriterConn {
    client: Pipe,
    /// The advisory lock keys of plans (`$1`, in order).
    lock_keys: Statement,
    /// [`rows::WRITE_ALL`].
    write: Statement,
    /// [`rows::READ_PLAN`] and [`rows::READ_CHANGED`].
    read_plan: Statement,
    changed: Statement,
}

impl WriterConn {
    fn connect(shared: &Shared) -> Result<WriterConn, OpError> {
        let mut client = Pipe::connect(&shared.url, &shared.shown)?;
        let mut prepare = |sql: &str| {
            client
                .prepare(sql)
                .map_err(|e| sql_error(&shared.shown, "connect", &e))
        };
        let lock_keys = prepare(
            "SELECT hashtextextended(id, 0) FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)
             ORDER BY n",
        )?;
        let write = prepare(rows::WRITE_ALL)?;
        let read_plan = prepare(rows::READ_PLAN)?;
        let changed = prepare(rows::READ_CHANGED)?;
        Ok(WriterConn {
            client,
            lock_keys,
            write,
            read_plan,
            changed,
        })
    }
}

/// A change on its way to the writer: computed by its caller on the plan's
/// kept runner, at revision `base` of the plan's row born `born`.
pub(super) struct Job {
    pub(super) plan_id: String,
    pub(super) entry: Arc<Entry>,
    /// The plan's epoch it was computed in.
    pub(super) epoch: u64,
    pub(super) base: u64,
    pub(super) born: i64,
    pub(super) writes: RowWrites,
    pub(super) record: LogRecord,
    pub(super) record_text: String,
    /// The change, when the writer can compute it again itself.
    pub(super) redo: Option<Redo>,
    /// What the writer tells its caller.
    pub(super) reply: Sender<ToCaller>,
}

/// What the writer tells the caller of a change.
pub(super) enum ToCaller {
    /// Its event's position once committed, or why not.
    Done(Result<u64, Reject>),
    /// Compute the change again on the kept runner (the writer brought it
    /// up to the rows, under the plan's lock) and send what it writes, or
    /// nothing when it was refused or changed nothing (then the caller
    /// answers it itself).
    Recompute(Sender<Recomputed>),
    /// The writer computed the change again (its [`Redo`]): the record it
    /// made, committed once `Done` says so.
    Redone(LogRecord),
    /// The writer computed the change again (its [`Redo`]) and it was
    /// refused or changed nothing: its answer (no `Done` follows).
    Answered(Result<(), OpError>),
}

/// A change computed again: what it writes, its record and the record's
/// text.
pub(super) type Recomputed = Option<(RowWrites, LogRecord, String)>;

/// A change's outcome: committed (its event's position and the revision
/// it made), or not.
type Outcome = Result<(u64, u64), Reject>;

/// Why the writer did not commit a change.
pub(super) enum Reject {
    /// The plan's row is not the version it was computed on: it is made
    /// again on the rows as they are.
    Outdated,
    /// The statement failed.
    Failed(OpError),
    /// Its caller answered it (refused, or it changed nothing, computed
    /// again on the rows).
    Answered,
}

impl Shared {
    /// The advisory lock keys of `plans` (`hashtextextended` of each id,
    /// as [`PLAN_LOCK`](super::PLAN_LOCK) takes it), asked once per plan.
    fn lock_keys(&self, conn: &mut WriterConn, plans: &[&str]) -> Result<Vec<i64>, OpError> {
        let mut keys: Vec<Option<i64>> = {
            let known = lock(&self.lock_keys);
            plans.iter().map(|plan| known.get(*plan).copied()).collect()
        };
        let unknown: Vec<&str> = plans
            .iter()
            .zip(&keys)
            .filter(|(_, key)| key.is_none())
            .map(|(plan, _)| *plan)
            .collect();
        if !unknown.is_empty() {
            let rows = conn
                .client
                .query(&conn.lock_keys, &[&unknown])
                .map_err(|e| sql_error(&self.shown, "write", &e))?;
            let mut known = lock(&self.lock_keys);
            if known.len() + unknown.len() > MAX_CACHED {
                known.clear();
            }
            let mut found = unknown
                .iter()
                .zip(rows.iter().map(|row| row.get::<_, i64>(0)));
            for key in keys.iter_mut().filter(|key| key.is_none()) {
                if let Some((plan, found)) = found.next() {
                    known.insert((*plan).to_owned(), found);
                    *key = Some(found);
                }
            }
        }
        keys.into_iter()
            .map(|key| {
                key.ok_or_else(|| {
                    OpError::new(
                        ErrorCode::StateIo,
                        format!("{}: no lock key for a plan", self.shown),
                    )
                })
            })
            .collect()
    }
}

/// A writer: commits the queued changes, as many at a time as are queued,
/// on a connection of its own (made at its first batch, and again after
/// one broke). Ends when the store's handle goes.
pub(super) fn write_loop(shared: &Shared, queue: &Mutex<Receiver<Job>>) {
    let mut conn: Option<WriterConn> = None;
    // Changes taken from the queue for a batch whose plans' locks they did
    // not share: first in the next batch.
    let mut carried: Vec<Job> = Vec::new();
    loop {
        let mut batch = std::mem::take(&mut carried);
        {
            let queue = lock(queue);
            if batch.is_empty() {
                let Ok(first) = queue.recv() else {
                    return;
                };
                batch.push(first);
                shared.queued.fetch_sub(1, Ordering::SeqCst);
            }
            take_queued(shared, &queue, &mut batch, |_| true, &mut carried);
        }
        phases::count(Phase::Batches, 1);
        if conn.as_ref().is_none_or(|conn| conn.client.is_closed()) {
            conn = None;
        }
        let outcomes = match &mut conn {
            Some(conn) => commit(shared, conn, &mut batch, queue, &mut carried),
            None => match WriterConn::connect(shared) {
                Ok(made) => commit(shared, conn.insert(made), &mut batch, queue, &mut carried),
                Err(error) => Err(error),
            },
        };
        phases::count(Phase::Changes, batch.len() as u64);
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(error) => batch
                .iter()
                .map(|_| Err(Reject::Failed(error.clone())))
                .collect(),
        };
        let answering = Instant::now();
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            {
                let mut slot = lock(&job.entry.slot);
                match &outcome {
                    Ok((_, revision)) => slot.settle(Some(*revision)),
                    Err(Reject::Answered) => slot.settle(Some(0)),
                    Err(_) => {
                        slot.settle(None);
                        job.entry.epoch.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
            job.entry.settled.notify_all();
            let answer = match outcome {
                Ok((position, _)) => Ok(position),
                Err(Reject::Answered) => continue,
                Err(reject) => Err(reject),
            };
            let _ = job.reply.send(ToCaller::Done(answer));
        }
        phases::took(Phase::Answer, answering);
        phases::report();
    }
}

/// Moves the changes queued (up to [`MAX_BATCH`] in all) into `batch`
/// when `joins` says so, else to the end of `carried` (a plan's changes
/// keep their order).
fn take_queued(
    shared: &Shared,
    queue: &Receiver<Job>,
    batch: &mut Vec<Job>,
    joins: impl Fn(&Job) -> bool,
    carried: &mut Vec<Job>,
) {
    while batch.len() + carried.len() < MAX_BATCH {
        let Ok(job) = queue.try_recv() else {
            break;
        };
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        // Behind a carried change of its plan, it waits too.
        if joins(&job) && !carried.iter().any(|c| c.plan_id == job.plan_id) {
            batch.push(job);
        } else {
            carried.push(job);
        }
    }
}

/// Each plan's changes in `batch` as one write, when they follow one
/// another (computed in the plan's current epoch, each on the revision the
/// one before made); the plan of each job; whether each plan's changes do
/// not follow one another (then they are all computed again on the rows).
#[allow(clippy::type_complexity)]
fn chains(batch: &[Job]) -> (Vec<PlanWrite<'_>>, Vec<Option<usize>>, Vec<bool>) {
    let mut plans: Vec<PlanWrite<'_>> = Vec::new();
    let mut broken: Vec<bool> = Vec::new();
    let mut places: HashMap<&str, usize> = HashMap::new();
    let mut plan_of = Vec::with_capacity(batch.len());
    for job in batch {
        let current = job.entry.epoch.load(Ordering::SeqCst) == job.epoch;
        let p = match places.get(job.plan_id.as_str()) {
            None => {
                plans.push(PlanWrite::new(
                    &job.plan_id,
                    job.base,
                    job.born,
                    &job.writes,
                ));
                broken.push(!current);
                places.insert(&job.plan_id, plans.len() - 1);
                plans.len() - 1
            }
            Some(&p) => {
                if current && !broken[p] && plans[p].last.revision == job.base {
                    plans[p].add(&job.writes);
                } else {
                    broken[p] = true;
                }
                p
            }
        };
        plan_of.push(Some(p));
    }
    (plans, plan_of, broken)
}

/// Each plan's kept runner (`plans`: a job of each) brought up to its rows
/// under its lock, the changes queued after it marked not to be written:
/// the version (revision, `born`) each is at.
fn bring_up_all<'a>(
    shared: &Shared,
    client: &mut Pipe,
    reads: &Reads<'_>,
    plans: &[&'a Job],
) -> Result<HashMap<&'a str, (u64, i64)>, OpError> {
    let mut bases = HashMap::new();
    for job in plans {
        let waiting = Instant::now();
        let mut slot = lock(&job.entry.slot);
        phases::took(Phase::SlotWait, waiting);
        phases::count(Phase::UpWriter, 1);
        // The changes queued after these were computed on the runner as it
        // was: not written; their tasks read again.
        job.entry.epoch.fetch_add(1, Ordering::SeqCst);
        let pending: Vec<Touched> = slot.pending.iter().cloned().collect();
        for touched in &pending {
            slot.lose(touched);
        }
        slot.bring_up(client, reads, &shared.shown, &job.plan_id)?;
        // No change is computed ahead on it until these are written.
        slot.stale = true;
        bases.insert(job.plan_id.as_str(), (slot.committed, slot.born));
    }
    Ok(bases)
}

/// Each change `moved` of `batch` computed again by its caller, in order:
/// what those that still change something write (with their place in
/// `moved`).
fn ask_again(batch: &[Job], moved: &[usize]) -> Vec<(usize, RowWrites, LogRecord, String)> {
    let mut again = Vec::new();
    for (k, &i) in moved.iter().enumerate() {
        let job = &batch[i];
        if let Some(redo) = &job.redo {
            if let Some((writes, record, text)) = redo_here(job, redo) {
                again.push((k, writes, record, text));
            }
            continue;
        }
        let (back, answer) = channel();
        if job.reply.send(ToCaller::Recompute(back)).is_err() {
            continue;
        }
        if let Ok(Some((writes, record, text))) = answer.recv() {
            again.push((k, writes, record, text));
        }
    }
    again
}

/// `job`'s change computed again by the writer on the plan's kept runner
/// (brought up to the rows): what it writes, its caller told its record;
/// `None` (its caller told its answer) when it was refused or changed
/// nothing.
fn redo_here(job: &Job, redo: &Redo) -> Recomputed {
    let mut slot = lock(&job.entry.slot);
    let change = &*redo.change;
    let answer = match compute(&mut slot, &job.plan_id, redo.op, &mut |runner| {
        change(runner)
    }) {
        Ok(Computed::Made(made)) => {
            let _ = job.reply.send(ToCaller::Redone(made.record.clone()));
            return Some((made.writes, made.record, made.record_text));
        }
        Ok(Computed::Answer(_, outcome)) => outcome,
        Err(error) => Err(error),
    };
    let _ = job.reply.send(ToCaller::Answered(answer));
    None
}

/// Commits `batch` in one transaction: `BEGIN` with the advisory locks of
/// its plans (in the order of their keys: two servers' batches that share
/// plans queue, never deadlock); each plan's row version read; the plans
/// still at the version their changes were computed on written as
/// computed, the others' kept runners brought up to their rows and their
/// changes computed again by their callers ([`bring_up_all`],
/// [`ask_again`]); one write of every plan's header, tasks and events;
/// `COMMIT`. Each change's outcome; `Err` when the transaction failed
/// (then nothing was committed, and the runners of the plans whose changes
/// were computed again are dropped).
fn commit(
    shared: &Shared,
    conn: &mut WriterConn,
    batch: &mut Vec<Job>,
    queue: &Mutex<Receiver<Job>>,
    carried: &mut Vec<Job>,
) -> Result<Vec<Outcome>, OpError> {
    let mut locked: Vec<String> = Vec::new();
    for job in batch.iter() {
        if !locked.contains(&job.plan_id) {
            locked.push(job.plan_id.clone());
        }
    }
    let ids: Vec<&str> = locked.iter().map(String::as_str).collect();
    let mut keys = shared.lock_keys(conn, &ids)?;
    keys.sort_unstable();
    keys.dedup();
    let write = |e: postgres::Error| sql_error(&shared.shown, "write", &e);
    let started = Instant::now();
    let (tx, versions) = Open::begin(&mut conn.client, &keys, &ids).map_err(write)?;
    phases::took(Phase::Lock, started);
    // The changes of these plans queued while it waited for their locks
    // join the batch (the others wait for the next).
    let before = batch.len();
    take_queued(
        shared,
        &lock(queue),
        batch,
        |job| ids.contains(&job.plan_id.as_str()),
        carried,
    );
    phases::count(Phase::Gathered, (batch.len() - before) as u64);
    let batch: &[Job] = batch;
    let (plans, plan_of, broken) = chains(batch);
    let current: Vec<bool> = plans
        .iter()
        .zip(&broken)
        .map(|(plan, broken)| {
            !broken
                && versions.iter().any(|(id, revision, born)| {
                    id == plan.plan_id && *revision as u64 == plan.base && *born == plan.born
                })
        })
        .collect();
    let moved: Vec<usize> = (0..batch.len())
        .filter(|&i| plan_of[i].is_some_and(|p| !current[p]))
        .collect();
    let mut moved_plans: Vec<&Job> = Vec::new();
    for &i in &moved {
        if !moved_plans
            .iter()
            .any(|job| job.plan_id == batch[i].plan_id)
        {
            moved_plans.push(&batch[i]);
        }
    }
    let reads = Reads {
        plan: &conn.read_plan,
        changed: &conn.changed,
    };
    let result = write_batch(
        shared,
        tx,
        &conn.write,
        &reads,
        batch,
        &plans,
        &plan_of,
        &current,
        &moved,
        &moved_plans,
    );
    for job in &moved_plans {
        let mut slot = lock(&job.entry.slot);
        match result {
            Ok(_) => slot.stale = !slot.lost.is_empty(),
            Err(_) => {
                slot.runner = None;
                slot.stale = true;
            }
        }
    }
    result
}

/// The events of the changes of `batch` written as computed ahead (their
/// plan is `current`), with their places in `batch`.
fn ahead_events<'a>(
    batch: &'a [Job],
    plan_of: &[Option<usize>],
    current: &[bool],
) -> Vec<(usize, EventWrite<'a>)> {
    batch
        .iter()
        .enumerate()
        .filter(|(i, _)| plan_of[*i].is_some_and(|p| current[p]))
        .map(|(i, job)| {
            let event = (
                job.plan_id.as_str(),
                job.record.revision,
                job.record_text.as_str(),
            );
            (i, event)
        })
        .collect()
}

/// [`commit`] once the plans' locks are held and their versions read:
/// `current` says which plans are at the version their changes were
/// computed on; `moved` are the changes of the others (`moved_plans`: a
/// change of each).
#[allow(clippy::too_many_arguments)]
fn write_batch(
    shared: &Shared,
    tx: Open<'_>,
    write_statement: &Statement,
    reads: &Reads<'_>,
    batch: &[Job],
    plans: &[PlanWrite<'_>],
    plan_of: &[Option<usize>],
    current: &[bool],
    moved: &[usize],
    moved_plans: &[&Job],
) -> Result<Vec<Outcome>, OpError> {
    let write = |e: postgres::Error| sql_error(&shared.shown, "write", &e);
    let mut again = Vec::new();
    let mut bases = HashMap::new();
    if !moved.is_empty() {
        let started = Instant::now();
        bases = bring_up_all(shared, tx.client, reads, moved_plans)?;
        phases::took(Phase::BringUp, started);
        let started = Instant::now();
        again = ask_again(batch, moved);
        phases::took(Phase::Recompute, started);
        phases::count(Phase::Moved, moved.len() as u64);
    }
    let mut outcomes: Vec<Outcome> = plan_of
        .iter()
        .map(|place| match place {
            Some(_) => Err(Reject::Answered),
            None => Err(Reject::Outdated),
        })
        .collect();
    // The writes: the plans computed ahead, then those computed again.
    let mut writes: Vec<PlanWrite<'_>> = plans
        .iter()
        .zip(current)
        .filter(|(_, current)| **current)
        .map(|(plan, _)| plan.clone())
        .collect();
    let mut events = ahead_events(batch, plan_of, current);
    let ahead = events.len();
    for (k, made, record, text) in &again {
        let i = moved[*k];
        let plan_id = batch[i].plan_id.as_str();
        match writes.iter_mut().find(|plan| plan.plan_id == plan_id) {
            Some(plan) => plan.add(made),
            None => {
                let (base, born) = bases.get(plan_id).copied().unwrap_or_default();
                writes.push(PlanWrite::new(plan_id, base, born, made));
            }
        }
        events.push((i, (plan_id, record.revision, text.as_str())));
    }
    if events.is_empty() {
        return Ok(outcomes);
    }
    let sent: Vec<EventWrite<'_>> = events.iter().map(|(_, event)| *event).collect();
    // The write and `COMMIT` in one round trip: the write fails unless
    // every plan's row was written (none moved under its lock), and then
    // nothing is committed.
    let started = Instant::now();
    let xid = tx
        .write_and_commit(write_statement, &writes, &sent)
        .map_err(write)?;
    phases::took(Phase::Write, started);
    shared.notify();
    shared
        .committed_ahead
        .fetch_add(ahead as u64, Ordering::Relaxed);
    shared
        .committed_on_rows
        .fetch_add((events.len() - ahead) as u64, Ordering::Relaxed);
    let revisions: HashMap<usize, u64> = again
        .iter()
        .map(|(k, made, _, _)| (moved[*k], made.revision))
        .collect();
    for (n, (i, _)) in (1..).zip(&events) {
        let revision = revisions
            .get(i)
            .copied()
            .unwrap_or(batch[*i].writes.revision);
        outcomes[*i] = Ok(((xid * PER_TRANSACTION + n) as u64, revision));
    }
    Ok(outcomes)
}
