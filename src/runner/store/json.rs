//! The JSON backends of [`PlanStore`]: one state file holding one plan
//! ([`JsonFileStore`]), and a directory of state files, one per plan
//! ([`JsonDirStore`]). Both go through [`Store`] (the lock, the write-ahead
//! event log, atomic renames), so `planc run STATE` and a store on the same
//! files see each other's changes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde_json::json;

use crate::document::PlanDocument;
use crate::runner::error::{ErrorCode, OpError};
use crate::runner::events::{Event, LogRecord};
use crate::runner::Runner;

use super::plan_store::{
    plan_exists, plan_not_found, validate_plan_id, PlanStore, PlanSummary, StoredEvent, Subscribers,
};
use super::Store;

mod feed;
use feed::Feed;

/// How a state file in a directory store is named: `PLAN_ID.json`.
const STATE_EXTENSION: &str = ".json";

/// One JSON state file, holding one plan: its plan id is the document's
/// `meta.id`. A global position is the event's revision.
#[derive(Debug)]
pub struct JsonFileStore {
    store: Store,
    subscribers: Subscribers,
}

impl JsonFileStore {
    /// The store of the state file at `path` (nothing is read yet).
    pub fn new(path: &Path) -> JsonFileStore {
        JsonFileStore {
            store: Store::new(path),
            subscribers: Subscribers::default(),
        }
    }

    /// The state, if it is plan `plan_id`'s.
    fn read(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        validate_plan_id(plan_id)?;
        if !self.store.exists() {
            return Err(plan_not_found(plan_id));
        }
        let doc = self.store.load()?;
        if doc.meta.id != plan_id {
            return Err(plan_not_found(plan_id));
        }
        Ok(doc)
    }
}

impl PlanStore for JsonFileStore {
    fn url(&self) -> String {
        self.store.path().display().to_string()
    }

    fn create(
        &self,
        plan_id: &str,
        mut doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError> {
        validate_plan_id(plan_id)?;
        if !force && self.store.exists() {
            return Err(plan_exists(plan_id));
        }
        plan_id.clone_into(&mut doc.meta.id);
        let doc = self.store.create(doc, force)?;
        let event = stored(plan_id, init(&doc), |r| r.revision);
        self.subscribers.send(&event);
        Ok(doc)
    }

    fn list(&self) -> Result<Vec<PlanSummary>, OpError> {
        if !self.store.exists() {
            return Ok(Vec::new());
        }
        let doc = self.store.load()?;
        Ok(vec![PlanSummary::of(&doc.meta.id, &doc)])
    }

    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        self.read(plan_id)
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        self.read(plan_id)?;
        self.store.delete(|doc| match doc.meta.id == plan_id {
            true => Ok(()),
            false => Err(plan_not_found(plan_id)),
        })
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        self.read(plan_id)?;
        let ((), record) = self.store.transact_logged(op, |runner| {
            if runner.document().meta.id != plan_id {
                return Err(plan_not_found(plan_id));
            }
            Ok(((), change(runner)?))
        })?;
        let event = record.map(|record| stored(plan_id, record, |r| r.revision));
        if let Some(event) = &event {
            self.subscribers.send(event);
        }
        Ok(event)
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        self.read(plan_id)?;
        Ok(records(&self.store)?
            .into_iter()
            .filter(|r| r.revision > after_seq)
            .take(limit)
            .map(|r| stored(plan_id, r, |r| r.revision))
            .collect())
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        if !self.store.exists() {
            return Ok(Vec::new());
        }
        let plan_id = self.store.load()?.meta.id;
        self.events(&plan_id, after, limit)
    }

    fn subscribe(&self) -> std::sync::mpsc::Receiver<StoredEvent> {
        self.subscribers.subscribe()
    }
}

