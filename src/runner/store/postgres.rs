//! The PostgreSQL backend of [`PlanStore`]: many plans in one database,
//! shared by every process (on every machine) that opens it.
//!
//! Tables: `plans` (a row per plan: its state document without its tasks
//! and steps, revision, summary, `born`, `reshaped` and `stepped`),
//! `plan_steps` (a plan's steps, written only by a change of a step's
//! list), `tasks` (a row per task, by order key, `rows.rs`), `tasks_gone`
//! (the keys of rows deleted), `events` (a row per committed change: its record, the plan's
//! revision as `seq`, and `pos`, its place in the global order) and
//! `schema_version`.
//!
//! **A change costs what it touches** (in [`kept`]), as in the SQLite
//! store and with its code (`task_rows.rs`): each plan's runner is kept in
//! the process and a change runs on it in place, under the plan's
//! in-process lock; it writes the plan's header and summary, the tasks it
//! touched and its event (and the steps when it changed a step's list).
//!
//! **Group commit** (in [`writer`]). A store handle has a writer thread
//! with a connection of its own. Changes computed on kept runners queue for
//! it; it takes every change queued meanwhile (at most
//! [`MAX_BATCH`](writer::MAX_BATCH)) and commits them in one transaction
//! (one WAL flush for all): `BEGIN` with the advisory locks of their plans,
//! in the order of their keys (so two servers' batches never deadlock), and
//! the plans' row versions (revision and `born`) read, in one round trip;
//! the changes of those plans queued while it waited for their locks join
//! the batch; one statement writing each plan's row, the task rows the
//! batch touched and the events, and `COMMIT`, sent together (pipelined,
//! [`pipe`]). The changes queued while it commits make the next batch.
//!
//! **Another server's changes.** A plan whose row is not at the version
//! its changes were computed on (another handle changed it), or whose
//! changes in the batch do not follow one another, has — in the same
//! transaction, under its lock — its kept runner brought up to the rows
//! (only the tasks written since the runner's revision are read: each task
//! row keeps the revision that wrote it, indexed; the whole plan only when
//! it was created again or replanned), and each of its changes
//! computed again, in queue order, before the write: by the writer itself
//! for a change made through [`PlanStore::apply`] (its op and caller are
//! kept with it: no round trip to the caller's thread under the lock), by
//! its caller for one made through [`PlanStore::transact`]. A query
//! or a read checks the row's version (one small read) and brings the
//! runner up the same way when it moved. [`PostgresStore::commit_counts`]
//! counts the changes made each way.
//!
//! A change the runner refuses (or that changes nothing) writes nothing and
//! fails nothing else; it stands if the row was the version it was
//! computed on, and is computed again otherwise (under the plan's lock by
//! its caller after [`kept::AHEAD_ATTEMPTS`] tries). Every caller has its
//! answer only once `COMMIT` has returned; a transaction that fails answers
//! its callers with the failure.
//!
//! **Notifications.** Once a batch has committed, a notifier thread sends
//! `pg_notify` in a transaction of its own, without waiting for its WAL
//! flush (`synchronous_commit` off for it alone), one for all the changes
//! committed meanwhile (at most one every [`NOTIFY_PAUSE`]: each wakes
//! every server's listener to read the feed). Not in the batch's transaction: PostgreSQL
//! serialises the commits of notifying transactions on one cluster-wide
//! lock held through the commit's WAL flush, so servers that notified
//! could not share a flush. A notification is only a wake-up (listeners
//! read the feed, and look every [`POLL`] anyway): one lost in a crash
//! loses nothing.
//!
//! **Global order.** An event's position is its transaction's id (`xid8`)
//! times [`PER_TRANSACTION`] plus its place in the transaction (from 1).
//! Transaction ids are not commit order, so the feed only hands out events
//! of transactions older than every transaction still running
//! (`pg_snapshot_xmin`): no event can later appear before one already
//! handed out. A transaction takes its id after its plans' locks, so a
//! plan's events keep their `seq` order in the feed. Subscribers are fed
//! from the feed, woken by `LISTEN`, so every process sees every change, in
//! the same order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls, Statement};
use serde_json::json;

use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::ops::Op;
use crate::runner::{Applied, Caller, Runner};

mod begin;
mod change;
mod kept;
mod migrations;
mod phases;
mod pipe;
mod rows;
mod slot;
mod writer;

