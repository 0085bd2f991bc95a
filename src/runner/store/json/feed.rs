//! The feed of a directory store: every plan's events in one order that
//! never changes.
//!
//! The state files have no global order of their own, so the directory
//! keeps an index, `.feed.jsonl`: one line per event (plan id, revision,
//! time), appended under the lock `.feed.lock` the first time the event is
//! found in its plan's log — by the store that committed it, right after
//! the commit, or by any reader of the feed before that. An event's
//! position is its line's number: a position handed out never moves to
//! another event, and an event found later gets a higher one, so a stream
//! resumed from the last position it saw (`Last-Event-ID`) misses nothing
//! and sees nothing twice. A plan deleted, or created afresh, gets a reset
//! line: the lines before it stand for events that are gone.
//!
//! (The order used to be worked out at each read, by time in whole seconds
//! and then plan id: an event committed later, to a plan whose id sorts
//! first, took a position already handed out, and deleting a plan moved
//! every later event down.)

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runner::error::OpError;
use crate::runner::events::LogRecord;

use super::super::io_error;
use super::super::lock::{Lock, LockWait};
use super::super::plan_store::StoredEvent;
use super::super::DEFAULT_LOCK_TIMEOUT;
use super::stored;

/// The index, in the store's directory (a plan id never starts with a dot).
const FEED: &str = ".feed.jsonl";
/// Its lock: held to read the index with the logs and to append.
const FEED_LOCK: &str = ".feed.lock";

/// A line of the index: an event, or a plan's reset.
#[derive(Serialize, Deserialize)]
struct Line {
    plan_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    reset: bool,
}

/// The index of a directory, read and locked: dropped, it lets go.
pub(super) struct Feed {
    _lock: Lock,
    path: PathBuf,
    /// Lines in the file (the next line's position is one more).
    lines: u64,
    /// Per plan, since its last reset: revision → (position, time).
    index: HashMap<String, HashMap<u64, (u64, String)>>,
}

impl Feed {
    /// Locks the index of `dir` and reads it. A torn last line (a crash in
    /// the middle of an append) is cut: its event was never handed out.
    pub fn open(dir: &Path) -> Result<Feed, OpError> {
        let lock = Lock::acquire(
            &dir.join(FEED_LOCK),
            LockWait {
                timeout: DEFAULT_LOCK_TIMEOUT,
                notice: None,
            },
        )?;
        let path = dir.join(FEED);
        let mut text = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_error(&path, "read", e)),
        };
        let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole < text.len() {
            text.truncate(whole);
            let file = OpenOptions::new().write(true).open(&path);
            file.and_then(|f| f.set_len(whole as u64).and_then(|()| f.sync_data()))
                .map_err(|e| io_error(&path, "write", e))?;
        }
        let mut feed = Feed {
            _lock: lock,
            path,
            lines: 0,
            index: HashMap::new(),
        };
        for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            feed.lines += 1;
            // A line that does not parse still holds its position.
            if let Ok(line) = serde_json::from_slice::<Line>(line) {
                feed.note(line, feed.lines);
            }
        }
        Ok(feed)
    }

    fn note(&mut self, line: Line, position: u64) {
        if line.reset {
            self.index.remove(&line.plan_id);
        } else if let (Some(seq), Some(at)) = (line.seq, line.at) {
            let plan = self.index.entry(line.plan_id).or_default();
            plan.insert(seq, (position, at));
        }
    }

    /// Says that plan `plan_id`'s events so far are gone (it was deleted,
    /// or created afresh): its next events are new ones, whatever their
    /// revisions.
    pub fn reset(&mut self, plan_id: &str) -> Result<(), OpError> {
        if !self.index.contains_key(plan_id) {
            return Ok(());
        }
        self.append(vec![Line {
            plan_id: plan_id.to_owned(),
            seq: None,
            at: None,
            reset: true,
        }])
    }

    /// Every event of `logs` (each plan's committed records) with its
    /// position, in the feed's order. Events the index does not hold yet are
    /// appended first, by time, plan id and revision (those committed since
    /// the last read: the order among them is the best the files tell).
    pub fn order(
        &mut self,
        logs: Vec<(String, Vec<LogRecord>)>,
    ) -> Result<Vec<StoredEvent>, OpError> {
        let mut known = Vec::new();
        let mut new = Vec::new();
        for (plan_id, records) in logs {
            for record in records {
                let indexed = self
                    .index
                    .get(&plan_id)
                    .and_then(|plan| plan.get(&record.revision))
                    .filter(|(_, at)| *at == record.at)
                    .map(|&(position, _)| position);
                match indexed {
                    Some(position) => known.push(stored(&plan_id, record, |_| position)),
                    None => new.push(stored(&plan_id, record, |_| 0)),
                }
            }
        }
        new.sort_by(|a, b| {
            (&a.record.at, &a.plan_id, a.seq).cmp(&(&b.record.at, &b.plan_id, b.seq))
        });
        let first = self.lines + 1;
        self.append(
            new.iter()
                .map(|event| Line {
                    plan_id: event.plan_id.clone(),
                    seq: Some(event.seq),
                    at: Some(event.record.at.clone()),
                    reset: false,
                })
                .collect(),
        )?;
        for (i, event) in new.iter_mut().enumerate() {
            event.position = first + i as u64;
        }
        known.append(&mut new);
        known.sort_by_key(|event| event.position);
        Ok(known)
    }

    /// Appends `lines`, durably: a position is handed out only once its
    /// line is on disk.
    fn append(&mut self, lines: Vec<Line>) -> Result<(), OpError> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut text = Vec::new();
        for line in &lines {
            serde_json::to_writer(&mut text, line).expect("a feed line serialises");
            text.push(b'\n');
        }
        write_all(&self.path, &text).map_err(|e| io_error(&self.path, "write", e))?;
        for line in lines {
            self.lines += 1;
            self.note(line, self.lines);
        }
        Ok(())
    }
}

/// Appends `text` to the file at `path` and syncs it (and, when the file
/// is new, the directory that names it).
fn write_all(path: &Path, text: &[u8]) -> io::Result<()> {
    let new = !path.exists();
    let mut file: File = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(text)?;
    file.sync_data()?;
    match path.parent() {
        Some(dir) if new => File::open(dir)?.sync_all(),
        _ => Ok(()),
    }
}
