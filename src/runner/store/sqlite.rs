//! The SQLite backend of [`PlanStore`]: many plans in one database file.
//!
//! Tables: `plans` (a row per plan: its state document without its tasks,
//! revision and summary), `tasks` (a row per task, by order key,
//! `sqlite_rows.rs`), `plan_steps`,
//! `events` (a row per committed change: its record, the plan's
//! revision as `seq`, and an `AUTOINCREMENT` position, which is the global
//! commit order because SQLite has one writer at a time), and
//! `schema_version`. The database is in WAL mode with `synchronous=FULL`: a
//! commit is on disk before it is acknowledged.
//!
//! **Group commit.** A change is computed by its caller, under the plan's
//! in-process lock, on the plan's latest state — the committed one, or the
//! one the changes still queued here will make, kept as a runner and
//! changed in place (`sqlite_kept.rs`) — and handed, as the task rows it
//! touched, to one writer thread. The writer takes every change queued
//! meanwhile and commits them
//! in one `BEGIN IMMEDIATE` transaction (one fsync for all), then answers
//! each caller. A change is checked against the database before it is
//! written: the plan's revision must be the one it was computed on, and no
//! change it was computed after may have been refused; otherwise it is
//! computed again on the state in the database (another process wrote to
//! the plan, or a batch failed). So every change is acknowledged only once
//! durable, and none is lost, whether one process or several use the file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde_json::json;

use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::{Applied, Caller, KeptPlan, Runner};

use super::database::{
    apply_with_kept, kept_entry, lock, prepare_create, record_json, summary_json, to_i64,
    MAX_KEPT_PLANS,
};
use super::plan_store::{
    plan_exists, plan_not_found, validate_plan_id, PlanStore, PlanSummary, StoredEvent, Subscribers,
};
use super::sqlite_read_only;
use super::sqlite_rows::{self, Writes};

/// How long a write waits for another process's write lock on the file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// The most changes one transaction commits.
const MAX_BATCH: usize = 1024;
/// How often a change computed on an outdated state is computed again
/// before the store gives up (`STATE_LOCKED`).
const MAX_ATTEMPTS: usize = 1000;
/// How often subscribers look for changes made by other processes.
const POLL: Duration = Duration::from_millis(200);
/// The most idle read connections kept open.
const MAX_READERS: usize = 32;
/// The most plans kept in the process (their locks and runners), as in the
/// PostgreSQL store; a few in the unit tests, to run past it cheaply.
const MAX_KEPT: usize = if cfg!(test) { 8 } else { MAX_KEPT_PLANS };

/// The schema this planc writes.
pub(crate) const SCHEMA_VERSION: i64 = 5;

/// One migration: it takes the schema to its version.
type Migration = fn(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>;

/// The migrations, in order: each takes the schema from the version before
/// it to its own.
const MIGRATIONS: [(i64, Migration); 5] = [
    (1, migrate_to_1),
    (2, migrate_to_2),
    (3, sqlite_rows::migrate_to_3),
    (4, sqlite_rows::migrate_to_4),
    (5, sqlite_rows::migrate_to_5),
];

/// Version 1: plans and their events.
fn migrate_to_1(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE plans (
             plan_id  TEXT PRIMARY KEY NOT NULL,
             revision INTEGER NOT NULL,
             doc      TEXT NOT NULL
         );
         CREATE TABLE events (
             position INTEGER PRIMARY KEY AUTOINCREMENT,
             plan_id  TEXT NOT NULL,
             seq      INTEGER NOT NULL,
             record   TEXT NOT NULL,
             UNIQUE (plan_id, seq)
         );",
    )
}

