//! The group commit of the PostgreSQL store: its writer thread, committing
//! the changes queued meanwhile in one transaction (see the store's
//! documentation, "Group commit").

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use postgres::{Client, Statement};

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

/// The writer's connection and its statement.
struct WriterConn {
    client: Client,
    /// The advisory lock keys of plans (`$1`, in order).
    lock_keys: Statement,
    /// [`rows::WRITE`].
    write: Statement,
    /// [`rows::READ_PLAN`] and [`rows::READ_CHANGED`].
    read_plan: Statement,
    changed: Statement,
    /// The versions (plan id, revision, `born`) of plans `$1`.
    versions: Statement,
}

impl WriterConn {
    fn connect(shared: &Shared) -> Result<WriterConn, OpError> {
        let mut client = shared.connect()?;
        let mut prepare = |sql: &str| {
            client
                .prepare(sql)
                .map_err(|e| sql_error(&shared.shown, "connect", &e))
        };
        let lock_keys = prepare(
            "SELECT hashtextextended(id, 0) FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)
             ORDER BY n",
        )?;
        let write = prepare(rows::WRITE)?;
        let read_plan = prepare(rows::READ_PLAN)?;
        let changed = prepare(rows::READ_CHANGED)?;
        let versions =
            prepare("SELECT plan_id, revision, born FROM plans WHERE plan_id = ANY($1::text[])")?;
        Ok(WriterConn {
            versions,
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
    loop {
        let batch = {
            let queue = lock(queue);
            let Ok(first) = queue.recv() else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(job) => batch.push(job),
                    Err(_) => break,
                }
            }
            batch
        };
        shared.queued.fetch_sub(batch.len(), Ordering::SeqCst);
        if conn.as_ref().is_none_or(|conn| conn.client.is_closed()) {
            conn = None;
        }
        let outcomes = match &mut conn {
            Some(conn) => commit(shared, conn, &batch),
            None => match WriterConn::connect(shared) {
                Ok(made) => commit(shared, conn.insert(made), &batch),
                Err(error) => Err(error),
            },
        };
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(error) => batch
                .iter()
                .map(|_| Err(Reject::Failed(error.clone())))
                .collect(),
        };
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

/// A transaction begun with advisory locks taken (see
/// [`PLAN_LOCK`](super::PLAN_LOCK)), rolled back when dropped uncommitted.
struct Open<'a> {
    client: &'a mut Client,
    done: bool,
}

impl<'a> Open<'a> {
    /// `BEGIN` and the locks of `keys`, in their order, in one round trip
    /// (the keys are numbers: nothing of a plan id is spliced into SQL).
    fn begin(client: &'a mut Client, keys: &[i64]) -> Result<Open<'a>, postgres::Error> {
        let mut sql = String::from("BEGIN");
        for key in keys {
            sql.push_str(&format!("; SELECT pg_advisory_xact_lock({key})"));
        }
        if let Err(error) = client.batch_execute(&sql) {
            // Begun but not locked (a timeout, say): end it.
            let _ = client.batch_execute("ROLLBACK");
            return Err(error);
        }
        Ok(Open {
            client,
            done: false,
        })
    }

    fn commit(mut self) -> Result<(), postgres::Error> {
        self.done = true;
        self.client.batch_execute("COMMIT")
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if !self.done {
            // A connection that cannot roll back is broken: closed, and not
            // reused.
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

/// Each plan's kept runner (`plans`: a job of each) brought up to its rows
/// under its lock, the changes queued after it marked not to be written:
/// the version (revision, `born`) each is at.
fn bring_up_all<'a>(
    shared: &Shared,
    client: &mut Client,
    reads: &Reads<'_>,
    plans: &[&'a Job],
) -> Result<HashMap<&'a str, (u64, i64)>, OpError> {
    let mut bases = HashMap::new();
    for job in plans {
        let mut slot = lock(&job.entry.slot);
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
        let (back, answer) = channel();
        if batch[i].reply.send(ToCaller::Recompute(back)).is_err() {
            continue;
        }
        if let Ok(Some((writes, record, text))) = answer.recv() {
            again.push((k, writes, record, text));
        }
    }
    again
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
fn commit(shared: &Shared, conn: &mut WriterConn, batch: &[Job]) -> Result<Vec<Outcome>, OpError> {
    let (plans, plan_of, broken) = chains(batch);
    let ids: Vec<&str> = plans.iter().map(|plan| plan.plan_id).collect();
    let mut keys = shared.lock_keys(conn, &ids)?;
    keys.sort_unstable();
    keys.dedup();
    let write = |e: postgres::Error| sql_error(&shared.shown, "write", &e);
    let tx = Open::begin(&mut conn.client, &keys).map_err(write)?;
    let rows = tx.client.query(&conn.versions, &[&ids]).map_err(write)?;
    let current: Vec<bool> = plans
        .iter()
        .zip(&broken)
        .map(|(plan, broken)| {
            !broken
                && rows.iter().any(|row| {
                    let (id, revision, born): (&str, i64, i64) =
                        (row.get(0), row.get(1), row.get(2));
                    id == plan.plan_id && revision as u64 == plan.base && born == plan.born
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
        bases = bring_up_all(shared, tx.client, reads, moved_plans)?;
        again = ask_again(batch, moved);
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
    let mut events: Vec<(usize, EventWrite<'_>)> = batch
        .iter()
        .enumerate()
        .filter(|(i, _)| plan_of[*i].is_some_and(|p| current[p]))
        .map(|(i, job)| {
            (
                i,
                (
                    job.plan_id.as_str(),
                    job.record.revision,
                    job.record_text.as_str(),
                ),
            )
        })
        .collect();
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
    let (written, xid) =
        rows::write(tx.client, write_statement, &[], &writes, &sent).map_err(write)?;
    if written.len() != writes.len() {
        return Err(OpError::new(
            ErrorCode::StateIo,
            format!("{}: a plan's row moved under its lock", shared.shown),
        ));
    }
    tx.commit().map_err(write)?;
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