use super::database::{apply_with_kept, lock, prepare_create, record_json, summary_json, to_i64};
use super::plan_store::{
    plan_exists, plan_not_found, validate_plan_id, PlanStore, PlanSummary, StoredEvent, Subscribers,
};
use migrations::migrate;
use slot::Entry;
use writer::{write_loop, Job, WRITERS};

/// The channel of `NOTIFY`.
const CHANNEL: &str = "planc_events";
/// The schema this planc writes.
pub(crate) const SCHEMA_VERSION: i32 = 7;
/// How long a subscriber's listener waits for a notification before it
/// looks at the feed anyway (a transaction that ended without notifying
/// may have held events back).
const POLL: Duration = Duration::from_millis(250);
/// The least time between two notifications of one store handle.
const NOTIFY_PAUSE: Duration = Duration::from_millis(10);
/// How soon it looks again when a notified event is still held back.
const SOON: Duration = Duration::from_millis(20);
/// The most idle connections kept open.
const MAX_IDLE: usize = 32;
/// The most plans kept (their runners) and lock keys known: the bound
/// every database backend keeps.
const MAX_CACHED: usize = super::database::MAX_KEPT_PLANS;
/// The positions of one transaction's events: its id times this, plus
/// 1, 2, … (so a transaction holds fewer events than this). The SQL below
/// spells it out.
const PER_TRANSACTION: i64 = 1024;

/// Many plans in a PostgreSQL database.
pub struct PostgresStore {
    shared: Arc<Shared>,
    /// The writers' queue and threads (taken when the handle goes).
    writer: Option<(Sender<Job>, Vec<JoinHandle<()>>)>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.shared.shown)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresStore {
    /// The writers end (nothing is queued: every change waits for its
    /// answer), so that the store's last reference, and with it the last
    /// notification, goes with this handle.
    fn drop(&mut self) {
        if let Some((queue, writers)) = self.writer.take() {
            drop(queue);
            for writer in writers {
                let _ = writer.join();
            }
        }
    }
}

struct Shared {
    /// The URL to connect to.
    url: String,
    /// The URL without its password.
    shown: String,
    idle: Mutex<Vec<Conn>>,
    subscribers: Subscribers,
    listening: Mutex<bool>,
    /// Each plan's kept runner, by plan id.
    entries: Mutex<HashMap<String, Arc<Entry>>>,
    /// Each plan's advisory lock key, by plan id.
    lock_keys: Mutex<HashMap<String, i64>>,
    /// Wakes the notifier (started at the first change), and hangs up
    /// when it has ended.
    notifier: Mutex<Option<(Sender<()>, Receiver<()>)>>,
    /// The changes queued for the writer that it has not taken yet.
    queued: AtomicUsize,
    /// The changes committed as computed ahead, and those computed again
    /// on the rows as read.
    committed_ahead: AtomicU64,
    committed_on_rows: AtomicU64,
    /// How often a change is computed ahead before it is made under the
    /// plan's lock ([`kept::AHEAD_ATTEMPTS`]).
    ahead_attempts: AtomicUsize,
}

/// How a store handle committed its changes so far
/// ([`PostgresStore::commit_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitCounts {
    /// Computed ahead by their callers on the plan's kept runner, and
    /// written as computed.
    pub ahead: u64,
    /// Computed again under the plan's advisory lock on the kept runner
    /// brought up to the rows (another handle had moved the plan).
    pub on_rows: u64,
}

impl Drop for Shared {
    /// The last changes' notification goes out before the store does (a
    /// `planc run` exits right after its change), waiting a second at most.
    fn drop(&mut self) {
        if let Some((wake, ended)) = lock(&self.notifier).take() {
            drop(wake);
            let _ = ended.recv_timeout(Duration::from_secs(1));
        }
    }
}

/// A pooled connection and its prepared statements.
struct Conn {
    client: Client,
    statements: Statements,
}

/// The statements of the reads and writes, prepared once per pooled
/// connection.
struct Statements {
    /// The plan's version and document ([`rows::READ_PLAN`]).
    read: Statement,
    /// The plan's version, header and tasks written since ([`rows::READ_CHANGED`]).
    changed: Statement,
    /// The plan's version ([`rows::READ_VERSION`]).
    version: Statement,
    /// Changes' writes ([`rows::WRITE`]).
    write: Statement,
    /// A plan's events after a `seq`.
    events: Statement,
    /// The feed after a position.
    feed: Statement,
    /// Takes plan `$1`'s advisory lock for the transaction.
    lock: Statement,
    /// Inserts plan `$1` (header `$2`, summary `$3`) at revision 1 unless
    /// it exists; the new row's `born`.
    create: Statement,
    /// Starts plan `$1` over (as `create`); the row's `born`.
    recreate: Statement,
    /// The creation event (`$2`) of plan `$1`, at `seq` 1.
    created: Statement,
    /// Deletes plan `$1`'s row.
    delete: Statement,
    /// Deletes plan `$1`'s events.
    delete_events: Statement,
}

