//! The group commit of the PostgreSQL store: its writer threads, each
//! committing the changes queued meanwhile in one transaction (see the
//! store's documentation, "Group commit").

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use postgres::{Client, Statement};

use super::{doc_text, parse_doc, sql_error, Shared, MAX_CACHED, PER_TRANSACTION};
use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::LogRecord;
use crate::runner::store::database::{lock, record_json, summary_json, to_i64};
use crate::runner::store::plan_store::{plan_not_found, StoredEvent};

/// The most changes one transaction commits.
pub(super) const MAX_BATCH: usize = 1000;
/// The writer threads of a store handle. One: a batch is one statement
/// (its changes computed ahead by their callers), and the changes queued
/// while it commits make the next batch — fewer, larger transactions, so
/// fewer commits and WAL flushes a change than two writers made.
pub(super) const WRITERS: usize = 1;
const _: () = assert!((MAX_BATCH as i64) < PER_TRANSACTION);

/// The writer's connection and its statements.
struct WriterConn {
    client: Client,
    /// The advisory lock keys of plans (`$1`, in order).
    lock_keys: Statement,
    /// The rows of plans (`$1`), locked: each plan's id, revision, `xmin`,
    /// and its document unless its version is the one given (`$2`, `$3`).
    read: Statement,
    /// The batch's writes in one statement: the rows of the changed plans
    /// (`$1`–`$4`) and the events (`$5`–`$7`, in order); the transaction's
    /// id.
    write: Statement,
    /// The writes of changes computed ahead, a transaction of its own:
    /// the advisory locks of `$10` (in order), then as `write`, but each
    /// row (`$1`, `$4`–`$6`) only if it is still the version it was
    /// computed on (`$2`, `$3`), and the events (`$7`–`$9`) of those rows
    /// only; the plans written and the last event's position.
    write_if: Statement,
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
        let read = prepare(
            "SELECT p.plan_id, p.revision, p.xmin::text::bigint,
                 CASE WHEN p.revision = k.revision AND p.xmin::text::bigint = k.xmin
                      THEN NULL ELSE p.doc END
             FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS k(plan_id, revision, xmin)
             JOIN plans p ON p.plan_id = k.plan_id
             FOR UPDATE OF p",
        )?;
        let write = prepare(
            "WITH updated AS (
                 UPDATE plans p SET revision = u.revision, doc = u.doc, summary = u.summary
                 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[])
                     AS u(plan_id, revision, doc, summary)
                 WHERE p.plan_id = u.plan_id
             ), inserted AS (
                 INSERT INTO events (plan_id, seq, pos, record)
                 SELECT e.plan_id, e.seq, pg_current_xact_id()::text::bigint * 1024 + e.n, e.record
                 FROM unnest($5::text[], $6::bigint[], $7::text[]) WITH ORDINALITY
                     AS e(plan_id, seq, record, n)
             )
             SELECT pg_current_xact_id()::text",
        )?;
        // One statement, committed when it ends. The locks are the
        // update's one-time condition, so they are all held before it
        // touches a row (and takes its transaction id). Its snapshot may
        // predate a change committed while it waited for a lock: the update
        // then checks the version against the row as that change left it
        // (PostgreSQL re-reads an updated row before updating it).
        let write_if = prepare(
            "WITH locked AS MATERIALIZED (
                 SELECT count(*) AS n
                 FROM (SELECT pg_advisory_xact_lock(k) FROM unnest($10::bigint[]) AS k) l
             ), updated AS (
                 UPDATE plans p SET revision = u.revision, doc = u.doc, summary = u.summary
                 FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[],
                             $6::text[])
                     AS u(plan_id, base_revision, base_xmin, revision, doc, summary)
                 WHERE (SELECT n FROM locked) = cardinality($10::bigint[])
                   AND p.plan_id = u.plan_id AND p.revision = u.base_revision
                   AND p.xmin::text::bigint = u.base_xmin
                 RETURNING p.plan_id
             ), inserted AS (
                 INSERT INTO events (plan_id, seq, pos, record)
                 SELECT e.plan_id, e.seq, pg_current_xact_id()::text::bigint * 1024 + e.n, e.record
                 FROM unnest($7::text[], $8::bigint[], $9::text[]) WITH ORDINALITY
                     AS e(plan_id, seq, record, n)
                 WHERE e.plan_id IN (SELECT plan_id FROM updated)
                 RETURNING pos
             )
             SELECT ARRAY(SELECT plan_id FROM updated), (SELECT max(pos) FROM inserted)",
        )?;
        Ok(WriterConn {
            client,
            lock_keys,
            read,
            write,
            write_if,
        })
    }
}

