//! The event log file: one JSON line per revision, written ahead of the
//! state, repaired under the lock, and read back only as far as the state
//! has committed.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::document::PlanDocument;
use crate::runner::events::{Event, EventKind, LogRecord, PlanHeader};

use super::fault;
use super::files::Files;

/// How much of the log is read at a time when looking for a line's start.
const CHUNK: usize = 8192;

/// The event log of one state.
#[derive(Clone, Debug)]
pub(super) struct EventLog {
    path: PathBuf,
    files: Files,
}

impl EventLog {
    /// The log of the state whose files are `files`.
    pub fn new(files: &Files) -> EventLog {
        EventLog {
            path: files.log.clone(),
            files: files.clone(),
        }
    }

    /// Brings the log in line with `state` after a writer died mid-change
    /// (the caller holds the lock). Records are written ahead of the state,
    /// so the log may end with a torn line or with a record newer than the
    /// state (its state never got renamed in): both are cut. And a state at
    /// revision 1 (just made by `planc run init`, which renames the new state
    /// in first) must have a log of exactly its init record: any other log
    /// is an older state's, and is started over.
    ///
    /// Reads only the end of the log, one line at a time: O(last line).
    pub fn recover(&self, state: &PlanDocument) -> io::Result<()> {
        let revision = state.state.revision;
        let mut file = match OpenOptions::new().read(true).write(true).open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if revision == 1 {
                    self.start(&init_record(state))?;
                }
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        // Everything after the last newline is a torn line.
        let mut keep = last_newline(&mut file, len)?.map_or(0, |at| at + 1);
        let mut last = None;
        while keep > 0 {
            let start = last_newline(&mut file, keep - 1)?.map_or(0, |at| at + 1);
            let line = read_range(&mut file, start, keep - 1)?;
            match record_revision(&line) {
                Some(r) if r <= revision => {
                    last = Some((start, line));
                    break;
                }
                // Newer than the state, or not a record: never committed.
                _ => keep = start,
            }
        }
        if keep < len {
            file.set_len(keep)?;
            file.sync_data()?;
        }
        if revision == 1 {
            let expected = init_record(state);
            let matches = last.is_some_and(|(start, line)| {
                start == 0
                    && serde_json::from_slice::<LogRecord>(&line).ok() == Some(expected.clone())
            });
            if !matches {
                drop(file);
                self.start(&expected)?;
            }
        }
        Ok(())
    }

    /// Appends `record` as one line and syncs it; the log's length before, to
    /// [`EventLog::truncate`] back to if the change cannot be committed. A
    /// failed append is cut off again here.
    pub fn append(&self, record: &LogRecord) -> io::Result<u64> {
        let line = line(record)?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let before = file.metadata()?.len();
        let written = (|| {
            if fault::armed("log-half") {
                file.write_all(&line[..line.len() / 2])?;
                fault::point("log-half")?;
                file.write_all(&line[line.len() / 2..])?;
            } else {
                file.write_all(&line)?;
            }
            file.sync_data()
        })();
        if let Err(e) = written {
            // Best effort: what is left is a torn line, which recovery cuts.
            let _ = file.set_len(before).and_then(|()| file.sync_data());
            return Err(e);
        }
        Ok(before)
    }

    /// Cuts the log back to `len` bytes (undoing an append).
    pub fn truncate(&self, len: u64) -> io::Result<()> {
        let file = OpenOptions::new().write(true).open(&self.path)?;
        file.set_len(len)?;
        file.sync_data()
    }

    /// Starts the log over with `record` alone: a new file renamed over the
    /// old one, so that a reader of the old one can tell (see [`LogReader`]).
    pub fn start(&self, record: &LogRecord) -> io::Result<()> {
        let temp = self.files.write_temp(&line(record)?, None, None)?;
        self.files.persist_as(temp, &self.path)
    }
}