impl Conn {
    /// A pooled connection of `client`, its statements prepared.
    fn new(mut client: Client, shown: &str) -> Result<Conn, OpError> {
        // Each read planned for its plan and revision: a generic plan may
        // scan a plan's every task for the few written since a revision.
        let statements = client
            .batch_execute("SET plan_cache_mode = force_custom_plan")
            .and_then(|()| Statements::prepare(&mut client))
            .map_err(|e| sql_error(shown, "connect", &e))?;
        Ok(Conn { client, statements })
    }
}

/// The event columns the read statements give ([`stored`] reads them).
const EVENT_COLUMNS: &str = "pos, plan_id, seq, record";

/// The events after a position of the transactions older than every one
/// still running, in position order.
const FEED: &str = "SELECT pos, plan_id, seq, record FROM events
     WHERE pos > $1
       AND pos < pg_snapshot_xmin(pg_current_snapshot())::text::bigint * 1024
     ORDER BY pos LIMIT $2";

impl Statements {
    fn prepare(client: &mut Client) -> Result<Statements, postgres::Error> {
        Ok(Statements {
            read: client.prepare(rows::READ_PLAN)?,
            changed: client.prepare(rows::READ_CHANGED)?,
            version: client.prepare(rows::READ_VERSION)?,
            write: client.prepare(rows::WRITE)?,
            events: client.prepare(&format!(
                "SELECT {EVENT_COLUMNS} FROM events
                 WHERE plan_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
            ))?,
            feed: client.prepare(FEED)?,
            lock: client.prepare(PLAN_LOCK)?,
            create: client.prepare(
                "INSERT INTO plans (plan_id, revision, doc, summary, born, reshaped)
                 VALUES ($1, 1, $2, $3, pg_current_xact_id()::text::bigint, 1)
                 ON CONFLICT (plan_id) DO NOTHING RETURNING born",
            )?,
            recreate: client.prepare(
                "UPDATE plans SET revision = 1, doc = $2, summary = $3,
                     born = pg_current_xact_id()::text::bigint, reshaped = 1
                 WHERE plan_id = $1 RETURNING born",
            )?,
            created: client.prepare(
                "INSERT INTO events (plan_id, seq, pos, record)
                 VALUES ($1, 1, pg_current_xact_id()::text::bigint * 1024 + 1, $2)",
            )?,
            delete: client.prepare("DELETE FROM plans WHERE plan_id = $1")?,
            delete_events: client.prepare("DELETE FROM events WHERE plan_id = $1")?,
        })
    }
}

/// Takes a plan's advisory lock for the rest of the transaction, before the
/// transaction has an id: the transactions that change a plan get their
/// ids (their events' positions) in the order they commit, so a plan's
/// events are fed in `seq` order.
const PLAN_LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";

impl PostgresStore {
    /// Connects to the database at `url` and brings its schema up to date;
    /// refuses a database made by a newer planc.
    pub fn open(url: &str) -> Result<PostgresStore, OpError> {
        let shared = Arc::new(Shared {
            url: url.to_owned(),
            shown: without_password(url),
            idle: Mutex::default(),
            subscribers: Subscribers::default(),
            listening: Mutex::new(false),
            entries: Mutex::default(),
            lock_keys: Mutex::default(),
            notifier: Mutex::default(),
            queued: AtomicUsize::new(0),
            committed_ahead: AtomicU64::new(0),
            committed_on_rows: AtomicU64::new(0),
            ahead_attempts: AtomicUsize::new(kept::AHEAD_ATTEMPTS),
        });
        let mut client = shared.connect()?;
        migrate(&mut client, &shared.shown)?;
        shared.put_back(Conn::new(client, &shared.shown)?);
        let (queue, jobs) = channel();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut writers = Vec::with_capacity(WRITERS);
        for _ in 0..WRITERS {
            let (writing, jobs) = (Arc::clone(&shared), Arc::clone(&jobs));
            let writer = thread::Builder::new()
                .name("planc-postgres-writer".to_owned())
                .spawn(move || write_loop(&writing, &jobs))
                .map_err(|e| {
                    OpError::new(
                        ErrorCode::StateIo,
                        format!("cannot start the writer of {}: {e}", shared.shown),
                    )
                })?;
            writers.push(writer);
        }
        Ok(PostgresStore {
            shared,
            writer: Some((queue, writers)),
        })
    }

