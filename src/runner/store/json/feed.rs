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
//! A state file of the directory started over outside the store (`planc
//! run init --force DIR/ID.json`) gets a reset line too, written by that
//! command (see [`OutsideReset`]).
//!
//! A handle keeps what it has read of the index ([`Index`]): how far, and
//! every live position. Each time it locks the index it reads only the
//! lines appended since — from the top only when the file is shorter, or
//! another file, than the one it read.
//!
//! A reader that cannot take the lock (a read-only directory without the
//! lock file) reads the index without it, leaving out a torn last line (an
//! append in progress); and when it cannot append, the events the index
//! does not hold yet get, in its answers only, the positions an append
//! would give them.
//!
//! (The order used to be worked out at each read, by time in whole seconds
//! and then plan id: an event committed later, to a plan whose id sorts
//! first, took a position already handed out, and deleting a plan moved
//! every later event down.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runner::error::OpError;

use super::super::io_error;
use super::super::lock::{is_read_only, Lock, LockWait};
use super::super::log::{last_newline, read_range};
use super::super::plan_store::validate_plan_id;
use super::super::DEFAULT_LOCK_TIMEOUT;
use super::logs::FileId;
use super::STATE_EXTENSION;

/// The index, in the store's directory (a plan id never starts with a dot).
const FEED: &str = ".feed.jsonl";
/// Its lock: held to read the index with the logs and to append.
const FEED_LOCK: &str = ".feed.lock";

const WAIT: LockWait = LockWait {
    timeout: DEFAULT_LOCK_TIMEOUT,
    notice: None,
};

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

/// What a handle has read of the index.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// The file read (none: there was none).
    file: Option<FileId>,
    /// Bytes read: every whole line before this.
    offset: u64,
    /// Lines read (the next line's position is one more).
    lines: u64,
    /// Per plan, since its last reset: revision → (position, time).
    plans: HashMap<String, HashMap<u64, (u64, String)>>,
    /// The same, by position: (plan id, revision).
    positions: BTreeMap<u64, (String, u64)>,
    /// Whether lines were noted that are not in the file (it could not be
    /// written): the next read starts from the top.
    provisional: bool,
}

impl Index {
    /// The position of plan `plan_id`'s revision `seq` at time `at`.
    pub fn position(&self, plan_id: &str, seq: u64, at: &str) -> Option<u64> {
        self.plans
            .get(plan_id)?
            .get(&seq)
            .filter(|(_, indexed)| indexed == at)
            .map(|&(position, _)| position)
    }

    /// The positions after `after`, in order: (position, plan id, revision).
    pub fn after(&self, after: u64) -> impl Iterator<Item = (u64, &str, u64)> {
        self.positions
            .range(after.saturating_add(1)..)
            .map(|(&position, (plan, seq))| (position, plan.as_str(), *seq))
    }

    /// Notes `line` at `position`; a reset line's plan goes in `reset`.
    fn note(&mut self, line: Line, position: u64, reset: &mut HashSet<String>) {
        if line.reset {
            for (old, _) in self
                .plans
                .remove(&line.plan_id)
                .into_iter()
                .flatten()
                .map(|(_, p)| p)
            {
                self.positions.remove(&old);
            }
            reset.insert(line.plan_id);
        } else if let (Some(seq), Some(at)) = (line.seq, line.at) {
            let plan = self.plans.entry(line.plan_id.clone()).or_default();
            if let Some((old, _)) = plan.insert(seq, (position, at)) {
                self.positions.remove(&old);
            }
            self.positions.insert(position, (line.plan_id, seq));
        }
    }
}

/// The index of a directory, locked (when it can be) and read up to date:
/// dropped, it lets go.
pub(super) struct Feed<'a> {
    lock: Option<Lock>,
    path: PathBuf,
    pub index: &'a mut Index,
    /// The plans reset by the lines read now.
    pub reset: HashSet<String>,
    /// Whether the index was read again from the top.
    pub from_scratch: bool,
    /// The bytes of the index read.
    pub bytes_read: u64,
    /// Whether lines may be appended: the lock is held and the file ends
    /// with a whole line.
    appendable: bool,
}

