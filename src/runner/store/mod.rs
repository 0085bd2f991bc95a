//! The edge of the runner: state files on disk.
//!
//! A state is a plan document in a JSON file. A change takes an exclusive OS
//! lock on `STATE.lock`, reads the state, applies the operation, writes the new
//! state to a temporary file in the same directory, syncs it, renames it over
//! the old one and syncs the directory — so a crash at any moment leaves the
//! old or the new state, never a torn one — then appends one record to the
//! event log `STATE.events.jsonl` and lets go of the lock. Readers need no lock.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::document::PlanDocument;

use super::error::{ErrorCode, OpError};
use super::events::{Event, EventKind, LogRecord};
use super::ops::Op;
use super::time::now_rfc3339;
use super::{Applied, Runner};

/// A state file and the files beside it.
#[derive(Clone, Debug)]
pub struct Store {
    path: PathBuf,
}

impl Store {
    /// The store for the state file at `path` (nothing is read yet).
    pub fn new(path: impl Into<PathBuf>) -> Store {
        Store { path: path.into() }
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The event log: `plan.json` → `plan.events.jsonl`.
    pub fn log_path(&self) -> PathBuf {
        self.sibling(".events.jsonl")
    }

    /// The lock file: `plan.json` → `plan.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.sibling(".lock")
    }

    fn sibling(&self, suffix: &str) -> PathBuf {
        let name = self
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("state");
        let stem = name.strip_suffix(".json").unwrap_or(name);
        self.path.with_file_name(format!("{stem}{suffix}"))
    }

    /// Creates the state file from a plan document (`planc run init`): sets
    /// `created_at`, starts the event log afresh, revision 1. Refuses to
    /// overwrite an existing state unless `force`.
    pub fn create(&self, mut doc: PlanDocument, force: bool) -> Result<PlanDocument, OpError> {
        let _lock = self.lock()?;
        if !force && self.path.exists() {
            return Err(OpError::new(
                ErrorCode::StateIo,
                format!(
                    "{} exists already; pass --force to start it over",
                    self.path.display()
                ),
            ));
        }
        let now = now_rfc3339();
        doc.meta.created_at = Some(now.clone());
        doc.meta.updated_at = Some(now.clone());
        doc.state.revision += 1;
        // Checks the document is a consistent state before writing it.
        let runner = Runner::new(doc)?;
        let doc = runner.into_document();
        write_atomically(&self.path, doc.to_json().as_bytes())?;
        let record = LogRecord {
            revision: doc.state.revision,
            at: now,
            op: "init".to_owned(),
            plan_status: doc.state.status,
            events: vec![Event::plan(
                EventKind::Created,
                format!(
                    "Plan `{}` created with {} task(s)",
                    doc.meta.id,
                    doc.tasks.len()
                ),
            )],
        };
        let log = self.log_path();
        fs::write(&log, b"").map_err(|e| io_error(&log, "write", e))?;
        append_record(&log, &record)?;
        Ok(doc)
    }

    /// Reads the state (no lock: writes replace the file atomically).
    pub fn load(&self) -> Result<PlanDocument, OpError> {
        let text = fs::read_to_string(&self.path).map_err(|e| io_error(&self.path, "read", e))?;
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

    /// Reads the state into a runner.
    pub fn runner(&self) -> Result<Runner, OpError> {
        Runner::new(self.load()?)
    }

    /// Applies one operation: a query just reads; a change goes through [`Store::transact`].
    pub fn apply(&self, op: &Op) -> Result<Applied, OpError> {
        if !op.is_change() {
            return self.runner()?.apply(op);
        }
        self.transact(op.name(), |runner| {
            let applied = runner.apply(op)?;
            let events = applied.events.clone();
            Ok((applied, events))
        })
    }

    /// Runs `change` on the state under the lock; when it returns events,
    /// saves the new state (with `meta.updated_at`) and logs them as one record.
    pub fn transact<T>(
        &self,
        op: &str,
        change: impl FnOnce(&mut Runner) -> Result<(T, Vec<Event>), OpError>,
    ) -> Result<T, OpError> {
        let _lock = self.lock()?;
        let mut runner = self.runner()?;
        let (value, events) = change(&mut runner)?;
        if events.is_empty() {
            return Ok(value);
        }
        let now = now_rfc3339();
        let mut doc = runner.into_document();
        doc.meta.updated_at = Some(now.clone());
        write_atomically(&self.path, doc.to_json().as_bytes())?;
        append_record(
            &self.log_path(),
            &LogRecord {
                revision: doc.state.revision,
                at: now,
                op: op.to_owned(),
                plan_status: doc.state.status,
                events,
            },
        )?;
        Ok(value)
    }

    /// Takes the exclusive lock; it is let go when the file is dropped.
    fn lock(&self) -> Result<File, OpError> {
        let path = self.lock_path();
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_error(&path, "open", e))?;
        fs4::FileExt::lock(&file).map_err(|e| io_error(&path, "lock", e))?;
        Ok(file)
    }
}

/// Writes `bytes` to `path` so that `path` holds either its old or its new
/// content at every moment: temporary file, sync, rename, sync the directory.
/// The caller holds the lock, so one temporary name serves (a writer killed
/// mid-write leaves it behind; the next writer overwrites it).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), OpError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
    let tmp = dir.join(format!(".{name}.tmp"));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        // Makes the rename itself durable; not every platform can open a directory.
        if let Ok(dir) = File::open(&dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e: std::io::Error| {
        let _ = fs::remove_file(&tmp);
        io_error(path, "write", e)
    })
}

fn append_record(log: &Path, record: &LogRecord) -> Result<(), OpError> {
    let mut line = serde_json::to_string(record)
        .map_err(|e| OpError::new(ErrorCode::StateIo, e.to_string()))?;
    line.push('\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| io_error(log, "open", e))?;
    file.write_all(line.as_bytes())
        .map_err(|e| io_error(log, "append to", e))?;
    file.sync_data().map_err(|e| io_error(log, "sync", e))
}

fn io_error(path: &Path, verb: &str, error: std::io::Error) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!("cannot {verb} {}: {error}", path.display()),
    )
    .with(json!({"path": path.display().to_string()}))
}