    /// How many changes this handle committed each way so far.
    pub fn commit_counts(&self) -> CommitCounts {
        CommitCounts {
            ahead: self.shared.committed_ahead.load(Ordering::Relaxed),
            on_rows: self.shared.committed_on_rows.load(Ordering::Relaxed),
        }
    }

    /// Has this handle make its changes ahead at most `attempts` times
    /// before it makes them under the plan's lock (3; 0: every change under
    /// the lock, as tests use it).
    pub fn set_ahead_attempts(&self, attempts: usize) {
        self.shared
            .ahead_attempts
            .store(attempts, Ordering::Relaxed);
    }

    fn with_client<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        self.with_conn(|conn| work(&mut conn.client))
    }

    fn with_conn<T>(
        &self,
        work: impl FnOnce(&mut Conn) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let mut conn = self.shared.conn()?;
        let result = work(&mut conn);
        // A connection whose transaction broke is not reused.
        if !conn.client.is_closed() {
            self.shared.put_back(conn);
        }
        result
    }

    fn error(&self, access: &str) -> impl Fn(postgres::Error) -> OpError + '_ {
        let access = access.to_owned();
        move |e| sql_error(&self.shared.shown, &access, &e)
    }

    fn not_a_state(&self, plan_id: &str, error: &str) -> OpError {
        not_a_state(&self.shared.shown, plan_id, error)
    }

    fn writer_gone(&self) -> OpError {
        OpError::new(
            ErrorCode::StateIo,
            format!(
                "cannot write the PostgreSQL store {}: its writer has stopped",
                self.shared.shown
            ),
        )
        .with(json!({"store": self.shared.shown, "access": "write"}))
    }
}

impl Shared {
    fn connect(&self) -> Result<Client, OpError> {
        Client::connect(&self.url, NoTls).map_err(|e| sql_error(&self.shown, "connect", &e))
    }

    fn conn(&self) -> Result<Conn, OpError> {
        if let Some(conn) = lock(&self.idle).pop() {
            return Ok(conn);
        }
        Conn::new(self.connect()?, &self.shown)
    }

    fn put_back(&self, conn: Conn) {
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }

    /// Has the notifier tell every listener (every server) that a change
    /// committed.
    fn notify(&self) {
        let mut notifier = lock(&self.notifier);
        if let Some((wake, _)) = notifier.as_ref() {
            if wake.send(()).is_ok() {
                return;
            }
        }
        let (wake, changes) = channel();
        let (ending, ended) = channel::<()>();
        let url = self.url.clone();
        let started = thread::Builder::new()
            .name("planc-postgres-notifier".to_owned())
            .spawn(move || {
                notifier_loop(&url, &changes);
                drop(ending);
            });
        if started.is_ok() && wake.send(()).is_ok() {
            *notifier = Some((wake, ended));
        }
    }
}

impl PlanStore for PostgresStore {
    fn url(&self) -> String {
        self.shared.shown.clone()
    }

    /// [`PlanStore::apply`], with a query answered by the plan's kept
    /// runner when the plan's row has not moved (one small read, not the
    /// whole plan).
    fn apply(&self, plan_id: &str, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        if op.is_change() {
            validate_plan_id(plan_id)?;
            return self.apply_change(plan_id, op, caller);
        }
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
        let split = rows::split(&doc)?;
        let header = &split.header;
        let summary = summary_json(plan_id, &doc);
        let record_text = record_json(&record)?;
        let write = self.error("write");
        self.replace_kept(plan_id, || {
            let born = self.with_conn(|conn| {
                let statements = &conn.statements;
                let mut tx = conn.client.transaction().map_err(&write)?;
                tx.execute(&statements.lock, &[&plan_id]).map_err(&write)?;
                let mut row = tx
                    .query_opt(&statements.create, &[&plan_id, &header, &summary])
                    .map_err(&write)?;
                if row.is_none() {
                    if !force {
                        return Err(plan_exists(plan_id));
                    }
                    row = tx
                        .query_opt(&statements.recreate, &[&plan_id, &header, &summary])
                        .map_err(&write)?;
                    tx.execute(&statements.delete_events, &[&plan_id])
                        .map_err(&write)?;
                }
                rows::insert_rows(&mut tx, plan_id, 1, &split).map_err(&write)?;
                tx.execute(&statements.created, &[&plan_id, &record_text])
                    .map_err(&write)?;
                tx.commit().map_err(&write)?;
                Ok(row.map(|row| row.get::<_, i64>(0)))
            })?;
            self.shared.notify();
            // The plan's kept runner, so that its first change is computed
            // ahead like the next ones.
            Ok(born.map(|born| (doc.clone(), born)))
        })?;
        Ok(doc)
    }

