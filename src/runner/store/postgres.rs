//! The PostgreSQL backend of [`PlanStore`]: many plans in one database,
//! shared by every process (on every machine) that opens it.
//!
//! Tables: `plans` (a row per plan: state document, revision, summary),
//! `events` (a row per committed change: its record, the plan's revision as
//! `seq`, and `tx`, the id of the transaction that committed it) and
//! `schema_version`. A change is one transaction: the plan's advisory lock,
//! `SELECT … FOR UPDATE` on its row (so changes to one plan queue, and none
//! is lost), the runner, `UPDATE` of the row, `INSERT` of the event, and
//! `pg_notify` — which PostgreSQL delivers only once the transaction has
//! committed.
//!
//! **Global order.** An event's position is its transaction id (`xid8`; one
//! event per transaction). Transaction ids are not commit order, so the
//! feed only hands out events of transactions older than every transaction
//! still running (`pg_snapshot_xmin`): no event can later appear before one
//! already handed out. A plan's changes take their transaction ids under
//! the plan's lock, so a plan's events keep their `seq` order in the feed.
//! Subscribers are fed from the feed, woken by `LISTEN`, so every process
//! sees every change, in the same order.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls, Transaction};
use serde_json::json;

use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::Runner;

use super::plan_store::{
    plan_exists, plan_not_found, prepare_change, prepare_create, validate_plan_id, PlanStore,
    PlanSummary, StoredEvent, Subscribers,
};

/// The channel of `NOTIFY`.
const CHANNEL: &str = "planc_events";
/// The key of the advisory lock migrations take.
const MIGRATION_LOCK: i64 = 0x0070_6c61_6e63;
/// The schema this planc writes.
pub(crate) const SCHEMA_VERSION: i32 = 2;
/// How long a subscriber's listener waits for a notification before it
/// looks at the feed anyway (a transaction that ended without notifying
/// may have held events back).
const POLL: Duration = Duration::from_millis(250);
/// How soon it looks again when a notified event is still held back.
const SOON: Duration = Duration::from_millis(20);
/// The most idle connections kept open.
const MAX_IDLE: usize = 32;

type Migration = fn(&mut Transaction<'_>) -> Result<(), postgres::Error>;

/// The migrations, in order: each takes the schema from the version before
/// it to its own.
const MIGRATIONS: [(i32, Migration); 2] = [(1, migrate_to_1), (2, migrate_to_2)];

/// Version 1: plans and their events.
fn migrate_to_1(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute(
        "CREATE TABLE plans (
             plan_id  TEXT PRIMARY KEY,
             revision BIGINT NOT NULL,
             doc      TEXT NOT NULL
         );
         CREATE TABLE events (
             plan_id TEXT NOT NULL,
             seq     BIGINT NOT NULL,
             tx      xid8 NOT NULL DEFAULT pg_current_xact_id(),
             record  TEXT NOT NULL,
             PRIMARY KEY (plan_id, seq)
         );
         CREATE UNIQUE INDEX events_tx ON events (tx);",
    )
}

/// Version 2: each plan's summary beside its document, so that listing the
/// plans reads no document.
fn migrate_to_2(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.batch_execute("ALTER TABLE plans ADD COLUMN summary TEXT NOT NULL DEFAULT '{}'")?;
    let rows = tx.query("SELECT plan_id, doc FROM plans", &[])?;
    for row in rows {
        let (plan_id, doc): (String, String) = (row.get(0), row.get(1));
        // A document that does not parse keeps the empty summary; reading
        // the plan says what is wrong with it.
        if let Ok(doc) = serde_json::from_str::<PlanDocument>(&doc) {
            tx.execute(
                "UPDATE plans SET summary = $1 WHERE plan_id = $2",
                &[&summary_json(&plan_id, &doc), &plan_id],
            )?;
        }
    }
    Ok(())
}

/// Many plans in a PostgreSQL database.
pub struct PostgresStore {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &self.shared.shown)
            .finish_non_exhaustive()
    }
}

struct Shared {
    /// The URL to connect to.
    url: String,
    /// The URL without its password.
    shown: String,
    idle: Mutex<Vec<Client>>,
    subscribers: Subscribers,
    listening: Mutex<bool>,
}

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
        });
        let mut client = shared.connect()?;
        migrate(&mut client, &shared.shown)?;
        shared.put_back(client);
        Ok(PostgresStore { shared })
    }

    fn with_client<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let mut client = self.shared.client()?;
        let result = work(&mut client);
        // A connection whose transaction broke is not reused.
        if !client.is_closed() {
            self.shared.put_back(client);
        }
        result
    }

    fn error(&self, access: &str) -> impl Fn(postgres::Error) -> OpError + '_ {
        let access = access.to_owned();
        move |e| sql_error(&self.shared.shown, &access, &e)
    }
}