/// Version 2: each plan's summary beside its document, so that listing the
/// plans reads no document.
fn migrate_to_2(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch("ALTER TABLE plans ADD COLUMN summary TEXT NOT NULL DEFAULT '{}'")?;
    let rows: Vec<(String, String)> = {
        let mut select = tx.prepare("SELECT plan_id, doc FROM plans")?;
        let rows = select.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    for (plan_id, doc) in rows {
        // A document that does not parse keeps the empty summary; reading
        // the plan says what is wrong with it.
        if let Ok(doc) = serde_json::from_str::<PlanDocument>(&doc) {
            tx.execute(
                "UPDATE plans SET summary = ?1 WHERE plan_id = ?2",
                params![summary_json(&plan_id, &doc), plan_id],
            )?;
        }
    }
    Ok(())
}

/// Many plans in one SQLite file.
pub struct SqliteStore {
    path: PathBuf,
    shared: Arc<Shared>,
    jobs: Sender<Job>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// What the store's handle, its writer and its publisher share.
struct Shared {
    /// Opened read-only: reads only, every change refused.
    read_only: bool,
    path: PathBuf,
    /// Each plan's in-process lock and latest state.
    entries: Mutex<HashMap<String, Arc<Entry>>>,
    /// Idle read connections.
    readers: Mutex<Vec<Connection>>,
    subscribers: Subscribers,
    /// Whether the publisher runs.
    publishing: Mutex<bool>,
    /// Rung after every commit by this process.
    commits: Arc<Signal>,
}

/// A counter and a condition variable: "something was committed".
#[derive(Default)]
struct Signal {
    count: Mutex<u64>,
    rung: Condvar,
}

impl Signal {
    fn ring(&self) {
        *lock(&self.count) += 1;
        self.rung.notify_all();
    }

    /// Waits until rung after `seen`, or `timeout`; the count now.
    fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let count = lock(&self.count);
        let (count, _) = self
            .rung
            .wait_timeout_while(count, timeout, |count| *count == seen)
            .unwrap_or_else(PoisonError::into_inner);
        *count
    }
}

/// One plan in this process.
#[derive(Default)]
struct Entry {
    slot: Mutex<Slot>,
    /// Rung when a queued change of the plan is settled.
    settled: Condvar,
    /// Bumped whenever the state the queued changes were computed on is
    /// found outdated: changes computed before are computed again.
    epoch: AtomicU64,
}

#[derive(Default)]
struct Slot {
    /// The plan's latest state, indexed: committed, or what the queued
    /// changes make. Changed in place by each change; dropped (and read
    /// again) when it may hold what was not committed.
    runner: Option<Runner>,
    /// Changes queued so far, and settled so far (in queue order).
    queued: u64,
    settled: u64,
}

/// A change on its way to the writer.
struct Job {
    plan_id: String,
    entry: Arc<Entry>,
    epoch: u64,
    /// The revision it was computed on.
    base: u64,
    /// The rows it writes.
    writes: Writes,
    record: LogRecord,
    reply: Sender<Result<u64, Reject>>,
}

/// Why the writer did not commit a change.
enum Reject {
    /// It was computed on an outdated state: compute it again.
    Outdated,
    /// The transaction failed.
    Failed(OpError),
}

impl SqliteStore {
    /// Opens (or creates) the database at `path` and brings its schema up
    /// to date; refuses a database made by a newer planc.
    /// A store that exists but cannot be written is opened read-only
    /// (`sqlite_read_only.rs`): reads work, changes are refused.
    pub fn open(path: &Path) -> Result<SqliteStore, OpError> {
        let read_only = sqlite_read_only::cannot_write(path);
        let mut conn = match read_only {
            true => sqlite_read_only::connect(path)?,
            false => connect(path)?,
        };
        match read_only {
            true => sqlite_read_only::check_schema(&conn, path, SCHEMA_VERSION)?,
            false => migrate(&mut conn, path)?,
        }
        let shared = Arc::new(Shared {
            read_only,
            path: path.to_path_buf(),
            entries: Mutex::default(),
            readers: Mutex::default(),
            subscribers: Subscribers::default(),
            publishing: Mutex::new(false),
            commits: Arc::default(),
        });
        let (jobs, queue) = mpsc::channel();
        let commits = Arc::clone(&shared.commits);
        let store_path = path.to_path_buf();
        if read_only {
            // No writer: every change is refused before it is queued.
            return Ok(SqliteStore {
                path: path.to_path_buf(),
                shared,
                jobs,
            });
        }
        thread::Builder::new()
            .name("planc-sqlite-writer".to_owned())
            .spawn(move || write_loop(conn, &store_path, &queue, &commits))
            .map_err(|e| io_error(path, "write", &e.to_string()))?;
        Ok(SqliteStore {
            path: path.to_path_buf(),
            shared,
            jobs,
        })
    }

    /// The plan's in-process entry; at most [`MAX_KEPT`] are kept (those
    /// in use beyond it).
    fn entry(&self, plan_id: &str) -> Arc<Entry> {
        kept_entry(&mut lock(&self.shared.entries), plan_id, MAX_KEPT)
    }

    /// Runs `read` on an idle read connection.
    fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, OpError> {
        self.shared.read(read)
    }

    /// The plan's committed state, put together from its rows.
    fn read_doc(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        self.read_rows(plan_id).map(|(doc, _)| doc)
    }

    /// The plan's committed state and its task rows' order keys.
    fn read_rows(&self, plan_id: &str) -> Result<(PlanDocument, Vec<i64>), OpError> {
        let doc = self.read(|conn| sqlite_rows::read_plan(conn, plan_id))?;
        doc.ok_or_else(|| plan_not_found(plan_id))?
            .map_err(|e| not_a_state(&self.path, plan_id, &e))
    }

    /// The plan's committed revision.
    fn read_revision(&self, plan_id: &str) -> Result<Option<u64>, OpError> {
        self.read(|conn| {
            conn.query_row(
                "SELECT revision FROM plans WHERE plan_id = ?1",
                [plan_id],
                |row| row.get::<_, i64>(0),
            )
            .optional()
        })
        .map(|revision| revision.map(|r| r as u64))
    }

    /// Creates or deletes a plan in a transaction of its own, under the
    /// plan's in-process lock; the changes queued meanwhile are computed
    /// again.
    fn rewrite<T>(
        &self,
        plan_id: &str,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        validate_plan_id(plan_id)?;
        if self.shared.read_only {
            return Err(sqlite_read_only::refused(&self.path));
        }
        let entry = self.entry(plan_id);
        let mut slot = lock(&entry.slot);
        let mut conn = self.shared.reader()?;
        let result = (|| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| sql_error(&self.path, "write", &e))?;
            // No batch of the writer runs now: whatever it queued before
            // this change must be computed again.
            slot.runner = None;
            entry.epoch.fetch_add(1, Ordering::SeqCst);
            let value = write(&tx)?;
            tx.commit()
                .map_err(|e| sql_error(&self.path, "write", &e))?;
            Ok(value)
        })();
        drop(slot);
        self.shared.put_back(conn);
        if result.is_ok() {
            self.shared.commits.ring();
        }
        result
    }

    /// Waits until the changes of the plan queued before `queued` are
    /// settled; whether the state they were computed on was one that stood:
    /// `epoch` unchanged, and either those changes were all committed (the
    /// last made `revision`; each was checked against the database) or,
    /// none being queued, the database is at `revision`. Changes of this
    /// process committed meanwhile do not make it outdated; another
    /// process's change does.
    fn confirm(
        &self,
        plan_id: &str,
        entry: &Entry,
        mut slot: MutexGuard<'_, Slot>,
        epoch: u64,
        revision: u64,
    ) -> Result<bool, OpError> {
        let queued = slot.queued;
        let waited = slot.settled < queued;
        while slot.settled < queued {
            slot = entry
                .settled
                .wait(slot)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if entry.epoch.load(Ordering::SeqCst) != epoch {
            return Ok(false);
        }
        if waited || self.read_revision(plan_id)? == Some(revision) {
            return Ok(true);
        }
        // Another process changed the plan.
        slot.runner = None;
        entry.epoch.fetch_add(1, Ordering::SeqCst);
        Ok(false)
    }
}