    fn list(&self) -> Result<Vec<PlanSummary>, OpError> {
        let read = self.error("read");
        let rows = self.with_client(|client| {
            client
                .query("SELECT plan_id, summary FROM plans ORDER BY plan_id", &[])
                .map_err(&read)
        })?;
        rows.iter()
            .map(|row| {
                let (plan_id, summary): (String, String) = (row.get(0), row.get(1));
                serde_json::from_str(&summary).or_else(|_| {
                    self.load(&plan_id)
                        .map(|doc| PlanSummary::of(&plan_id, &doc))
                })
            })
            .collect()
    }

    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        validate_plan_id(plan_id)?;
        self.load_kept(plan_id)
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        validate_plan_id(plan_id)?;
        let write = self.error("write");
        self.replace_kept(plan_id, || {
            self.with_conn(|conn| {
                let statements = &conn.statements;
                let mut tx = conn.client.transaction().map_err(&write)?;
                tx.execute(&statements.lock, &[&plan_id]).map_err(&write)?;
                let deleted = tx
                    .execute(&statements.delete, &[&plan_id])
                    .map_err(&write)?;
                if deleted == 0 {
                    return Err(plan_not_found(plan_id));
                }
                tx.execute(&statements.delete_events, &[&plan_id])
                    .map_err(&write)?;
                rows::delete_rows(&mut tx, plan_id).map_err(&write)?;
                tx.commit().map_err(&write)
            })?;
            Ok(None)
        })
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        self.transact_kept(plan_id, op, change, None)
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        let read = self.error("read");
        let rows = self.with_conn(|conn| {
            let mut tx = conn.client.transaction().map_err(&read)?;
            tx.query_opt("SELECT 1 FROM plans WHERE plan_id = $1", &[&plan_id])
                .map_err(&read)?
                .ok_or_else(|| plan_not_found(plan_id))?;
            tx.query(
                &conn.statements.events,
                &[&plan_id, &to_i64(after_seq), &to_i64(limit as u64)],
            )
            .map_err(&read)
        })?;
        rows.iter()
            .map(|row| stored(&self.shared.shown, row))
            .collect()
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        let read = self.error("read");
        self.with_conn(|conn| {
            let (client, feed) = (&mut conn.client, &conn.statements.feed);
            client
                .query(feed, &[&to_i64(after), &to_i64(limit as u64)])
                .map_err(&read)
        })?
        .iter()
        .map(|row| stored(&self.shared.shown, row))
        .collect()
    }

    fn subscribe(&self) -> Receiver<StoredEvent> {
        let horizon = self
            .with_client(|client| horizon(client).map_err(self.error("read")))
            .unwrap_or(0);
        let receiver = self.shared.subscribers.subscribe_after(horizon);
        let mut listening = lock(&self.shared.listening);
        if !*listening {
            if let Ok(client) = self.shared.connect() {
                let shared = Arc::downgrade(&self.shared);
                let started = thread::Builder::new()
                    .name("planc-postgres-listener".to_owned())
                    .spawn(move || listen(client, &shared, horizon));
                *listening = started.is_ok();
            }
        }
        receiver
    }

    fn queued_changes(&self) -> usize {
        self.shared.queued.load(Ordering::SeqCst)
    }
}

/// The notifier: one `NOTIFY` (in a transaction that does not wait for its
/// WAL flush) for the batches of changes committed meanwhile, at most one
/// every [`NOTIFY_PAUSE`]; ends with the store (when `changes` hangs up).
fn notifier_loop(url: &str, changes: &Receiver<()>) {
    let mut client: Option<Client> = None;
    while changes.recv().is_ok() {
        while changes.try_recv().is_ok() {}
        for _ in 0..2 {
            let connected = match client.as_mut() {
                Some(client) if !client.is_closed() => client,
                _ => match Client::connect(url, NoTls) {
                    Ok(connected) => client.insert(connected),
                    // Listeners look every POLL anyway.
                    Err(_) => break,
                },
            };
            let sent = connected.batch_execute(&format!(
                "BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_notify('{CHANNEL}', ''); COMMIT"
            ));
            if sent.is_ok() {
                break;
            }
            client = None;
        }
        // Every notification wakes every listener (every server) to read
        // the feed: the batches committed during the pause share the next.
        thread::sleep(NOTIFY_PAUSE);
    }
}

