//! The group commit of the PostgreSQL store: its writer thread, committing
//! the changes queued meanwhile in one statement (see the store's
//! documentation, "Group commit").

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use postgres::{Client, Statement};

use super::kept::Entry;
use super::rows::{self, EventWrite, PlanWrite};
use super::{sql_error, Shared, MAX_CACHED, PER_TRANSACTION};
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::LogRecord;
use crate::runner::store::database::lock;
use crate::runner::store::task_rows::RowWrites;

/// The most changes one transaction commits.
pub(super) const MAX_BATCH: usize = 1000;
/// The writer threads of a store handle. One: a batch is one statement,
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
        Ok(WriterConn {
            client,
            lock_keys,
            write,
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
    /// Its event's position once committed, or why not.
    pub(super) reply: Sender<Result<u64, Reject>>,
}

/// Why the writer did not commit a change.
pub(super) enum Reject {
    /// The plan's row is not the version it was computed on: it is made
    /// again on the rows as they are.
    Outdated,
    /// The statement failed.
    Failed(OpError),
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
                let committed = outcome.is_ok().then_some(job.writes.revision);
                slot.settle(committed);
                if committed.is_none() {
                    job.entry.epoch.fetch_add(1, Ordering::SeqCst);
                }
            }
            job.entry.settled.notify_all();
            let _ = job.reply.send(outcome);
        }
    }
}

/// Each plan's changes in `batch` that follow one another (computed in
/// the plan's current epoch, each on the revision the one before made), as
/// one write; the plan of each job (`None`: not written, outdated).
fn chains(batch: &[Job]) -> (Vec<PlanWrite<'_>>, Vec<Option<usize>>) {
    let mut plans: Vec<PlanWrite<'_>> = Vec::new();
    let mut places: HashMap<&str, Option<usize>> = HashMap::new();
    let mut plan_of = Vec::with_capacity(batch.len());
    for job in batch {
        let current = job.entry.epoch.load(Ordering::SeqCst) == job.epoch;
        let place = match places.get(job.plan_id.as_str()) {
            None if current => {
                plans.push(PlanWrite::new(
                    &job.plan_id,
                    job.base,
                    job.born,
                    &job.writes,
                ));
                Some(plans.len() - 1)
            }
            Some(Some(p)) if current && plans[*p].last.revision == job.base => {
                plans[*p].add(&job.writes);
                Some(*p)
            }
            // Once a change of a plan is outdated, so are the next ones.
            _ => None,
        };
        places.insert(&job.plan_id, place);
        plan_of.push(place);
    }
    (plans, plan_of)
}

/// Commits `batch` in one statement: each plan's row and tasks only if it
/// is still the version the plan's first change was computed on. Each
/// change's event position, or why it was not committed; `Err` when the
/// statement failed (then nothing was committed).
fn commit(
    shared: &Shared,
    conn: &mut WriterConn,
    batch: &[Job],
) -> Result<Vec<Result<u64, Reject>>, OpError> {
    let (plans, plan_of) = chains(batch);
    if plans.is_empty() {
        return Ok(batch.iter().map(|_| Err(Reject::Outdated)).collect());
    }
    // The plans' locks in the order of their keys: two servers' batches
    // that share plans queue, never deadlock.
    let ids: Vec<&str> = plans.iter().map(|plan| plan.plan_id).collect();
    let mut keys = shared.lock_keys(conn, &ids)?;
    keys.sort_unstable();
    keys.dedup();
    let events: Vec<EventWrite<'_>> = batch
        .iter()
        .zip(&plan_of)
        .filter(|(_, place)| place.is_some())
        .map(|(job, _)| {
            (
                job.plan_id.as_str(),
                job.record.revision,
                job.record_text.as_str(),
            )
        })
        .collect();
    let (written, xid) = rows::write(&mut conn.client, &conn.write, &keys, &plans, &events)
        .map_err(|e| sql_error(&shared.shown, "write", &e))?;
    let written: Vec<bool> = plans
        .iter()
        .map(|plan| written.iter().any(|id| id == plan.plan_id))
        .collect();
    if written.iter().any(|w| *w) {
        shared.notify();
    }
    // Each event's position: its place among the events sent.
    let mut n = 0;
    let outcomes: Vec<Result<u64, Reject>> = plan_of
        .iter()
        .map(|place| {
            let Some(p) = place else {
                return Err(Reject::Outdated);
            };
            n += 1;
            match written[*p] {
                true => Ok((xid * PER_TRANSACTION + n) as u64),
                false => Err(Reject::Outdated),
            }
        })
        .collect();
    let ahead = outcomes.iter().filter(|o| o.is_ok()).count();
    shared
        .committed_ahead
        .fetch_add(ahead as u64, Ordering::Relaxed);
    Ok(outcomes)
}