/// A change on its way to the writer. The change itself stays with its
/// caller's thread: the caller computes it ahead on the state its handle
/// keeps of the plan, and the writer sends it the plan's state to compute
/// it on (again) when that was not the plan's state; then its answer.
pub(super) struct Job {
    pub(super) plan_id: String,
    /// The change as computed ahead, if it was.
    pub(super) precomputed: Option<Precomputed>,
    pub(super) to_caller: Sender<ToCaller>,
    pub(super) computed: Receiver<Computed>,
}

/// What the writer tells the caller of a change.
pub(super) enum ToCaller {
    /// Compute the change on this state; `last`: no later change of the
    /// batch is to this plan (so the caller writes out the new state's
    /// text, on its own thread).
    Compute { doc: Arc<PlanDocument>, last: bool },
    /// The change's answer, once its batch has committed (or failed).
    Done(Result<Option<StoredEvent>, OpError>),
}

/// A change computed: the new state and its record, nothing (no change),
/// or why it was refused.
pub(super) type Computed = Result<Option<Change>, OpError>;

/// A change computed ahead by its caller, on the state its handle kept of
/// the plan: that state's row version (revision, `xmin`), and the change.
pub(super) struct Precomputed {
    pub(super) revision: i64,
    pub(super) xmin: i64,
    pub(super) change: Change,
}

/// A change, computed and written out by its caller.
pub(super) struct Change {
    pub(super) doc: PlanDocument,
    pub(super) record: LogRecord,
    pub(super) record_text: String,
    /// The state's text and summary, when it was the batch's last change
    /// of its plan.
    pub(super) texts: Option<(String, String)>,
}

impl Change {
    /// The change to plan `plan_id` that made `doc` with `record`, written
    /// out; the state's text and summary too when `last`.
    pub(super) fn new(
        plan_id: &str,
        doc: PlanDocument,
        record: LogRecord,
        last: bool,
    ) -> Result<Change, OpError> {
        Ok(Change {
            record_text: record_json(&record)?,
            texts: last.then(|| (doc_text(&doc), summary_json(plan_id, &doc))),
            doc,
            record,
        })
    }
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

/// A transaction begun with advisory locks taken (see [`PLAN_LOCK`](super::PLAN_LOCK)),
/// rolled back when dropped uncommitted.
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

/// A writer: commits the queued changes, as many at a time as are queued,
/// on a connection of its own (made at its first batch, and again after
/// one broke). Ends when the store's handle goes.
pub(super) fn write_loop(shared: &Shared, queue: &Mutex<Receiver<Job>>) {
    let mut conn: Option<WriterConn> = None;
    loop {
        let mut batch = {
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
        let answers = match &mut conn {
            Some(conn) => commit(shared, conn, &mut batch),
            None => match WriterConn::connect(shared) {
                Ok(made) => commit(shared, conn.insert(made), &mut batch),
                Err(error) => Err(error),
            },
        };
        let answers = match answers {
            Ok(answers) => answers,
            Err(error) => batch.iter().map(|_| Err(error.clone())).collect(),
        };
        for (job, answer) in batch.into_iter().zip(answers) {
            let _ = job.to_caller.send(ToCaller::Done(answer));
        }
    }
}

/// One change of a batch, to be written.
struct Write {
    /// Its place in the batch.
    job: usize,
    record: LogRecord,
    record_text: String,
}

/// What a change of a batch is answered.
type Answer = Result<Option<StoredEvent>, OpError>;

/// Asks the next change of a plan's `queue` to be computed on the plan's
/// `state`; answers at once (without a change) those that cannot be: the
/// plan is not there (or not a state), or the caller is gone.
fn start(
    batch: &[&Job],
    queue: &mut VecDeque<usize>,
    state: &Result<Arc<PlanDocument>, OpError>,
    answers: &mut [Option<Answer>],
) {
    while let Some(&i) = queue.front() {
        let answer = match state {
            Err(error) => Err(error.clone()),
            Ok(doc) => {
                let compute = ToCaller::Compute {
                    doc: Arc::clone(doc),
                    last: queue.len() == 1,
                };
                match batch[i].to_caller.send(compute) {
                    Ok(()) => return,
                    Err(_) => Ok(None),
                }
            }
        };
        answers[i] = Some(answer);
        queue.pop_front();
    }
}

/// The batch's plans, in the order they first come; the plan of each job;
/// each plan's jobs, in order.
fn by_plan<'a>(batch: &[&'a Job]) -> (Vec<&'a str>, Vec<usize>, Vec<VecDeque<usize>>) {
    let mut plans: Vec<&str> = Vec::new();
    let mut places: HashMap<&str, usize> = HashMap::new();
    let mut plan_of: Vec<usize> = Vec::with_capacity(batch.len());
    let mut queues: Vec<VecDeque<usize>> = Vec::new();
    for (i, job) in batch.iter().enumerate() {
        let p = *places.entry(job.plan_id.as_str()).or_insert_with(|| {
            plans.push(&job.plan_id);
            queues.push(VecDeque::new());
            plans.len() - 1
        });
        plan_of.push(p);
        queues[p].push_back(i);
    }
    (plans, plan_of, queues)
}