/// A directory of JSON state files, one per plan: `PLAN_ID.json`, with
/// `PLAN_ID.json.lock` and `PLAN_ID.json.events.jsonl` beside it.
///
/// The files have no global order: [`PlanStore::feed`]'s order is kept in
/// an index beside them (`.feed.jsonl`, see `json/feed.rs`), in which an
/// event takes the next position when it is first found in its plan's log,
/// and keeps it.
///
/// Its subscribers get the feed in order: each change through the handle
/// sends, in position order, every event the feed has past the last one
/// sent — with its own, those other handles committed meanwhile.
#[derive(Debug)]
pub struct JsonDirStore {
    dir: PathBuf,
    subscribers: Subscribers,
    /// The last position sent to the subscribers (none before the first).
    sent: Mutex<Option<u64>>,
}

impl JsonDirStore {
    /// The store of the directory `dir`, created when missing.
    pub fn open(dir: &Path) -> Result<JsonDirStore, OpError> {
        fs::create_dir_all(dir).map_err(|e| dir_error(dir, "write", e))?;
        Ok(JsonDirStore {
            dir: dir.to_path_buf(),
            subscribers: Subscribers::default(),
            sent: Mutex::new(None),
        })
    }

    /// The state file of plan `plan_id`.
    fn store(&self, plan_id: &str) -> Result<Store, OpError> {
        validate_plan_id(plan_id)?;
        Ok(Store::new(
            self.dir.join(format!("{plan_id}{STATE_EXTENSION}")),
        ))
    }

    /// The state file of an existing plan `plan_id`.
    fn existing(&self, plan_id: &str) -> Result<Store, OpError> {
        let store = self.store(plan_id)?;
        if !store.exists() {
            return Err(plan_not_found(plan_id));
        }
        Ok(store)
    }