/// The last position of the transactions older than every one still
/// running: every event up to it is committed (or never will be).
fn horizon(client: &mut Client) -> Result<u64, postgres::Error> {
    let row = client.query_one(
        "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint * 1024 - 1",
        &[],
    )?;
    Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
}

/// Feeds the subscribers: `LISTEN`s, and after each notification (or
/// [`POLL`]) hands out what the feed has after the last event handed out.
/// Ends with the store.
fn listen(mut client: Client, shared: &Weak<Shared>, mut last: u64) {
    if client.batch_execute(&format!("LISTEN {CHANNEL}")).is_err() {
        return;
    }
    let Ok(feed) = client.prepare(FEED) else {
        return;
    };
    let mut wait = Duration::ZERO;
    loop {
        let mut notified = false;
        {
            let mut notifications = client.notifications();
            let mut waiting = notifications.timeout_iter(wait);
            match waiting.next() {
                Ok(Some(_)) => notified = true,
                Ok(None) => {}
                Err(_) => return,
            }
        }
        if notified {
            // Take every notification already here: one look at the feed
            // serves them all.
            let mut notifications = client.notifications();
            let mut pending = notifications.iter();
            while let Ok(Some(_)) = pending.next() {}
        }
        let Some(store) = shared.upgrade() else {
            return;
        };
        let rows = match client.query(&feed, &[&to_i64(last), &1000i64]) {
            Ok(rows) => rows,
            Err(_) if client.is_closed() => return,
            Err(_) => Vec::new(),
        };
        let full = rows.len() == 1000;
        for row in &rows {
            if let Ok(event) = stored(&store.shown, row) {
                last = last.max(event.position);
                store.subscribers.send(&event);
            }
        }
        drop(store);
        // A notified event may wait behind an older transaction still
        // running: look again soon.
        wait = match (full, notified) {
            (true, _) => Duration::ZERO,
            (false, true) => SOON,
            (false, false) => POLL,
        };
    }
}

fn stored(shown: &str, row: &postgres::Row) -> Result<StoredEvent, OpError> {
    let (position, plan_id, seq, record): (i64, String, i64, String) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let record: LogRecord = serde_json::from_str(&record).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{shown}: event {seq} of plan `{}` is not an event record: {e}",
                crate::escape::line(&plan_id)
            ),
        )
        .with(json!({"store": shown, "plan_id": plan_id}))
    })?;
    Ok(StoredEvent {
        plan_id,
        seq: seq as u64,
        position: u64::try_from(position).unwrap_or(0),
        record,
    })
}

fn not_a_state(shown: &str, plan_id: &str, error: &str) -> OpError {
    OpError::new(
        ErrorCode::InvalidState,
        format!(
            "{shown}: plan `{}` is not a planc state ({error})",
            crate::escape::line(plan_id)
        ),
    )
    .with(json!({"store": shown, "plan_id": plan_id}))
}

/// `url` with the password (`user:PASSWORD@`, `password=…`) left out.
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(user, _)| user);
            format!("{user}@{host}")
        }
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<&str> = query
                .split('&')
                .filter(|pair| !pair.starts_with("password="))
                .collect();
            if query.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", query.join("&"))
            }
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

fn sql_error(shown: &str, access: &str, error: &postgres::Error) -> OpError {
    let text = match error.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => error.to_string(),
    };
    let (what, access) = match access {
        "connect" => ("connect to", "read"),
        "read" => ("read", "read"),
        _ => ("write", "write"),
    };
    OpError::new(
        ErrorCode::StateIo,
        format!("cannot {what} the PostgreSQL store {shown}: {text}"),
    )
    .with(json!({"store": shown, "access": access}))
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            without_password("postgres://ann:secret@db.example:5432/plans"),
            "postgres://ann@db.example:5432/plans"
        );
        assert_eq!(
            without_password("postgresql:///plans?host=/run/pg&password=x&user=ann"),
            "postgresql:///plans?host=/run/pg&user=ann"
        );
        assert_eq!(
            without_password("postgres://db.example/plans"),
            "postgres://db.example/plans"
        );
    }
}