impl Shared {
    fn reader(&self) -> Result<Connection, OpError> {
        if let Some(conn) = lock(&self.readers).pop() {
            return Ok(conn);
        }
        match self.read_only {
            true => sqlite_read_only::connect(&self.path),
            false => connect(&self.path),
        }
    }

    fn put_back(&self, conn: Connection) {
        let mut readers = lock(&self.readers);
        if readers.len() < MAX_READERS {
            readers.push(conn);
        }
    }

    fn read<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, OpError> {
        let conn = self.reader()?;
        let result = read(&conn).map_err(|e| sql_error(&self.path, "read", &e));
        self.put_back(conn);
        result
    }
}

impl PlanStore for SqliteStore {
    fn url(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }

    /// [`PlanStore::apply`], with a query answered from the plan's kept
    /// runner when that holds the committed state (O(what the query
    /// reads), not O(tasks)).
    fn apply(&self, plan_id: &str, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        apply_with_kept(self, plan_id, op, caller, || {
            self.query_kept(plan_id, op, caller)
        })
    }

    fn create(
        &self,
        plan_id: &str,
        doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError> {
        let (doc, record) = prepare_create(plan_id, doc)?;
        let path = &self.path;
        let summary = summary_json(plan_id, &doc);
        let record_text = record_json(&record)?;
        self.rewrite(plan_id, |tx| {
            let write = |e: rusqlite::Error| sql_error(path, "write", &e);
            let exists = tx
                .query_row("SELECT 1 FROM plans WHERE plan_id = ?1", [plan_id], |_| {
                    Ok(())
                })
                .optional()
                .map_err(write)?
                .is_some();
            if exists && !force {
                return Err(plan_exists(plan_id));
            }
            tx.execute("DELETE FROM events WHERE plan_id = ?1", [plan_id])
                .map_err(write)?;
            sqlite_rows::insert_plan(tx, plan_id, &doc, &summary).map_err(write)?;
            tx.execute(
                "INSERT INTO events (plan_id, seq, record) VALUES (?1, 1, ?2)",
                params![plan_id, record_text],
            )
            .map_err(write)?;
            Ok(())
        })?;
        Ok(doc)
    }

    fn list(&self) -> Result<Vec<PlanSummary>, OpError> {
        let rows: Vec<(String, String)> = self.read(|conn| {
            let mut select = conn.prepare("SELECT plan_id, summary FROM plans ORDER BY plan_id")?;
            let rows = select.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        })?;
        rows.into_iter()
            .map(|(plan_id, summary)| {
                serde_json::from_str(&summary).or_else(|_| {
                    self.read_doc(&plan_id)
                        .map(|doc| PlanSummary::of(&plan_id, &doc))
                })
            })
            .collect()
    }

    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        validate_plan_id(plan_id)?;
        self.read_doc(plan_id)
    }