/// Each plan's state, read in the batch's transaction (its rows locked):
/// the cached one if the row has not moved since, else the stored one.
fn read_states(
    shared: &Shared,
    client: &mut Client,
    read: &Statement,
    plans: &[&str],
) -> Result<Vec<Result<Arc<PlanDocument>, OpError>>, OpError> {
    let mut known: Vec<(i64, i64, Option<Arc<PlanDocument>>)> =
        plans.iter().map(|plan| shared.cached(plan)).collect();
    let revisions: Vec<i64> = known.iter().map(|k| k.0).collect();
    let xmins: Vec<i64> = known.iter().map(|k| k.1).collect();
    let rows = client
        .query(read, &[&plans, &revisions, &xmins])
        .map_err(|e| sql_error(&shared.shown, "write", &e))?;
    let mut states: Vec<Result<Arc<PlanDocument>, OpError>> =
        plans.iter().map(|plan| Err(plan_not_found(plan))).collect();
    let places: HashMap<&str, usize> = plans
        .iter()
        .enumerate()
        .map(|(p, plan)| (*plan, p))
        .collect();
    for row in &rows {
        let (plan_id, revision, xmin, text): (&str, i64, i64, Option<&str>) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let Some(&p) = places.get(plan_id) else {
            continue;
        };
        states[p] = match text {
            Some(text) => parse_doc(&shared.shown, plan_id, text).map(|doc| {
                let doc = Arc::new(doc);
                shared.remember(plan_id, revision, xmin, Arc::clone(&doc));
                doc
            }),
            None => known[p].2.take().ok_or_else(|| plan_not_found(plan_id)),
        };
    }
    Ok(states)
}

/// Commits `batch`: first the plans whose first change was computed ahead
/// on the version of the plan's row that is still there (one statement,
/// reading no row), then the others — and those whose row had
/// moved — in a second one, reading their rows ([`commit_batch`]). Each
/// change's answer; `Err` when the first transaction failed (then nothing
/// was committed).
fn commit(
    shared: &Shared,
    conn: &mut WriterConn,
    batch: &mut [Job],
) -> Result<Vec<Answer>, OpError> {
    let ahead = commit_precomputed(shared, conn, batch)?;
    let rest: Vec<&Job> = batch
        .iter()
        .zip(&ahead)
        .filter(|(_, answer)| answer.is_none())
        .map(|(job, _)| job)
        .collect();
    if rest.is_empty() {
        return Ok(ahead
            .into_iter()
            .map(|answer| answer.unwrap_or(Ok(None)))
            .collect());
    }
    // The first transaction's changes are committed whatever befalls the
    // second.
    let mut later = match commit_batch(shared, conn, &rest) {
        Ok(answers) => answers,
        Err(error) => rest.iter().map(|_| Err(error.clone())).collect(),
    }
    .into_iter();
    Ok(ahead
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| later.next().unwrap_or(Ok(None))))
        .collect())
}

/// A plan of the batch whose first change was computed ahead: the version
/// it was computed on, the state after each change so far, and the
/// changes' writes and answers (final once the plan's row is written).
struct Ahead {
    plan: usize,
    revision: i64,
    xmin: i64,
    state: Arc<PlanDocument>,
    texts: Option<(String, String)>,
    writes: Vec<Write>,
    answers: Vec<(usize, Answer)>,
}