impl<'a> Feed<'a> {
    /// Locks the index of `dir` and reads what `index` has not read of it.
    /// A torn last line (a crash in the middle of an append) is cut: its
    /// event was never handed out. Without `lock_required`, a reader that
    /// cannot make the lock file reads without the lock (see the module's
    /// documentation).
    pub fn open(
        dir: &Path,
        index: &'a mut Index,
        lock_required: bool,
    ) -> Result<Feed<'a>, OpError> {
        let lock_path = dir.join(FEED_LOCK);
        let lock = match lock_required {
            true => Some(Lock::acquire(&lock_path, WAIT)?),
            false => Lock::acquire_if_possible(&lock_path, WAIT)?,
        };
        let path = dir.join(FEED);
        let metadata = match fs::metadata(&path) {
            Ok(metadata) => Some(metadata),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&path, "read", e)),
        };
        let file = metadata.as_ref().map(FileId::of);
        let len = metadata.map_or(0, |m| m.len());
        let from_scratch =
            index.provisional || len < index.offset || (index.file.is_some() && index.file != file);
        if from_scratch {
            *index = Index::default();
        }
        index.file = file;
        let mut feed = Feed {
            appendable: lock.is_some(),
            lock,
            path,
            index,
            reset: HashSet::new(),
            from_scratch,
            bytes_read: 0,
        };
        if len > feed.index.offset {
            feed.read_to(len)?;
        }
        Ok(feed)
    }

    /// Reads the index from where it was read to `len`.
    fn read_to(&mut self, len: u64) -> Result<(), OpError> {
        let start = self.index.offset;
        let bytes = File::open(&self.path)
            .and_then(|mut file| read_range(&mut file, start, len))
            .map_err(|e| io_error(&self.path, "read", e))?;
        self.bytes_read += bytes.len() as u64;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole < bytes.len() && self.lock.is_some() {
            let cut = OpenOptions::new()
                .write(true)
                .open(&self.path)
                .and_then(|f| {
                    f.set_len(start + whole as u64)?;
                    f.sync_data()
                });
            match cut {
                Ok(()) => {}
                // Read-only: left as it is, and nothing is appended after it.
                Err(e) if is_read_only(&e) => self.appendable = false,
                Err(e) => return Err(io_error(&self.path, "write", e)),
            }
        }
        for line in bytes[..whole].split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            self.index.lines += 1;
            // A line that does not parse still holds its position.
            if let Ok(line) = serde_json::from_slice::<Line>(line) {
                self.index.note(line, self.index.lines, &mut self.reset);
            }
        }
        self.index.offset = start + whole as u64;
        Ok(())
    }

    /// Says that plan `plan_id`'s events so far are gone (it was deleted,
    /// or created afresh): its next events are new ones, whatever their
    /// revisions.
    pub fn reset(&mut self, plan_id: &str) -> Result<(), OpError> {
        if !self.index.plans.contains_key(plan_id) {
            return Ok(());
        }
        self.append(vec![reset_line(plan_id)])
    }

    /// Gives the events `new` (time, plan id, revision: found in their
    /// plans' logs, not in the index) the next positions, by time, plan id
    /// and revision (the order among them is the best the files tell).
    /// When the index cannot be written, the positions are noted here only.
    pub fn add(&mut self, mut new: Vec<(String, String, u64)>) -> Result<(), OpError> {
        new.sort();
        new.dedup();
        let lines: Vec<Line> = new
            .into_iter()
            .map(|(at, plan_id, seq)| Line {
                plan_id,
                seq: Some(seq),
                at: Some(at),
                reset: false,
            })
            .collect();
        if lines.is_empty() {
            return Ok(());
        }
        if self.appendable {
            match self.append_lines(&lines) {
                Ok(()) => {}
                Err(e) if is_read_only(&e) => self.appendable = false,
                Err(e) => return Err(io_error(&self.path, "write", e)),
            }
        }
        if !self.appendable {
            self.index.provisional = true;
        }
        for line in lines {
            self.index.lines += 1;
            self.index.note(line, self.index.lines, &mut HashSet::new());
        }
        Ok(())
    }

    /// Appends `lines`, durably, and notes them.
    fn append(&mut self, lines: Vec<Line>) -> Result<(), OpError> {
        self.append_lines(&lines)
            .map_err(|e| io_error(&self.path, "write", e))?;
        for line in lines {
            self.index.lines += 1;
            self.index.note(line, self.index.lines, &mut HashSet::new());
        }
        Ok(())
    }

    /// Appends `lines` to the file: a position is handed out only once its
    /// line is on disk.
    fn append_lines(&mut self, lines: &[Line]) -> io::Result<()> {
        let text = text(lines);
        let file = write_all(&self.path, &text)?;
        self.index.file = Some(file);
        self.index.offset += text.len() as u64;
        Ok(())
    }
}

/// A reset line for a state file started over outside the store: the
/// index's lock, taken before the state's (as the store does), held until
/// the line is written.
pub struct OutsideReset {
    _lock: Lock,
    path: PathBuf,
    plan_id: String,
}

impl OutsideReset {
    /// For the state file `name` in `dir`: the lock, when `dir` has a feed
    /// index (a directory store) and `name` is `ID.json`; else none.
    pub fn begin(dir: &Path, name: &OsStr) -> Result<Option<OutsideReset>, OpError> {
        let Some(plan_id) = name
            .to_str()
            .and_then(|name| name.strip_suffix(STATE_EXTENSION))
            .filter(|id| validate_plan_id(id).is_ok())
        else {
            return Ok(None);
        };
        let path = dir.join(FEED);
        if !path.exists() {
            return Ok(None);
        }
        Ok(Some(OutsideReset {
            _lock: Lock::acquire(&dir.join(FEED_LOCK), WAIT)?,
            path,
            plan_id: plan_id.to_owned(),
        }))
    }

    /// Appends the reset line (after cutting a torn last line).
    pub fn reset(&mut self) -> Result<(), OpError> {
        let cut = || -> io::Result<()> {
            let mut file = OpenOptions::new().read(true).write(true).open(&self.path)?;
            let len = file.metadata()?.len();
            let whole = last_newline(&mut file, len)?.map_or(0, |at| at + 1);
            if whole < len {
                file.set_len(whole)?;
                file.sync_data()?;
            }
            Ok(())
        };
        cut()
            .and_then(|()| write_all(&self.path, &text(&[reset_line(&self.plan_id)])))
            .map(|_| ())
            .map_err(|e| io_error(&self.path, "write", e))
    }
}

fn reset_line(plan_id: &str) -> Line {
    Line {
        plan_id: plan_id.to_owned(),
        seq: None,
        at: None,
        reset: true,
    }
}

fn text(lines: &[Line]) -> Vec<u8> {
    let mut text = Vec::new();
    for line in lines {
        serde_json::to_writer(&mut text, line).expect("a feed line serialises");
        text.push(b'\n');
    }
    text
}

/// Appends `text` to the file at `path` and syncs it (and, when the file
/// is new, the directory that names it): the file appended to.
fn write_all(path: &Path, text: &[u8]) -> io::Result<FileId> {
    let new = !path.exists();
    let mut file: File = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(text)?;
    file.sync_data()?;
    if let Some(dir) = path.parent().filter(|_| new) {
        File::open(dir)?.sync_all()?;
    }
    Ok(FileId::of(&file.metadata()?))
}