    fn read_kept(
        &self,
        plan_id: &str,
        read: &mut dyn FnMut(&PlanDocument),
    ) -> Result<bool, OpError> {
        validate_plan_id(plan_id)?;
        self.read_kept_runner(plan_id, &mut |runner| read(runner.document()))
    }

    fn read_kept_plan(
        &self,
        plan_id: &str,
        read: &mut dyn FnMut(&KeptPlan<'_>),
    ) -> Result<bool, OpError> {
        validate_plan_id(plan_id)?;
        self.read_kept_runner(plan_id, &mut |runner| read(&runner.kept_plan()))
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        let path = &self.path;
        self.rewrite(plan_id, |tx| {
            let write = |e: rusqlite::Error| sql_error(path, "write", &e);
            let deleted = tx
                .execute("DELETE FROM plans WHERE plan_id = ?1", [plan_id])
                .map_err(write)?;
            if deleted == 0 {
                return Err(plan_not_found(plan_id));
            }
            tx.execute("DELETE FROM events WHERE plan_id = ?1", [plan_id])
                .map_err(write)?;
            sqlite_rows::delete_rows(tx, plan_id).map_err(write)?;
            Ok(())
        })
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        let entry = self.entry(plan_id);
        for _ in 0..MAX_ATTEMPTS {
            let (reply, answer) = mpsc::channel();
            let record = {
                let mut slot = lock(&entry.slot);
                let epoch = entry.epoch.load(Ordering::SeqCst);
                let (base, outcome) = self.change_cached(plan_id, &mut slot, op, change)?;
                let (writes, record) = match outcome {
                    Ok(Some(prepared)) => prepared,
                    // Nothing changed, or the change was refused: an answer
                    // about the state, which must be one that stands.
                    outcome => {
                        if self.confirm(plan_id, &entry, slot, epoch, base)? {
                            return outcome.map(|_| None);
                        }
                        continue;
                    }
                };
                slot.queued += 1;
                let job = Job {
                    plan_id: plan_id.to_owned(),
                    entry: Arc::clone(&entry),
                    epoch,
                    base,
                    writes,
                    record: record.clone(),
                    reply,
                };
                if self.jobs.send(job).is_err() {
                    slot.queued -= 1;
                    slot.runner = None;
                    return Err(writer_gone(&self.path));
                }
                record
            };
            match answer.recv() {
                Ok(Ok(position)) => {
                    return Ok(Some(StoredEvent {
                        plan_id: plan_id.to_owned(),
                        seq: record.revision,
                        position,
                        record,
                    }))
                }
                Ok(Err(Reject::Outdated)) => continue,
                Ok(Err(Reject::Failed(error))) => return Err(error),
                Err(_) => return Err(writer_gone(&self.path)),
            }
        }
        Err(OpError::new(
            ErrorCode::StateLocked,
            format!(
                "plan `{}` kept changing under this change ({MAX_ATTEMPTS} attempts); try again",
                crate::escape::line(plan_id)
            ),
        )
        .with(json!({"plan_id": plan_id, "store": self.url()})))
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        if self.read_revision(plan_id)?.is_none() {
            return Err(plan_not_found(plan_id));
        }
        let rows = self.read(|conn| {
            let mut select = conn.prepare(
                "SELECT position, plan_id, seq, record FROM events
                 WHERE plan_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            )?;
            let rows = select.query_map(
                params![plan_id, to_i64(after_seq), to_i64(limit as u64)],
                row_event,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        rows.into_iter()
            .map(|row| stored(&self.path, row))
            .collect()
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        self.shared
            .feed(after, limit)?
            .into_iter()
            .map(|row| stored(&self.path, row))
            .collect()
    }

    fn subscribe(&self) -> Receiver<StoredEvent> {
        let newest = self
            .read(|conn| {
                conn.query_row("SELECT COALESCE(MAX(position), 0) FROM events", [], |row| {
                    row.get::<_, i64>(0)
                })
            })
            .unwrap_or(0) as u64;
        let receiver = self.shared.subscribers.subscribe_after(newest);
        let mut publishing = lock(&self.shared.publishing);
        if !*publishing {
            let shared = Arc::downgrade(&self.shared);
            let started = thread::Builder::new()
                .name("planc-sqlite-publisher".to_owned())
                .spawn(move || publish_loop(&shared, newest));
            *publishing = started.is_ok();
        }
        receiver
    }
}

/// One row of `events`: position, plan id, seq, record text.
type EventRow = (i64, String, i64, String);

fn row_event(row: &rusqlite::Row<'_>) -> rusqlite::Result<EventRow> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
}

impl Shared {
    fn feed(&self, after: u64, limit: usize) -> Result<Vec<EventRow>, OpError> {
        self.read(|conn| {
            let mut select = conn.prepare(
                "SELECT position, plan_id, seq, record FROM events
                 WHERE position > ?1 ORDER BY position LIMIT ?2",
            )?;
            let rows = select.query_map(params![to_i64(after), to_i64(limit as u64)], row_event)?;
            rows.collect()
        })
    }
}

fn stored(path: &Path, (position, plan_id, seq, record): EventRow) -> Result<StoredEvent, OpError> {
    let record = serde_json::from_str(&record).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{}: event {seq} of plan `{}` is not an event record: {e}",
                path.display(),
                crate::escape::line(&plan_id)
            ),
        )
        .with(json!({"path": path.display().to_string(), "plan_id": plan_id}))
    })?;
    Ok(StoredEvent {
        plan_id,
        seq: seq as u64,
        position: position as u64,
        record,
    })
}