/// Commits, in one statement that reads no row, the changes of the plans
/// whose first change in `batch` was computed ahead (each next
/// change of such a plan is computed now, by its caller, on the state
/// before it): each plan's row is written, with its events, only if it is
/// still the version that change was computed on. Each change's answer;
/// `None` for the changes of the other plans, and of those whose row had
/// moved (another handle changed the plan): they are to be made on the
/// row as it is.
fn commit_precomputed(
    shared: &Shared,
    conn: &mut WriterConn,
    batch: &mut [Job],
) -> Result<Vec<Option<Answer>>, OpError> {
    let mut ahead: Vec<Option<Precomputed>> =
        batch.iter_mut().map(|job| job.precomputed.take()).collect();
    let jobs: Vec<&Job> = batch.iter().collect();
    let mut answers: Vec<Option<Answer>> = jobs.iter().map(|_| None).collect();
    let (plans, _, mut queues) = by_plan(&jobs);
    let mut chains: Vec<Ahead> = queues
        .iter_mut()
        .enumerate()
        .filter_map(|(p, queue)| chain_ahead(&jobs, &mut ahead, p, queue))
        .collect();
    if chains.is_empty() {
        return Ok(answers);
    }
    let Written {
        plans: written,
        xid,
        positions,
    } = write_if_unmoved(shared, conn, &plans, &mut chains, jobs.len())?;
    for chain in chains {
        let plan_id = plans[chain.plan];
        if !written.iter().any(|plan| plan == plan_id) {
            // Its row moved: its changes are made again on the row as it is.
            continue;
        }
        for (i, answer) in chain.answers {
            answers[i] = Some(answer);
        }
        shared
            .committed_ahead
            .fetch_add(chain.writes.len() as u64, Ordering::Relaxed);
        for w in chain.writes {
            answers[w.job] = Some(Ok(Some(StoredEvent {
                plan_id: plan_id.to_owned(),
                seq: w.record.revision,
                position: positions[w.job].unwrap_or(0),
                record: w.record,
            })));
        }
        // The row's xmin is this transaction's id, the low 32 bits of it.
        let revision = to_i64(chain.state.state.revision);
        shared.remember(plan_id, revision, xid & 0xffff_ffff, chain.state);
    }
    Ok(answers)
}

/// The changes of plan `plan` (its jobs in `queue`) if its first change
/// was computed ahead: that change, then each next one, computed now by its
/// caller on the state the one before made. `None` if the first change
/// was not computed ahead (the plan's changes are made on its row).
fn chain_ahead(
    jobs: &[&Job],
    ahead: &mut [Option<Precomputed>],
    plan: usize,
    queue: &mut VecDeque<usize>,
) -> Option<Ahead> {
    let first = queue.front().copied()?;
    let Precomputed {
        revision,
        xmin,
        change,
    } = ahead[first].take()?;
    queue.pop_front();
    let mut chain = Ahead {
        plan,
        revision,
        xmin,
        state: Arc::new(change.doc),
        texts: change.texts,
        writes: vec![Write {
            job: first,
            record: change.record,
            record_text: change.record_text,
        }],
        answers: vec![(first, Ok(None))],
    };
    while let Some(i) = queue.pop_front() {
        let compute = ToCaller::Compute {
            doc: Arc::clone(&chain.state),
            last: queue.is_empty(),
        };
        let answer = match jobs[i]
            .to_caller
            .send(compute)
            .map(|()| jobs[i].computed.recv())
        {
            Ok(Ok(Ok(Some(change)))) => {
                chain.writes.push(Write {
                    job: i,
                    record: change.record,
                    record_text: change.record_text,
                });
                chain.state = Arc::new(change.doc);
                chain.texts = change.texts;
                Ok(None)
            }
            Ok(Ok(answer)) => answer.map(|_| None),
            // The caller is gone (its change panicked): nothing to write.
            Ok(Err(_)) | Err(_) => Ok(None),
        };
        chain.answers.push((i, answer));
    }
    Some(chain)
}

/// What [`write_if_unmoved`] wrote.
struct Written {
    /// The plans whose rows were still the versions their changes were
    /// computed on, and were written.
    plans: Vec<String>,
    /// The transaction's id.
    xid: i64,
    /// Per job of the batch: its event's position, if it had one.
    positions: Vec<Option<u64>>,
}

