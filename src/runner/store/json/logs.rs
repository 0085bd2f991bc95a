//! What a directory store's handle knows of each plan's event log: how far
//! it has read it, and where each committed record is in it, so that a
//! change reads only what was written since, and a feed read only the
//! records it hands out.

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

use crate::runner::events::LogRecord;

use super::super::log::{read_range, record_revision, state_revision};

/// A committed record of the log: its time, and where its line is.
#[derive(Debug)]
pub(super) struct Entry {
    pub at: String,
    offset: u64,
    len: u64,
}

/// One plan's log as read so far.
#[derive(Debug, Default)]
pub(super) struct PlanLog {
    /// The log file read (none before the first read).
    file: Option<FileId>,
    /// Bytes read: every whole, committed line before this.
    offset: u64,
    /// The committed records read, by revision.
    pub records: BTreeMap<u64, Entry>,
    /// The revisions read since the feed last looked for new events.
    pub pending: Vec<u64>,
}

impl PlanLog {
    /// Forgets what was read: the next [`PlanLog::refresh`] reads the log
    /// from the top.
    pub fn restart(&mut self) {
        *self = PlanLog::default();
    }

    /// Reads the records committed to the log at `log` (of the state at
    /// `state`) since the last call: from the top when the path names
    /// another file than before (`planc run init --force` puts a new one in
    /// place) or the file is shorter than what was read. Records written
    /// ahead of the state are left for a later call (see `LogReader`).
    /// The bytes read.
    pub fn refresh(&mut self, log: &Path, state: &Path) -> io::Result<u64> {
        let mut file = match File::open(log) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.restart();
                return Ok(0);
            }
            Err(e) => return Err(e),
        };
        let metadata = file.metadata()?;
        let id = FileId::of(&metadata);
        let len = metadata.len();
        if self.file != Some(id) || len < self.offset {
            self.restart();
            self.file = Some(id);
        }
        if len == self.offset {
            return Ok(0);
        }
        // The state first: a record whose revision it has reached stays in
        // the log whatever happens next (recovery only cuts newer ones).
        let committed = state_revision(state);
        let bytes = read_range(&mut file, self.offset, len)?;
        let mut rest = &bytes[..];
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let line = &rest[..end];
            let ahead = |revision| committed.is_some_and(|committed| revision > committed);
            if record_revision(line).is_some_and(ahead) {
                break;
            }
            // Lines that are not records are left out.
            if let Ok(record) = serde_json::from_slice::<LogRecord>(line) {
                let entry = Entry {
                    at: record.at,
                    offset: self.offset,
                    len: end as u64,
                };
                self.records.insert(record.revision, entry);
                self.pending.push(record.revision);
            }
            self.offset += end as u64 + 1;
            rest = &rest[end + 1..];
        }
        Ok(bytes.len() as u64)
    }

    /// Record `revision` of the log at `log`, read again from where it was
    /// found, with the bytes read; none when the log is not the file read
    /// before or the line is no longer that record (the log was started
    /// over behind the feed's back).
    pub fn read(&self, log: &Path, revision: u64) -> io::Result<(Option<LogRecord>, u64)> {
        let Some(entry) = self.records.get(&revision) else {
            return Ok((None, 0));
        };
        let mut file = match File::open(log) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((None, 0)),
            Err(e) => return Err(e),
        };
        if self.file != Some(FileId::of(&file.metadata()?)) {
            return Ok((None, 0));
        }
        let bytes = match read_range(&mut file, entry.offset, entry.offset + entry.len) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok((None, 0)),
            Err(e) => return Err(e),
        };
        let record = serde_json::from_slice::<LogRecord>(&bytes)
            .ok()
            .filter(|r| r.revision == revision && r.at == entry.at);
        Ok((record, entry.len))
    }
}

/// What tells one file from another that took its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    #[cfg(unix)]
    pub fn of(metadata: &Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            device: metadata.dev(),
            inode: metadata.ino(),
        }
    }

    /// Elsewhere, a shorter file is the only sign.
    #[cfg(not(unix))]
    pub fn of(_: &Metadata) -> FileId {
        FileId {
            device: 0,
            inode: 0,
        }
    }
}