/// Sends the events committed by anyone to the subscribers, in position
/// order: woken by this process's commits, and every [`POLL`] for the
/// others'. Ends with the store.
fn publish_loop(shared: &Weak<Shared>, mut last: u64) {
    let mut seen = 0;
    loop {
        let Some(store) = shared.upgrade() else {
            return;
        };
        let Ok(rows) = store.feed(last, 1000) else {
            drop(store);
            thread::sleep(POLL);
            continue;
        };
        let full = rows.len() == 1000;
        for row in rows {
            if let Ok(event) = stored(&store.path, row) {
                last = last.max(event.position);
                store.subscribers.send(&event);
            }
        }
        let commits = Arc::clone(&store.commits);
        drop(store);
        if !full {
            seen = commits.wait(seen, POLL);
        }
    }
}

/// The writer: commits the queued changes, as many at a time as are queued.
fn write_loop(mut conn: Connection, path: &Path, queue: &Receiver<Job>, commits: &Signal) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let outcomes = commit_batch(&mut conn, path, &batch);
        commits.ring();
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            {
                let mut slot = lock(&job.entry.slot);
                slot.settled += 1;
                if outcome.is_err() {
                    slot.runner = None;
                    job.entry.epoch.fetch_add(1, Ordering::SeqCst);
                }
            }
            job.entry.settled.notify_all();
            let _ = job.reply.send(outcome);
        }
    }
}

