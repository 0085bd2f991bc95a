//! The JSON backends of [`PlanStore`]: one state file holding one plan
//! ([`JsonFileStore`]), and a directory of state files, one per plan
//! ([`JsonDirStore`]). Both go through [`Store`] (the lock, the write-ahead
//! event log, atomic renames), so `planc run STATE` and a store on the same
//! files see each other's changes.

use std::collections::HashMap;
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
use super::{io_error, Store};

mod feed;
mod file;
mod logs;
pub(super) use feed::OutsideReset;
use feed::{Feed, Index};
pub use file::JsonFileStore;
use logs::PlanLog;

/// How a state file in a directory store is named: `PLAN_ID.json`.
const STATE_EXTENSION: &str = ".json";

/// A directory of JSON state files, one per plan: `PLAN_ID.json`, with
/// `PLAN_ID.json.lock` and `PLAN_ID.json.events.jsonl` beside it.
///
/// The files have no global order: [`PlanStore::feed`]'s order is kept in
/// an index beside them (`.feed.jsonl`, see `json/feed.rs`), in which an
/// event takes the next position when it is first found in its plan's log,
/// and keeps it.
///
/// A handle keeps what it has read of the index and of each plan's log
/// (how far, and where each record is), so a change reads only the lines
/// written since: its own plan's new records and the index's new lines.
/// A read of the feed or of a plan's events also looks at every plan's log
/// for records written since (by `planc run STATE` outside the store), and
/// reads again only the records it hands out.
///
/// Its subscribers get the feed in order: each change through the handle
/// sends, in position order, every event the feed has past the last one
/// sent — with its own, those other handles committed meanwhile.
#[derive(Debug)]
pub struct JsonDirStore {
    dir: PathBuf,
    subscribers: Subscribers,
    cache: Mutex<Cache>,
}

/// What a handle has read of the directory.
#[derive(Debug, Default)]
struct Cache {
    index: Index,
    /// Per plan, its log.
    logs: HashMap<String, PlanLog>,
    /// The last position sent to the subscribers (none before the first).
    sent: Option<u64>,
    /// Bytes read from the index and the logs, in all.
    bytes_read: u64,
}