impl Shared {
    fn connect(&self) -> Result<Client, OpError> {
        Client::connect(&self.url, NoTls).map_err(|e| sql_error(&self.shown, "connect", &e))
    }

    fn client(&self) -> Result<Client, OpError> {
        if let Some(client) = lock(&self.idle).pop() {
            return Ok(client);
        }
        self.connect()
    }

    fn put_back(&self, client: Client) {
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(client);
        }
    }
}

impl PlanStore for PostgresStore {
    fn url(&self) -> String {
        self.shared.shown.clone()
    }

    fn create(
        &self,
        plan_id: &str,
        doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError> {
        let (doc, record) = prepare_create(plan_id, doc)?;
        let text = doc.to_json();
        let summary = summary_json(plan_id, &doc);
        let record_text = record_json(&record)?;
        let write = self.error("write");
        self.with_client(|client| {
            let mut tx = client.transaction().map_err(&write)?;
            plan_lock(&mut tx, plan_id).map_err(&write)?;
            let inserted = tx
                .execute(
                    "INSERT INTO plans (plan_id, revision, doc, summary) VALUES ($1, 1, $2, $3)
                     ON CONFLICT (plan_id) DO NOTHING",
                    &[&plan_id, &text, &summary],
                )
                .map_err(&write)?;
            if inserted == 0 {
                if !force {
                    return Err(plan_exists(plan_id));
                }
                tx.execute(
                    "UPDATE plans SET revision = 1, doc = $2, summary = $3 WHERE plan_id = $1",
                    &[&plan_id, &text, &summary],
                )
                .map_err(&write)?;
                tx.execute("DELETE FROM events WHERE plan_id = $1", &[&plan_id])
                    .map_err(&write)?;
            }
            tx.execute(
                "INSERT INTO events (plan_id, seq, record) VALUES ($1, 1, $2)",
                &[&plan_id, &record_text],
            )
            .map_err(&write)?;
            notify(&mut tx).map_err(&write)?;
            tx.commit().map_err(&write)
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
        let read = self.error("read");
        let row = self.with_client(|client| {
            client
                .query_opt("SELECT doc FROM plans WHERE plan_id = $1", &[&plan_id])
                .map_err(&read)
        })?;
        let row = row.ok_or_else(|| plan_not_found(plan_id))?;
        parse_doc(&self.shared.shown, plan_id, row.get(0))
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        validate_plan_id(plan_id)?;
        let write = self.error("write");
        self.with_client(|client| {
            let mut tx = client.transaction().map_err(&write)?;
            plan_lock(&mut tx, plan_id).map_err(&write)?;
            let deleted = tx
                .execute("DELETE FROM plans WHERE plan_id = $1", &[&plan_id])
                .map_err(&write)?;
            if deleted == 0 {
                return Err(plan_not_found(plan_id));
            }
            tx.execute("DELETE FROM events WHERE plan_id = $1", &[&plan_id])
                .map_err(&write)?;
            tx.commit().map_err(&write)
        })
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        let write = self.error("write");
        self.with_client(|client| {
            let mut tx = client.transaction().map_err(&write)?;
            plan_lock(&mut tx, plan_id).map_err(&write)?;
            let row = tx
                .query_opt(
                    "SELECT doc FROM plans WHERE plan_id = $1 FOR UPDATE",
                    &[&plan_id],
                )
                .map_err(&write)?
                .ok_or_else(|| plan_not_found(plan_id))?;
            let doc = parse_doc(&self.shared.shown, plan_id, row.get(0))?;
            // Refused or unchanged: the transaction rolls back when dropped.
            let Some((doc, record)) = prepare_change(doc, op, change)? else {
                return Ok(None);
            };
            let revision = to_i64(doc.state.revision);
            tx.execute(
                "UPDATE plans SET revision = $2, doc = $3, summary = $4 WHERE plan_id = $1",
                &[
                    &plan_id,
                    &revision,
                    &doc.to_json(),
                    &summary_json(plan_id, &doc),
                ],
            )
            .map_err(&write)?;
            let position: String = tx
                .query_one(
                    "INSERT INTO events (plan_id, seq, record) VALUES ($1, $2, $3)
                     RETURNING tx::text",
                    &[&plan_id, &revision, &record_json(&record)?],
                )
                .map_err(&write)?
                .get(0);
            notify(&mut tx).map_err(&write)?;
            tx.commit().map_err(&write)?;
            Ok(Some(StoredEvent {
                plan_id: plan_id.to_owned(),
                seq: record.revision,
                position: position.parse().unwrap_or(0),
                record,
            }))
        })
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        validate_plan_id(plan_id)?;
        let read = self.error("read");
        let rows = self.with_client(|client| {
            let mut tx = client.transaction().map_err(&read)?;
            tx.query_opt("SELECT 1 FROM plans WHERE plan_id = $1", &[&plan_id])
                .map_err(&read)?
                .ok_or_else(|| plan_not_found(plan_id))?;
            tx.query(
                "SELECT tx::text, plan_id, seq, record FROM events
                 WHERE plan_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
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
        self.with_client(|client| feed(client, after, limit).map_err(&read))?
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
}

/// Takes the plan's advisory lock for the rest of the transaction, before
/// the transaction has an id: the changes of one plan get their
/// transaction ids (their positions) in the order they commit, so a plan's
/// events are fed in `seq` order.
fn plan_lock(tx: &mut Transaction<'_>, plan_id: &str) -> Result<(), postgres::Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&plan_id],
    )
    .map(|_| ())
}

/// `NOTIFY`, delivered when the transaction commits.
fn notify(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    tx.execute("SELECT pg_notify($1, '')", &[&CHANNEL])
        .map(|_| ())
}

/// The events after `after` of the transactions older than every one still
/// running, in transaction order.
fn feed(
    client: &mut impl postgres::GenericClient,
    after: u64,
    limit: usize,
) -> Result<Vec<postgres::Row>, postgres::Error> {
    client.query(
        "SELECT tx::text, plan_id, seq, record FROM events
         WHERE tx > $1::text::xid8 AND tx < pg_snapshot_xmin(pg_current_snapshot())
         ORDER BY tx LIMIT $2",
        &[&after.to_string(), &to_i64(limit as u64)],
    )
}

/// The position below which every transaction has ended.
fn horizon(client: &mut Client) -> Result<u64, postgres::Error> {
    let row = client.query_one(
        "SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric - 1)::text",
        &[],
    )?;
    Ok(row.get::<_, String>(0).parse().unwrap_or(0))
}

/// Feeds the subscribers: `LISTEN`s, and after each notification (or
/// [`POLL`]) hands out what the feed has after the last event handed out.
/// Ends with the store.
fn listen(mut client: Client, shared: &Weak<Shared>, mut last: u64) {
    if client.batch_execute(&format!("LISTEN {CHANNEL}")).is_err() {
        return;
    }
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
        let rows = match feed(&mut client, last, 1000) {
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
    let (position, plan_id, seq, record): (String, String, i64, String) =
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
        position: position.parse().unwrap_or(0),
        record,
    })
}

/// Brings the schema up to [`SCHEMA_VERSION`], in one transaction under an
/// advisory lock (two servers starting at once migrate once).
fn migrate(client: &mut Client, shown: &str) -> Result<(), OpError> {
    let write = |e: postgres::Error| sql_error(shown, "write", &e);
    let mut tx = client.transaction().map_err(write)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(write)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(write)?;
    let version: Option<i32> = tx
        .query_one("SELECT MAX(version) FROM schema_version", &[])
        .map_err(write)?
        .get(0);
    let version = version.unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{shown} has schema version {version}, made by a newer planc; this planc \
                 knows versions up to {SCHEMA_VERSION}: upgrade planc to use it"
            ),
        )
        .with(json!({
            "store": shown,
            "schema_version": version,
            "supported": SCHEMA_VERSION,
        })));
    }
    for (to, migration) in MIGRATIONS {
        if to > version {
            migration(&mut tx).map_err(write)?;
        }
    }
    if version < SCHEMA_VERSION {
        tx.execute("DELETE FROM schema_version", &[])
            .map_err(write)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .map_err(write)?;
    }
    tx.commit().map_err(write)
}

fn parse_doc(shown: &str, plan_id: &str, text: &str) -> Result<PlanDocument, OpError> {
    serde_json::from_str(text).map_err(|e| {
        OpError::new(
            ErrorCode::InvalidState,
            format!(
                "{shown}: plan `{}` is not a planc state ({e})",
                crate::escape::line(plan_id)
            ),
        )
        .with(json!({"store": shown, "plan_id": plan_id}))
    })
}

fn summary_json(plan_id: &str, doc: &PlanDocument) -> String {
    serde_json::to_string(&PlanSummary::of(plan_id, doc)).unwrap_or_else(|_| "{}".to_owned())
}

fn record_json(record: &LogRecord) -> Result<String, OpError> {
    serde_json::to_string(record)
        .map_err(|e| OpError::new(ErrorCode::StateIo, format!("cannot write an event: {e}")))
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