/// Commits `batch` in one transaction: the outcome of each change.
fn commit_batch(conn: &mut Connection, path: &Path, batch: &[Job]) -> Vec<Result<u64, Reject>> {
    let result = (|| -> rusqlite::Result<Vec<Result<u64, Reject>>> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut revisions: HashMap<&str, Option<u64>> = HashMap::new();
        let mut outdated: HashSet<&str> = HashSet::new();
        let mut last: HashMap<&str, &Job> = HashMap::new();
        let mut outcomes = Vec::with_capacity(batch.len());
        for job in batch {
            let plan_id = job.plan_id.as_str();
            let revision = match revisions.get(plan_id) {
                Some(revision) => *revision,
                None => {
                    let revision = tx
                        .query_row(
                            "SELECT revision FROM plans WHERE plan_id = ?1",
                            [plan_id],
                            |row| row.get::<_, i64>(0),
                        )
                        .optional()?
                        .map(|r| r as u64);
                    revisions.insert(plan_id, revision);
                    revision
                }
            };
            if outdated.contains(plan_id)
                || job.entry.epoch.load(Ordering::SeqCst) != job.epoch
                || revision != Some(job.base)
            {
                outdated.insert(plan_id);
                outcomes.push(Err(Reject::Outdated));
                continue;
            }
            let record = serde_json::to_string(&job.record)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
            tx.execute(
                "INSERT INTO events (plan_id, seq, record) VALUES (?1, ?2, ?3)",
                params![plan_id, to_i64(job.record.revision), record],
            )?;
            outcomes.push(Ok(tx.last_insert_rowid() as u64));
            sqlite_rows::write_tasks(&job.writes, &tx, plan_id)?;
            revisions.insert(plan_id, Some(job.writes.revision));
            last.insert(plan_id, job);
        }
        // A plan changed several times in the batch has its header written
        // once.
        for (plan_id, job) in last {
            sqlite_rows::write_header(&job.writes, &tx, plan_id)?;
        }
        tx.commit()?;
        Ok(outcomes)
    })();
    match result {
        Ok(outcomes) => outcomes,
        Err(error) => {
            let error = sql_error(path, "write", &error);
            batch
                .iter()
                .map(|_| Err(Reject::Failed(error.clone())))
                .collect()
        }
    }
}

/// A connection to the database at `path`: WAL, full sync, a busy timeout.
fn connect(path: &Path) -> Result<Connection, OpError> {
    let conn = Connection::open(path).map_err(|e| sql_error(path, "write", &e))?;
    let setup = || -> rusqlite::Result<()> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidQuery);
        }
        conn.execute_batch("PRAGMA synchronous = FULL")?;
        Ok(())
    };
    setup().map_err(|e| sql_error(path, "write", &e))?;
    Ok(conn)
}

/// Brings the schema up to [`SCHEMA_VERSION`], in one transaction.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), OpError> {
    let write = |e: rusqlite::Error| sql_error(path, "write", &e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(write)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(write)?;
    let version: Option<i64> = tx
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .map_err(write)?;
    let version = version.unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{} has schema version {version}, made by a newer planc; this planc \
                 knows versions up to {SCHEMA_VERSION}: upgrade planc to use it",
                path.display()
            ),
        )
        .with(json!({
            "path": path.display().to_string(),
            "schema_version": version,
            "supported": SCHEMA_VERSION,
        })));
    }
    for (to, migration) in MIGRATIONS {
        if to > version {
            migration(&tx).map_err(write)?;
        }
    }
    if version < SCHEMA_VERSION {
        tx.execute("DELETE FROM schema_version", [])
            .map_err(write)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .map_err(write)?;
    }
    tx.commit().map_err(write)
}

fn not_a_state(path: &Path, plan_id: &str, error: &str) -> OpError {
    OpError::new(
        ErrorCode::InvalidState,
        format!(
            "{}: plan `{}` is not a planc state ({error})",
            path.display(),
            crate::escape::line(plan_id)
        ),
    )
    .with(json!({"path": path.display().to_string(), "plan_id": plan_id}))
}

fn writer_gone(path: &Path) -> OpError {
    io_error(path, "write", "the store's writer has stopped")
}

fn sql_error(path: &Path, access: &str, error: &rusqlite::Error) -> OpError {
    if let rusqlite::Error::SqliteFailure(failure, _) = error {
        if matches!(
            failure.code,
            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
        ) {
            return OpError::new(
                ErrorCode::StateLocked,
                format!(
                    "{} is locked by another writer (waited {} s): {error}",
                    path.display(),
                    BUSY_TIMEOUT.as_secs()
                ),
            )
            .with(json!({"path": path.display().to_string(), "timeout_seconds": BUSY_TIMEOUT.as_secs()}));
        }
    }
    io_error(path, access, &error.to_string())
}

fn io_error(path: &Path, access: &str, error: &str) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!(
            "cannot {access} the SQLite store {}: {error}",
            path.display()
        ),
    )
    .with(json!({"path": path.display().to_string(), "access": access}))
}

#[path = "sqlite_kept.rs"]
mod kept;
#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