impl JsonDirStore {
    /// The store of the directory `dir`, created when missing.
    pub fn open(dir: &Path) -> Result<JsonDirStore, OpError> {
        fs::create_dir_all(dir).map_err(|e| dir_error(dir, "write", e))?;
        Ok(JsonDirStore {
            dir: dir.to_path_buf(),
            subscribers: Subscribers::default(),
            cache: Mutex::new(Cache::default()),
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

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Creates or deletes plan `plan_id`'s state (`write`) and writes the
    /// plan's reset line, holding the feed's lock from before the write to
    /// after the reset, so no reader takes the old events for the new; what
    /// was read of the plan's log is forgotten.
    fn resetting<T>(
        &self,
        plan_id: &str,
        write: impl FnOnce() -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let mut cache = self.cache();
        let Cache {
            index,
            logs,
            bytes_read,
            ..
        } = &mut *cache;
        let mut feed = open_feed(&self.dir, index, logs, bytes_read, true)?;
        logs.remove(plan_id);
        let written = write()?;
        feed.reset(plan_id)?;
        Ok(written)
    }

    /// The bytes this handle has read from the index and the logs.
    #[cfg(test)]
    fn bytes_read(&self) -> u64 {
        self.cache().bytes_read
    }

    /// Locks the index and reads what is new in it and in the logs of
    /// `plans`, and gives their events the index does not hold yet the next
    /// positions. Every plan's when `plans` is none.
    fn sync<'c>(
        &self,
        index: &'c mut Index,
        logs: &mut HashMap<String, PlanLog>,
        bytes_read: &mut u64,
        plans: Option<&[String]>,
    ) -> Result<Feed<'c>, OpError> {
        let mut feed = open_feed(&self.dir, index, logs, bytes_read, false)?;
        let all;
        let plans = match plans {
            Some(plans) => plans,
            None => {
                all = self.plan_ids()?;
                // Deleted plans are forgotten.
                logs.retain(|plan, _| all.binary_search(plan).is_ok());
                &all
            }
        };
        let mut new = Vec::new();
        let mut read = || -> Result<(), OpError> {
            for plan in plans {
                let (path, state) = self.store(plan)?.log_files()?;
                let log = logs.entry(plan.clone()).or_default();
                *bytes_read += log
                    .refresh(&path, &state)
                    .map_err(|e| io_error(&path, "read", e))?;
                for seq in log.pending.drain(..) {
                    let at = &log.records[&seq].at;
                    if feed.index.position(plan, seq, at).is_none() {
                        new.push((at.clone(), plan.clone(), seq));
                    }
                }
            }
            feed.add(std::mem::take(&mut new))
        };
        if let Err(e) = read() {
            // Their new records are read again next time.
            for plan in plans {
                logs.remove(plan);
            }
            return Err(e);
        }
        Ok(feed)
    }

    /// The events at `positions` (position, plan id, revision) that are in
    /// their plans' logs, read from there, up to `limit`.
    fn read_events<'p>(
        &self,
        feed: &Feed<'_>,
        logs: &mut HashMap<String, PlanLog>,
        bytes_read: &mut u64,
        positions: impl Iterator<Item = (u64, &'p str, u64)>,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OpError> {
        let mut events = Vec::new();
        let mut stale = Vec::new();
        for (position, plan_id, seq) in positions {
            if events.len() >= limit {
                break;
            }
            let Some(log) = logs.get(plan_id) else {
                continue;
            };
            let indexed = log.records.get(&seq);
            let indexed = indexed.and_then(|entry| feed.index.position(plan_id, seq, &entry.at));
            if indexed.is_none() {
                continue;
            }
            let (path, _) = self.store(plan_id)?.log_files()?;
            let (record, read) = log
                .read(&path, seq)
                .map_err(|e| io_error(&path, "read", e))?;
            *bytes_read += read;
            match record {
                Some(record) => events.push(stored(plan_id, record, |_| position)),
                // Started over behind the index's back: read again next time.
                None => stale.push(plan_id.to_owned()),
            }
        }
        for plan in stale {
            logs.remove(&plan);
        }
        Ok(events)
    }

    /// A committed event with its feed position, sent to the subscribers
    /// after the feed's events before it that were not sent yet. The feed's
    /// lock is held while sending, so two changes are sent in the order of
    /// their positions whichever thread found them.
    fn publish(&self, plan_id: &str, record: LogRecord) -> StoredEvent {
        let mut event = stored(plan_id, record, |_| 0);
        let mut cache = self.cache();
        let Cache {
            index,
            logs,
            sent,
            bytes_read,
        } = &mut *cache;
        let plan = [plan_id.to_owned()];
        let feed = self.sync(index, logs, bytes_read, Some(&plan));
        let Some((feed, position)) = feed.ok().and_then(|feed| {
            let position = feed.index.position(plan_id, event.seq, &event.record.at)?;
            Some((feed, position))
        }) else {
            // The feed could not be read: the event alone, without a position.
            self.subscribers.send(&event);
            return event;
        };
        event.position = position;
        let after = sent.unwrap_or(position - 1);
        // The other plans with events to send: their logs' new records.
        let mut others: Vec<String> = feed
            .index
            .after(after)
            .map(|(_, plan, _)| plan)
            .filter(|plan| *plan != plan_id)
            .map(str::to_owned)
            .collect();
        others.sort();
        others.dedup();
        for other in &others {
            let Ok(store) = self.store(other) else {
                continue;
            };
            let Some((path, state)) = store.log_files().ok().filter(|_| store.exists()) else {
                // Deleted (outside the store): its events are not in the feed.
                logs.remove(other);
                continue;
            };
            let log = logs.entry(other.clone()).or_default();
            *bytes_read += log.refresh(&path, &state).unwrap_or(0);
        }
        let mut unsent = Vec::new();
        for (place, plan, seq) in feed.index.after(after) {
            if place == position {
                unsent.push(event.clone());
            } else if let Ok(mut read) = self.read_events(
                &feed,
                logs,
                bytes_read,
                std::iter::once((place, plan, seq)),
                1,
            ) {
                unsent.append(&mut read);
            }
        }
        for unsent in &unsent {
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
        let doc = self.resetting(plan_id, || {
            store.create_unfed(doc, force).map_err(|e| {
                // Another creator won the race.
                if !force && e.code == ErrorCode::StateIo && store.exists() {
                    plan_exists(plan_id)
                } else {
                    e
                }
            })
        })?;
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
        self.resetting(plan_id, || store.delete(|_| Ok(())))
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
        let mut cache = self.cache();
        let Cache {
            index,
            logs,
            bytes_read,
            ..
        } = &mut *cache;
        let feed = self.sync(index, logs, bytes_read, None)?;
        let mut positions: Vec<(u64, &str, u64)> = logs
            .get(plan_id)
            .into_iter()
            .flat_map(|log| log.records.range(after_seq.saturating_add(1)..))
            .filter_map(|(&seq, entry)| {
                let position = feed.index.position(plan_id, seq, &entry.at)?;
                Some((position, plan_id, seq))
            })
            .collect();
        positions.sort_unstable();
        self.read_events(&feed, logs, bytes_read, positions.into_iter(), limit)
    }

    fn feed(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, OpError> {
        let mut cache = self.cache();
        let Cache {
            index,
            logs,
            bytes_read,
            ..
        } = &mut *cache;
        let feed = self.sync(index, logs, bytes_read, None)?;
        self.read_events(&feed, logs, bytes_read, feed.index.after(after), limit)
    }

    fn subscribe(&self) -> std::sync::mpsc::Receiver<StoredEvent> {
        self.subscribers.subscribe()
    }
}

/// Locks the index of `dir` and reads what is new in it (see [`Feed::open`]),
/// forgetting what was read of the logs of the plans it reset (of every
/// plan when it was read again from the top): they are read again.
fn open_feed<'c>(
    dir: &Path,
    index: &'c mut Index,
    logs: &mut HashMap<String, PlanLog>,
    bytes_read: &mut u64,
    lock_required: bool,
) -> Result<Feed<'c>, OpError> {
    let mut feed = Feed::open(dir, index, lock_required)?;
    *bytes_read += feed.bytes_read;
    if feed.from_scratch {
        logs.clear();
    }
    for plan in feed.reset.drain() {
        logs.remove(&plan);
    }
    Ok(feed)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::ops::{LogArgs, LogKind, Op};
    use crate::runner::tests::plan;
    use crate::runner::Caller;

    /// The bytes of the directory's index and logs.
    fn history(dir: &Path) -> u64 {
        fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name == ".feed.jsonl" || name.ends_with(".events.jsonl")
            })
            .map(|e| e.metadata().unwrap().len())
            .sum()
    }

    /// A change reads what was written since the handle's last read: its
    /// own record and the index's new lines, however long the history
    /// (the feed and every log were once read whole at each change). So
    /// does a read of the feed's last events.
    #[test]
    fn a_change_reads_what_is_new_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = JsonDirStore::open(dir.path()).unwrap();
        let other = JsonDirStore::open(dir.path()).unwrap();
        for id in ["a", "b", "c"] {
            store.create(id, plan(&[&[]]), false).unwrap();
        }
        let note = Op::LogEvent(LogArgs {
            kind: LogKind::Message,
            data: "a note".into(),
            task_id: None,
        });
        let change = |store: &JsonDirStore, plan_id| {
            let before = store.bytes_read();
            store.apply(plan_id, &note, &Caller::default()).unwrap();
            store.bytes_read() - before
        };
        change(&store, "a");
        // Another handle's change: its line in the index and its record.
        change(&other, "b");
        let early = change(&store, "a");
        for i in 0..300 {
            change(&other, ["a", "b", "c"][i % 3]);
            change(&store, ["a", "b", "c"][(i + 1) % 3]);
        }
        change(&other, "b");
        let late = change(&store, "a");
        let history = history(dir.path());
        assert!(history > 100_000, "{history}");
        // Revisions and positions have a digit or two more.
        assert!(
            late <= early + 16,
            "{late} bytes read at the end, {early} at the start"
        );

        let before = store.bytes_read();
        let feed = store.feed(0, 10_000).unwrap();
        assert_eq!(feed.len(), 3 + 2 + 1 + 600 + 2);
        let whole = store.bytes_read() - before;
        let before = store.bytes_read();
        let last = store.feed(feed[feed.len() - 3].position, 10).unwrap();
        assert_eq!(last[..], feed[feed.len() - 2..]);
        let read = store.bytes_read() - before;
        assert!(
            read * 100 < whole,
            "{read} bytes for 2 events, {whole} for all"
        );
    }
}