/// Sends the one statement that takes the plans' locks and writes each
/// chain's row, with its events, only if the row is still the version the
/// chain was computed on (`jobs`: the number of jobs of the batch; the
/// events of plans not written leave gaps in the positions).
fn write_if_unmoved(
    shared: &Shared,
    conn: &mut WriterConn,
    plans: &[&str],
    chains: &mut [Ahead],
    jobs: usize,
) -> Result<Written, OpError> {
    let write = |e: postgres::Error| sql_error(&shared.shown, "write", &e);
    let changed: Vec<&str> = chains.iter().map(|chain| plans[chain.plan]).collect();
    let mut keys = shared.lock_keys(conn, &changed)?;
    keys.sort_unstable();
    keys.dedup();
    let mut rows = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for chain in chains.iter_mut() {
        let doc = &chain.state;
        let plan_id = plans[chain.plan];
        let (text, summary) = chain
            .texts
            .take()
            .unwrap_or_else(|| (doc_text(doc), summary_json(plan_id, doc)));
        rows.0.push(chain.revision);
        rows.1.push(chain.xmin);
        rows.2.push(to_i64(doc.state.revision));
        rows.3.push(text);
        rows.4.push(summary);
    }
    // The events in the batch's order.
    let mut writes: Vec<(usize, &Write)> = chains
        .iter()
        .flat_map(|chain| chain.writes.iter().map(move |w| (chain.plan, w)))
        .collect();
    writes.sort_unstable_by_key(|(_, w)| w.job);
    let event_plans: Vec<&str> = writes.iter().map(|(p, _)| plans[*p]).collect();
    let seqs: Vec<i64> = writes
        .iter()
        .map(|(_, w)| to_i64(w.record.revision))
        .collect();
    let records: Vec<&str> = writes.iter().map(|(_, w)| w.record_text.as_str()).collect();
    let row = conn
        .client
        .query_one(
            &conn.write_if,
            &[
                &changed,
                &rows.0,
                &rows.1,
                &rows.2,
                &rows.3,
                &rows.4,
                &event_plans,
                &seqs,
                &records,
                &keys,
            ],
        )
        .map_err(write)?;
    let (written, last): (Vec<String>, Option<i64>) = (row.get(0), row.get(1));
    if !written.is_empty() {
        shared.notify();
    }
    // Each event's position: its place among the events sent.
    let xid: i64 = last.unwrap_or(0) / PER_TRANSACTION;
    let mut positions: Vec<Option<u64>> = vec![None; jobs];
    for (n, (_, w)) in (1..).zip(&writes) {
        positions[w.job] = Some((xid * PER_TRANSACTION + n) as u64);
    }
    Ok(Written {
        plans: written,
        xid,
        positions,
    })
}

/// What the changes of a batch made on the plans' rows as read.
struct OnRows {
    /// Each change's answer so far (`None`: answered once committed).
    answers: Vec<Option<Answer>>,
    /// The changes to write, in the batch's order.
    writes: Vec<Write>,
    /// Per plan: whether a change changed it.
    changed: Vec<bool>,
    /// Per plan: the text and summary of its state, if its last caller wrote
    /// them out.
    texts: Vec<Option<(String, String)>>,
}

/// The changes of `batch`, each on its plan's state (`states`, updated) as
/// the batch has it so far: the first change of every plan is computed at
/// once (by its caller), each next one when the one before is in.
fn compute_on_rows(
    batch: &[&Job],
    plan_of: &[usize],
    queues: &mut [VecDeque<usize>],
    states: &mut [Result<Arc<PlanDocument>, OpError>],
) -> OnRows {
    let plans = queues.len();
    let mut answers: Vec<Option<Answer>> = batch.iter().map(|_| None).collect();
    for p in 0..plans {
        start(batch, &mut queues[p], &states[p], &mut answers);
    }
    let mut writes: Vec<Write> = Vec::new();
    let mut changed = vec![false; plans];
    let mut texts: Vec<Option<(String, String)>> = (0..plans).map(|_| None).collect();
    for i in 0..batch.len() {
        if answers[i].is_some() {
            continue;
        }
        let p = plan_of[i];
        queues[p].pop_front();
        let answer = match batch[i].computed.recv() {
            Ok(Ok(Some(change))) => {
                writes.push(Write {
                    job: i,
                    record: change.record,
                    record_text: change.record_text,
                });
                states[p] = Ok(Arc::new(change.doc));
                texts[p] = change.texts;
                changed[p] = true;
                Ok(None)
            }
            Ok(answer) => answer.map(|_| None),
            // The caller is gone (its change panicked): nothing to write.
            Err(_) => Ok(None),
        };
        answers[i] = Some(answer);
        start(batch, &mut queues[p], &states[p], &mut answers);
    }
    OnRows {
        answers,
        writes,
        changed,
        texts,
    }
}