    /// The plan ids of the directory's state files, sorted.
    fn plan_ids(&self) -> Result<Vec<String>, OpError> {
        let entries = fs::read_dir(&self.dir).map_err(|e| dir_error(&self.dir, "read", e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| dir_error(&self.dir, "read", e))?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|name| name.strip_suffix(STATE_EXTENSION))
            else {
                continue;
            };
            if validate_plan_id(id).is_ok() && entry.path().is_file() {
                ids.push(id.to_owned());
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// Every event of every plan, in the feed's order.
    fn all_events(&self) -> Result<Vec<StoredEvent>, OpError> {
        self.all_events_in(&mut Feed::open(&self.dir)?)
    }

    /// [`JsonDirStore::all_events`] with the feed's index locked already.
    fn all_events_in(&self, feed: &mut Feed) -> Result<Vec<StoredEvent>, OpError> {
        let mut logs = Vec::new();
        for plan_id in self.plan_ids()? {
            let store = self.store(&plan_id)?;
            let records = records(&store)?;
            logs.push((plan_id, records));
        }
        feed.order(logs)
    }

    /// A committed event with its feed position, sent to the subscribers
    /// after the feed's events before it that were not sent yet. The feed's
    /// lock is held while sending, so two changes are sent in the order of
    /// their positions whichever thread found them.
    fn publish(&self, plan_id: &str, record: LogRecord) -> StoredEvent {
        let mut event = stored(plan_id, record, |_| 0);
        let mut feed = Feed::open(&self.dir);
        let all = feed.as_mut().map(|feed| self.all_events_in(feed));
        let Some(found) = all
            .iter()
            .flatten()
            .flatten()
            .find(|e| e.plan_id == plan_id && e.seq == event.seq)
        else {
            // The feed could not be read: the event alone, without a position.
            self.subscribers.send(&event);
            return event;
        };
        event.position = found.position;
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        let after = sent.unwrap_or(event.position - 1);
        for unsent in all
            .iter()
            .flatten()
            .flatten()
            .filter(|e| e.position > after)
        {
            self.subscribers.send(unsent);
            *sent = Some(unsent.position);
        }
        drop(feed);
        event
    }
}

impl PlanStore for JsonDirStore {
    fn url(&self) -> String {
        format!("dir:{}", self.dir.display())
    }

    fn create(
        &self,
        plan_id: &str,
        mut doc: PlanDocument,
        force: bool,
    ) -> Result<PlanDocument, OpError> {
        let store = self.store(plan_id)?;
        if !force && store.exists() {
            return Err(plan_exists(plan_id));
        }
        plan_id.clone_into(&mut doc.meta.id);
        // The feed's lock is held from the new log to the reset of the
        // plan's old events, so no reader takes the one for the other.
        let mut feed = Feed::open(&self.dir)?;
        let doc = store.create(doc, force).map_err(|e| {
            // Another creator won the race.
            if !force && e.code == ErrorCode::StateIo && store.exists() {
                plan_exists(plan_id)
            } else {
                e
            }
        })?;
        feed.reset(plan_id)?;
        drop(feed);
        self.publish(plan_id, init(&doc));
        Ok(doc)
    }

    fn list(&self) -> Result<Vec<PlanSummary>, OpError> {
        let mut plans = Vec::new();
        for plan_id in self.plan_ids()? {
            match self.store(&plan_id)?.load() {
                Ok(doc) => plans.push(PlanSummary::of(&plan_id, &doc)),
                // Deleted since the directory was read.
                Err(_) if !self.store(&plan_id)?.exists() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(plans)
    }

    fn load(&self, plan_id: &str) -> Result<PlanDocument, OpError> {
        let store = self.existing(plan_id)?;
        store.load().map_err(|e| match store.exists() {
            true => e,
            false => plan_not_found(plan_id),
        })
    }

    fn delete(&self, plan_id: &str) -> Result<(), OpError> {
        let store = self.existing(plan_id)?;
        let mut feed = Feed::open(&self.dir)?;
        store.delete(|_| Ok(()))?;
        feed.reset(plan_id)
    }

    fn transact(
        &self,
        plan_id: &str,
        op: &str,
        change: &mut dyn FnMut(&mut Runner) -> Result<Vec<Event>, OpError>,
    ) -> Result<Option<StoredEvent>, OpError> {
        let store = self.existing(plan_id)?;
        let ((), record) = store
            .transact_logged(op, |runner| Ok(((), change(runner)?)))
            .map_err(|e| match store.exists() {
                true => e,
                false => plan_not_found(plan_id),
            })?;
        Ok(record.map(|record| self.publish(plan_id, record)))
    }

    fn events(
        &self,
        plan_id: &str,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        self.existing(plan_id)?;
        let mut events: Vec<StoredEvent> = self
            .all_events()?
            .into_iter()
            .filter(|e| e.plan_id == plan_id && e.seq > after_seq)
            .collect();
        events.truncate(limit);
        Ok(events)
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        let mut all = self.all_events()?;
        all.retain(|e| e.position > after);
        all.truncate(limit);
        Ok(all)
    }

    fn subscribe(&self) -> std::sync::mpsc::Receiver<StoredEvent> {
        self.subscribers.subscribe()
    }
}

/// The committed records of a state's event log (lines that are not
/// records are left out).
fn records(store: &Store) -> Result<Vec<LogRecord>, OpError> {
    let mut reader = store.log_reader()?;
    let lines = reader.read_committed().map_err(|e| {
        OpError::new(
            ErrorCode::StateIo,
            format!("cannot read {}: {e}", reader.path().display()),
        )
        .with(json!({"path": reader.path().display().to_string(), "access": "read"}))
    })?;
    Ok(lines
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// The record of a plan's creation.
fn init(doc: &PlanDocument) -> LogRecord {
    super::log::init_record(doc)
}

fn stored(plan_id: &str, record: LogRecord, position: impl Fn(&LogRecord) -> u64) -> StoredEvent {
    StoredEvent {
        plan_id: plan_id.to_owned(),
        seq: record.revision,
        position: position(&record),
        record,
    }
}

fn dir_error(dir: &Path, access: &str, error: io::Error) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!("cannot {access} the directory {}: {error}", dir.display()),
    )
    .with(json!({"path": dir.display().to_string(), "access": access}))
}