/// The record `planc run init` logs for a state it made: a pure function of
/// the new state, so recovery can write it again.
pub(super) fn init_record(doc: &PlanDocument) -> LogRecord {
    let mut created = Event::plan(
        EventKind::Created,
        format!(
            "Plan `{}` created with {} task(s)",
            doc.meta.id,
            doc.tasks.len()
        ),
    );
    created.plan = Some(PlanHeader {
        id: doc.meta.id.clone(),
        title: doc.meta.title.clone(),
        goal: doc.meta.goal.clone(),
        language: doc.meta.language.clone(),
        status: doc.state.status,
        done: doc.tasks.iter().filter(|t| t.status.is_done()).count(),
        total: doc.tasks.len(),
    });
    LogRecord {
        revision: doc.state.revision,
        at: doc.meta.created_at.clone().unwrap_or_default(),
        op: "init".to_owned(),
        plan_status: doc.state.status,
        events: vec![created],
    }
}

fn line(record: &LogRecord) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    Ok(line)
}

/// The revision of a log line, if it is a whole JSON record.
pub(super) fn record_revision(line: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Revision {
        revision: u64,
    }
    serde_json::from_slice::<Revision>(line)
        .ok()
        .map(|r| r.revision)
}

/// The offset of the last `\n` before `end`.
pub(super) fn last_newline(file: &mut File, end: u64) -> io::Result<Option<u64>> {
    let mut buffer = vec![0; CHUNK];
    let mut end = end;
    while end > 0 {
        let start = end.saturating_sub(CHUNK as u64);
        let chunk = &mut buffer[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(at) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + at as u64));
        }
        end = start;
    }
    Ok(None)
}