/// The rows of the changed plans, as the write statement takes them: plan
/// ids, revisions, documents' texts and summaries (those their callers
/// wrote out taken from `texts`).
fn changed_rows<'a>(
    plans: &[&'a str],
    states: &[Result<Arc<PlanDocument>, OpError>],
    changed: &[bool],
    texts: &mut [Option<(String, String)>],
) -> (Vec<&'a str>, Vec<i64>, Vec<String>, Vec<String>) {
    let mut rows = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (p, plan_id) in plans.iter().enumerate() {
        if let (true, Ok(doc)) = (changed[p], &states[p]) {
            let (text, summary) = texts[p]
                .take()
                .unwrap_or_else(|| (doc_text(doc), summary_json(plan_id, doc)));
            rows.0.push(*plan_id);
            rows.1.push(to_i64(doc.state.revision));
            rows.2.push(text);
            rows.3.push(summary);
        }
    }
    rows
}

/// The one statement that writes each changed plan's row once (`rows`, as
/// [`changed_rows`] gives them) and every event (`writes`, of the plans
/// `event_plans`): the transaction's id, as text.
fn write_rows(
    client: &mut Client,
    statement: &Statement,
    rows: (Vec<&str>, Vec<i64>, Vec<String>, Vec<String>),
    event_plans: &[&str],
    writes: &[Write],
) -> Result<String, postgres::Error> {
    let seqs: Vec<i64> = writes.iter().map(|w| to_i64(w.record.revision)).collect();
    let records: Vec<&str> = writes.iter().map(|w| w.record_text.as_str()).collect();
    let (ids, revisions, texts, summaries) = rows;
    let row = client.query_one(
        statement,
        &[
            &ids,
            &revisions,
            &texts,
            &summaries,
            &event_plans,
            &seqs,
            &records,
        ],
    )?;
    Ok(row.get(0))
}

/// Commits `batch` in one transaction: each change's answer; `Err` when
/// the transaction failed (then nothing of it was committed).
fn commit_batch(
    shared: &Shared,
    conn: &mut WriterConn,
    batch: &[&Job],
) -> Result<Vec<Answer>, OpError> {
    let write = |e: postgres::Error| sql_error(&shared.shown, "write", &e);
    let (plans, plan_of, mut queues) = by_plan(batch);
    // The plans' locks in the order of their keys: two batches (two
    // servers) that share plans queue, never deadlock.
    let mut keys = shared.lock_keys(conn, &plans)?;
    keys.sort_unstable();
    keys.dedup();
    let WriterConn {
        client,
        read,
        write: write_statement,
        ..
    } = conn;
    let tx = Open::begin(client, &keys).map_err(write)?;

    let mut states = read_states(shared, tx.client, read, &plans)?;

    let OnRows {
        answers,
        writes,
        changed,
        mut texts,
    } = compute_on_rows(batch, &plan_of, &mut queues, &mut states);
    let mut answers: Vec<Answer> = answers
        .into_iter()
        .map(|answer| answer.unwrap_or(Ok(None)))
        .collect();
    if writes.is_empty() {
        // Nothing changed: the transaction rolls back when dropped.
        return Ok(answers);
    }

    let rows = changed_rows(&plans, &states, &changed, &mut texts);
    let event_plans: Vec<&str> = writes.iter().map(|w| plans[plan_of[w.job]]).collect();
    let xid = write_rows(tx.client, write_statement, rows, &event_plans, &writes).map_err(write)?;
    tx.commit().map_err(write)?;
    shared.notify();
    shared
        .committed_on_rows
        .fetch_add(writes.len() as u64, Ordering::Relaxed);

    let xid: i64 = xid.parse().unwrap_or(0);
    for (n, w) in (1..).zip(writes) {
        answers[w.job] = Ok(Some(StoredEvent {
            plan_id: plans[plan_of[w.job]].to_owned(),
            seq: w.record.revision,
            position: (xid * PER_TRANSACTION + n) as u64,
            record: w.record,
        }));
    }
    // The rows' xmin is this transaction's id, the low 32 bits of it.
    for (p, state) in states.into_iter().enumerate() {
        if let (true, Ok(doc)) = (changed[p], state) {
            let revision = to_i64(doc.state.revision);
            shared.remember(plans[p], revision, xid & 0xffff_ffff, doc);
        }
    }
    Ok(answers)
}
