//! The edge of the runner: a state file, its lock and its event log on disk.
//!
//! A change is a transaction: [`Transaction::begin`] takes the lock, reads the
//! state and repairs what a killed writer left; the runner changes the state
//! in memory; [`Transaction::commit`] makes the new state and its log record
//! durable together. With JSON files that is a write-ahead protocol:
//!
//! 1. write the new state to a unique temporary file beside it, `fsync`;
//! 2. append the record (with the new revision) to the log, `fsync`;
//! 3. rename the temporary file over the state, `fsync` the directory — the
//!    commit point.
//!
//! A writer killed before 3 leaves the old state and maybe a record (or half
//! of one) newer than it; the next writer cuts that off before it changes
//! anything ([`EventLog::recover`]), and readers of the log never show it
//! ([`LogReader`]). So after any crash the log holds exactly one record per
//! revision of the state. A database store does the same in one SQL
//! transaction: lock the state row, read it, write the row and insert the
//! event, commit.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod database;
mod directory_lock;
mod fault;
mod files;
mod json;
#[cfg(feature = "postgres")]
mod kept_rows;
mod lock;
mod lock_wait;
mod log;
mod open;
mod plan_store;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_read_only;
#[cfg(feature = "sqlite")]
mod sqlite_rows;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod task_rows;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::document::PlanDocument;

use super::error::{ErrorCode, OpError};
use super::events::{Event, LogRecord};
use super::ops::Op;
use super::time::{now_rfc3339, now_unix};
use super::{Applied, Caller, Runner};

use files::{Files, LOCK_SUFFIX, LOG_SUFFIX};
use lock::{Lock, LockWait};
use log::{init_record, EventLog};

pub use lock::DEFAULT_LOCK_TIMEOUT;
pub use log::LogReader;
pub use open::open_store;
pub use plan_store::{
    transact_with, validate_plan_id, PlanCounts, PlanStore, PlanSummary, StoredEvent,
};
#[cfg(feature = "postgres")]
pub use postgres::{CommitCounts, PostgresStore};

/// What a state file may be: a regular file (never a device or a FIFO, which
/// would fill memory or block) of at most 256 MiB — four times the largest
/// `.plan` file, as a state's JSON text is larger than the plan it came from.
pub(crate) const STATE_BOUNDS: crate::read::Bounds = crate::read::Bounds {
    limit: 256 << 20,
    pipes: false,
};

/// A state file and the files beside it (`STATE.lock`, `STATE.events.jsonl`).
#[derive(Clone, Debug)]
pub struct Store {
    path: PathBuf,
    wait: LockWait,
    /// The identity of [`Store::apply`]'s calls (`planc mcp --agent`).
    agent: Option<String>,
}

impl Store {
    /// The store for the state file at `path` (nothing is read yet). Writers
    /// wait up to [`DEFAULT_LOCK_TIMEOUT`] for the lock.
    pub fn new(path: impl Into<PathBuf>) -> Store {
        Store {
            path: path.into(),
            wait: LockWait {
                timeout: DEFAULT_LOCK_TIMEOUT,
                notice: None,
            },
            agent: None,
        }
    }

    /// The same store, calling `agent` the caller of [`Store::apply`] (and
    /// of [`Store::apply_as`] with a caller without an identity).
    pub fn with_agent(mut self, agent: Option<String>) -> Store {
        self.agent = agent;
        self
    }