pub(super) fn read_range(file: &mut File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; (end - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Follows a state's event log, handing out only **committed** records:
/// lines whose revision the state file has reached. A record written ahead
/// by a writer that has not renamed its state yet (or never will: it died,
/// and the next writer cuts the record) is held back until the state
/// catches up, so a reader never sees a change that did not happen.
#[derive(Debug)]
pub struct LogReader {
    file: File,
    path: PathBuf,
    state: PathBuf,
    offset: u64,
}

impl LogReader {
    /// Opens the log at `path` of the state at `state`.
    pub(super) fn open(path: PathBuf, state: PathBuf) -> io::Result<LogReader> {
        Ok(LogReader {
            file: File::open(&path)?,
            path,
            state,
            offset: 0,
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The committed lines written since the last call, in order (without
    /// their newlines). Starts over from the top of a log started afresh
    /// (`planc run init --force` puts a new file in its place).
    pub fn read_committed(&mut self) -> io::Result<Vec<String>> {
        if self.replaced() {
            self.file = File::open(&self.path)?;
            self.offset = 0;
        }
        let len = self.file.metadata()?.len();
        if len < self.offset {
            self.offset = 0;
        }
        if len == self.offset {
            return Ok(Vec::new());
        }
        // The state first: a record whose revision it has reached stays in
        // the log whatever happens next (recovery only cuts newer ones).
        let committed = state_revision(&self.state);
        let bytes = read_range(&mut self.file, self.offset, len)?;
        let mut lines = Vec::new();
        let mut rest = &bytes[..];
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let line = &rest[..end];
            if let (Some(revision), Some(committed)) = (record_revision(line), committed) {
                if revision > committed {
                    break;
                }
            }
            if !line.is_empty() {
                lines.push(String::from_utf8_lossy(line).into_owned());
            }
            self.offset += end as u64 + 1;
            rest = &rest[end + 1..];
        }
        Ok(lines)
    }
}

impl LogReader {
    /// Whether the log path names another file than the one being read.
    #[cfg(unix)]
    fn replaced(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), std::fs::metadata(&self.path)) {
            (Ok(open), Ok(now)) => open.dev() != now.dev() || open.ino() != now.ino(),
            _ => false,
        }
    }

    /// Elsewhere, a shorter log is the only sign.
    #[cfg(not(unix))]
    fn replaced(&self) -> bool {
        false
    }
}

/// The revision of the state file, if it can be read.
pub(super) fn state_revision(path: &Path) -> Option<u64> {
    #[derive(Deserialize)]
    struct Document {
        state: State,
    }
    #[derive(Deserialize)]
    struct State {
        revision: u64,
    }
    let bytes = crate::read::read_file(path, super::STATE_BOUNDS).ok()?;
    serde_json::from_slice::<Document>(&bytes)
        .ok()
        .map(|d| d.state.revision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::tests::plan;

    fn record(revision: u64) -> String {
        format!(
            r#"{{"revision":{revision},"at":"t","op":"addTask","plan_status":"running","events":[]}}"#
        )
    }

    fn state(revision: u64) -> PlanDocument {
        let mut doc = plan(&[&[]]);
        doc.state.revision = revision;
        doc.meta.created_at = Some("2026-01-01T00:00:00Z".to_owned());
        doc
    }

    #[test]
    fn recovery_cuts_what_was_never_committed() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files::resolve(&dir.path().join("s.json")).unwrap();
        let path = files.log.clone();
        let log = EventLog::new(&files);
        let committed = format!("{}\n{}\n{}\n", record(1), record(2), record(3));
        let cases = [
            // A record ahead of the state, and a torn line after it.
            format!("{committed}{}\n{{\"revision\":5,\"at", record(4)),
            // A torn line alone.
            format!("{committed}{{\"rev"),
            // A last line that is no record.
            format!("{committed}\0\0\0\n"),
            // Nothing to do.
            committed.clone(),
        ];
        for text in cases {
            std::fs::write(&path, &text).unwrap();
            log.recover(&state(3)).unwrap();
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                committed,
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_new_state_gets_its_own_init_record() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files::resolve(&dir.path().join("s.json")).unwrap();
        let path = files.log.clone();
        let log = EventLog::new(&files);
        let doc = state(1);
        let init = String::from_utf8(line(&init_record(&doc)).unwrap()).unwrap();
        // No log, an older state's log, an older state's first record alone.
        for text in [
            None,
            Some(format!("{}\n{}\n", record(1), record(2))),
            Some(format!("{}\n", record(1))),
        ] {
            match &text {
                Some(text) => std::fs::write(&path, text).unwrap(),
                None => {
                    let _ = std::fs::remove_file(&path);
                }
            }
            log.recover(&doc).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), init, "{text:?}");
        }
    }

    #[test]
    fn a_reader_waits_for_the_state_to_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json.events.jsonl");
        let state_path = dir.path().join("s.json");
        let write_state =
            |revision| std::fs::write(&state_path, state(revision).to_json()).unwrap();
        write_state(1);
        std::fs::write(&path, format!("{}\n{}\n{{\"revi", record(1), record(2))).unwrap();
        let mut reader = LogReader::open(path.clone(), state_path.clone()).unwrap();
        assert_eq!(reader.read_committed().unwrap(), [record(1)]);
        assert!(reader.read_committed().unwrap().is_empty());
        // Record 2 is cut (its writer died) and written again by the next one.
        std::fs::write(
            &path,
            format!("{}\n{}\n", record(1), record(2).replace("\"t\"", "\"u\"")),
        )
        .unwrap();
        write_state(2);
        assert_eq!(
            reader.read_committed().unwrap(),
            [record(2).replace("\"t\"", "\"u\"")]
        );
        // A log started afresh (`init --force`) is read from the top, even
        // when it has grown past where the reader was in the old one.
        let fresh = record(1).replace("\"t\"", "\"v\"");
        let next = record(2).replace("\"t\"", "\"w\"");
        let files = Files::resolve(&state_path).unwrap();
        let log = EventLog::new(&files);
        log.start(&serde_json::from_str(&fresh).unwrap()).unwrap();
        log.append(&serde_json::from_str(&next).unwrap()).unwrap();
        std::fs::write(&path, format!("{fresh}\n{next}\n{}\n", record(3))).unwrap();
        write_state(2);
        assert_eq!(reader.read_committed().unwrap(), [fresh, next]);
    }
}