    /// The same store, waiting up to `timeout` for the lock (zero: no wait)
    /// before a change gives up with `STATE_LOCKED`.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Store {
        self.wait.timeout = timeout;
        self
    }

    /// The same store, calling `notice` with the lock file when a change has
    /// waited a second for the lock (to say so on standard error).
    pub fn with_lock_notice(mut self, notice: fn(&Path)) -> Store {
        self.wait.notice = Some(notice);
        self
    }

    /// The state file, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The event log beside the real state file: `plan.json` → `plan.json.events.jsonl`.
    pub fn log_path(&self) -> PathBuf {
        self.beside(LOG_SUFFIX)
    }

    /// The lock file beside the real state file: `plan.json` → `plan.json.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.beside(LOCK_SUFFIX)
    }

    fn beside(&self, suffix: &str) -> PathBuf {
        match Files::resolve(&self.path) {
            Ok(files) => files.dir.join(files::suffixed(&files.name, suffix)),
            Err(_) => {
                let name = self.path.file_name().unwrap_or_default();
                self.path.with_file_name(files::suffixed(name, suffix))
            }
        }
    }

    /// Creates the state file from a plan document (`planc run init`): sets
    /// `created_at`, revision 1, and starts the event log afresh. Refuses to
    /// overwrite an existing state unless `force`, and a read-only one always.
    ///
    /// A state file of a directory store (`DIR/ID.json`, beside the feed
    /// index `DIR/.feed.jsonl`) started here rather than through the store
    /// gets a reset line in the index, under its lock, so the store gives
    /// its new events new positions (see `json/feed.rs`).
    pub fn create(&self, doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        let unwritable = |path: &Path, e| io_error(path, "write", e);
        let files = Files::resolve(&self.path).map_err(|e| unwritable(&self.path, e))?;
        let Some(mut feed) = json::OutsideReset::begin(&files.dir, &files.name)? else {
            return self.create_unfed(doc, force);
        };
        let doc = self.create_unfed(doc, force)?;
        feed.reset()?;
        Ok(doc)
    }

    /// [`Store::create`] without the feed index's reset line (a directory
    /// store writes its own).
    fn create_unfed(&self, mut doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        let unwritable = |path: &Path, e| io_error(path, "write", e);
        let files = Files::resolve(&self.path).map_err(|e| unwritable(&self.path, e))?;
        let lock = Lock::acquire(&files.lock, self.wait)?;
        let old = match fs::metadata(&files.state) {
            Ok(old) => {
                if !force {
                    return Err(OpError::new(
                        ErrorCode::StateIo,
                        format!(
                            "{} exists already; pass --force to start it over",
                            self.path.display()
                        ),
                    )
                    .with(json!({"path": self.path.display().to_string()})));
                }
                self.require_writable(&old)?;
                Some(old)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(unwritable(&files.state, e)),
        };
        files.remove_stale_temps();
        let now = now_rfc3339();
        // An imported plan keeps when it was made; a compiled one has no date yet.
        doc.meta.created_at.get_or_insert_with(|| now.clone());
        doc.meta.updated_at = Some(now);
        doc.state.revision = 1;
        // Checks the document is a consistent state before writing it.
        crate::runner::text_limits::check_document_text(&doc)?;
        let doc = Runner::new(doc)?.into_document();
        let temp = files
            .write_temp(doc.to_json().as_bytes(), old.as_ref(), Some("state-write"))
            .map_err(|e| unwritable(&files.state, e))?;
        lock.verify()?;
        files
            .persist(temp)
            .map_err(|e| unwritable(&files.state, e))?;
        // The state is in; its log is a function of it, so a crash from here
        // on is repaired by the next writer (see `EventLog::recover`).
        fault::point("init-log")
            .and_then(|()| EventLog::new(&files).start(&init_record(&doc)))
            .map_err(|e| {
                OpError::new(
                    ErrorCode::StateIo,
                    format!(
                        "created {}, but cannot start its event log {}: {e} \
                         (the next change starts it)",
                        self.path.display(),
                        files.log.display()
                    ),
                )
                .with(json!({"path": files.log.display().to_string(), "access": "write"}))
            })?;
        Ok(doc)
    }

    /// Whether the state file exists (a dialect that creates plans serves a
    /// state before it does).
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    /// Deletes the state file under the lock when `check` accepts the state
    /// read under it (the Plan Tool's `delete_plan`); the event log stays as the
    /// plan's history, and the next `create` starts it afresh.
    pub fn delete(
        &self,
        check: impl FnOnce(&PlanDocument) -> Result<(), OpError>,
    ) -> Result<(), OpError> {
        let files = Files::resolve(&self.path).map_err(|e| io_error(&self.path, "write", e))?;
        let lock = Lock::acquire(&files.lock, self.wait)?;
        check(&self.read(&files.state)?)?;
        lock.verify()?;
        fs::remove_file(&files.state).map_err(|e| io_error(&files.state, "write", e))
    }

    /// Reads the state (no lock: writes replace the file atomically).
    pub fn load(&self) -> Result<PlanDocument, OpError> {
        self.read(&self.path)
    }

    /// Reads the state from `path` (the given one, or the real file it names);
    /// errors name the path as given.
    fn read(&self, path: &Path) -> Result<PlanDocument, OpError> {
        let text = crate::read::read_to_string(path, STATE_BOUNDS).map_err(|e| {
            OpError::new(
                ErrorCode::StateIo,
                format!("cannot read {}: {e}", self.path.display()),
            )
            .with(json!({"path": self.path.display().to_string(), "access": "read"}))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            OpError::new(
                ErrorCode::InvalidState,
                format!(
                    "{} is not a planc state file ({e}); create one with `planc run init PLAN -o {}`",
                    self.path.display(),
                    self.path.display()
                ),
            )
            .with(json!({"path": self.path.display().to_string()}))
        })
    }

    /// Reads the state into a runner, with the leases that ran out by now
    /// expired (in memory: the next change records it).
    pub fn runner(&self) -> Result<Runner, OpError> {
        let mut runner = Runner::new(self.load()?)?;
        runner.expire_leases(now_unix());
        Ok(runner)
    }

    /// Applies one operation for the store's agent (none by default).
    pub fn apply(&self, op: &Op) -> Result<Applied, OpError> {
        self.apply_as(op, &Caller::default())
    }

    /// Applies one operation for `caller`, at the clock's time, through the
    /// state file's [`PlanStore`] backend (see [`Store::into_plan_store`]):
    /// a query just reads; a change goes through [`Store::transact`].
    pub fn apply_as(&self, op: &Op, caller: &Caller) -> Result<Applied, OpError> {
        let caller = Caller {
            agent: caller.agent.clone().or_else(|| self.agent.clone()),
            ..caller.clone()
        };
        let plan_id = self.message_plan_id();
        self.clone().into_plan_store().apply(&plan_id, op, &caller)
    }

    /// The agent of [`Store::apply`]'s calls that name none
    /// (`planc mcp --agent`).
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The id of a plan a message creates in this state file: its
    /// session's key (`.sessions/KEY/plan.json`), else the file's name.
    pub fn message_plan_id(&self) -> String {
        let in_session = self
            .path
            .parent()
            .and_then(|dir| dir.parent())
            .and_then(|dir| dir.file_name())
            .is_some_and(|name| name == super::SESSIONS_DIR);
        let named = if in_session {
            self.path.parent().and_then(|dir| dir.file_name())
        } else {
            self.path.file_stem()
        };
        named.map_or_else(|| "plan".to_owned(), |n| n.to_string_lossy().into_owned())
    }

    /// Runs `change` on the state under the lock, after expiring the leases
    /// that ran out; when either returns events, commits the new state as the
    /// next revision (with `meta.updated_at`) together with one log record of
    /// them. A refused change, or one that cannot be written, leaves the
    /// state and the log as they were.
    pub fn transact<T>(
        &self,
        op: &str,
        change: impl FnOnce(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
    ) -> Result<T, OpError> {
        self.transact_logged(op, change).map(|(value, _)| value)
    }

    /// [`Store::transact`], also giving back the log record it committed
    /// (none when nothing changed).
    pub(crate) fn transact_logged<T>(
        &self,
        op: &str,
        change: impl FnOnce(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
    ) -> Result<(T, Option<LogRecord>), OpError> {
        let (transaction, doc) = Transaction::begin(self)?;
        let (value, next) = plan_store::next_revision(doc, op, change)?;
        let Some((doc, record)) = next else {
            return Ok((value, None));
        };
        transaction.commit(&doc, &record)?;
        Ok((value, Some(record)))
    }

    /// A reader of the event log that hands out committed records only.
    /// A state from planc 0.1 whose log has not been moved yet (see
    /// [`Transaction::begin`]) is read from its old log.
    pub fn log_reader(&self) -> Result<LogReader, OpError> {
        let (path, state) = self.log_files()?;
        LogReader::open(path.clone(), state).map_err(|e| io_error(&path, "read", e))
    }

    /// The event log to read (a planc 0.1 log not moved yet: that one) and
    /// the real state file.
    fn log_files(&self) -> Result<(PathBuf, PathBuf), OpError> {
        let files = Files::resolve(&self.path).map_err(|e| io_error(&self.path, "read", e))?;
        let path = match files.legacy_log() {
            Some(legacy) if !files.log.exists() && legacy.exists() => legacy,
            _ => files.log,
        };
        Ok((path, files.state))
    }

    /// `STATE_IO` unless the caller may write the state file: a rename would
    /// replace a read-only one without a word.
    fn require_writable(&self, metadata: &fs::Metadata) -> Result<(), OpError> {
        if files::is_writable(&self.path, metadata) {
            return Ok(());
        }
        Err(OpError::new(
            ErrorCode::StateIo,
            format!(
                "{} is read-only; make it writable (chmod u+w) to change it",
                self.path.display()
            ),
        )
        .with(json!({"path": self.path.display().to_string(), "access": "write"})))
    }
}

/// One change in progress: the lock held, the state read, the log repaired.
struct Transaction {
    files: Files,
    lock: Lock,
    /// The state file as it was (its permissions and owner go to the new one).
    metadata: fs::Metadata,
}

impl Transaction {
    /// Takes the lock, reads the state, and repairs what a killed writer
    /// left: a log record ahead of the state or a torn line, temporary
    /// files. Moves a planc 0.1 log (`plan.events.jsonl`) to its new name.
    fn begin(store: &Store) -> Result<(Transaction, PlanDocument), OpError> {
        let unreadable = |e| io_error(&store.path, "read", e);
        let files = Files::resolve(&store.path).map_err(unreadable)?;
        // A missing state gets no lock file.
        fs::metadata(&files.state).map_err(unreadable)?;
        let lock = Lock::acquire(&files.lock, store.wait)?;
        let metadata = fs::metadata(&files.state).map_err(unreadable)?;
        let doc = store.read(&files.state)?;
        store.require_writable(&metadata)?;
        if let Some(legacy) = files.legacy_log() {
            if !files.log.exists() && legacy.exists() {
                fs::rename(&legacy, &files.log).map_err(|e| io_error(&legacy, "write", e))?;
            }
        }
        EventLog::new(&files)
            .recover(&doc)
            .map_err(|e| io_error(&files.log, "write", e))?;
        files.remove_stale_temps();
        fault::point("locked").map_err(|e| io_error(&files.state, "write", e))?;
        let transaction = Transaction {
            files,
            lock,
            metadata,
        };
        Ok((transaction, doc))
    }

    /// Commits `doc` with `record`: temporary state, log record, rename (the
    /// commit point). Any failure undoes what was done, so the state and the
    /// log stay as they were.
    fn commit(self, doc: &PlanDocument, record: &LogRecord) -> Result<(), OpError> {
        let Transaction {
            files,
            lock,
            metadata,
        } = self;
        let state_error = |e| io_error(&files.state, "write", e);
        let temp = files
            .write_temp(
                doc.to_json().as_bytes(),
                Some(&metadata),
                Some("state-write"),
            )
            .map_err(state_error)?;
        fault::point("log-append").map_err(state_error)?;
        // The first write others can see: only while the lock is still ours.
        lock.verify()?;
        let log = EventLog::new(&files);
        let before = log
            .append(record)
            .map_err(|e| io_error(&files.log, "write", e))?;
        if let Err(e) = fault::point("state-rename").and_then(|()| files.persist(temp)) {
            // Best effort: a record left ahead of the state is cut by the next writer.
            let _ = log.truncate(before);
            return Err(state_error(e));
        }
        // Only a crash means anything here: the change is committed.
        let _ = fault::point("renamed");
        Ok(())
    }
}

fn io_error(path: &Path, access: &str, error: io::Error) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!("cannot {access} {}: {error}", path.display()),
    )
    .with(json!({"path": path.display().to_string(), "access": access}))
}
