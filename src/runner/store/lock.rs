//! The writers' lock: an exclusive OS advisory lock (`flock`) on the
//! state's directory, and on `STATE.lock` in it, taken with a time limit.
//!
//! A lock file can be deleted from under the writer that holds it; a
//! newcomer would then lock a fresh file at the same path and come in
//! beside it, and one of their changes would be lost. A directory cannot
//! be deleted while the state is in it, so its lock is the one that keeps
//! writers apart ([`DirectoryLock`]). The lock file is locked as well, for
//! planc versions that lock only it, on the file the path names *now*.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::runner::error::{ErrorCode, OpError};

use super::directory_lock::DirectoryLock;
pub(super) use super::lock_wait::LockWait;
use super::lock_wait::{lock_error, lock_waiting, Patience};

/// How long to wait for the lock before giving up, by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// The lock, held until dropped (the lock file's first, then the
/// directory's).
#[derive(Debug)]
pub(super) struct Lock {
    file: File,
    path: PathBuf,
    directory: DirectoryLock,
}

impl Lock {
    /// Takes the exclusive lock on the directory of `path` and on `path`
    /// (creating the file), waiting up to `wait.timeout` for other writers
    /// to let go: `STATE_LOCKED` after that.
    pub fn acquire(path: &Path, wait: LockWait) -> Result<Lock, OpError> {
        let mut patience = Patience::new(path, wait);
        let directory = DirectoryLock::acquire(path, &mut patience)?;
        loop {
            let file = open(path).map_err(|e| lock_error(path, e))?;
            let Some(file) = lock_waiting(file, &mut patience).map_err(|e| lock_error(path, e))?
            else {
                return Err(patience.timed_out());
            };
            if is_current(&file, path).map_err(|e| lock_error(path, e))? {
                return Ok(Lock {
                    file,
                    path: path.to_path_buf(),
                    directory,
                });
            }
            // The file was removed or replaced while we waited: lock the one
            // the path names now.
        }
    }

    /// [`Lock::acquire`] for a reader that can do without the lock: none
    /// when the lock file does not exist and cannot be made (a read-only
    /// directory or file system).
    pub fn acquire_if_possible(path: &Path, wait: LockWait) -> Result<Option<Lock>, OpError> {
        match open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound || is_read_only(&e) => Ok(None),
            _ => Lock::acquire(path, wait).map(Some),
        }
    }

    /// `STATE_LOCKED` if another writer may have come in: never while the
    /// directory's lock is held (deleting the lock file does not take that
    /// away); without it, when the lock path no longer names the locked
    /// file (it was removed or replaced while held).
    pub fn verify(&self) -> Result<(), OpError> {
        if self.directory.is_held() {
            return Ok(());
        }
        match is_current(&self.file, &self.path) {
            Ok(true) => Ok(()),
            Ok(false) => Err(OpError::new(
                ErrorCode::StateLocked,
                format!(
                    "the lock file {} was removed or replaced while this change held it, \
                     so another writer may have come in; nothing was written, try again",
                    self.path.display()
                ),
            )
            .with(json!({"path": self.path.display().to_string()}))),
            Err(e) => Err(lock_error(&self.path, e)),
        }
    }
}

/// Whether `path` names `file`.
#[cfg(unix)]
fn is_current(file: &File, path: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = file.metadata()?;
    match fs::metadata(path) {
        Ok(now) => Ok(held.dev() == now.dev() && held.ino() == now.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Elsewhere an open file cannot be removed, so the path names it.
#[cfg(not(unix))]
fn is_current(_file: &File, path: &Path) -> io::Result<bool> {
    Ok(fs::metadata(path).is_ok())
}

/// Opens (or creates) the lock file; read-only when it may not be written
/// (`flock` needs no write permission).
fn open(path: &Path) -> io::Result<File> {
    match OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
    {
        Err(e) if is_read_only(&e) => File::open(path),
        opened => opened,
    }
}

/// Whether `error` says a file may not be written (its mode or owner, its
/// directory's, or a read-only file system).
pub(super) fn is_read_only(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json.lock");
        let wait = LockWait {
            timeout: Duration::from_millis(50),
            notice: None,
        };
        let held = Lock::acquire(&path, wait).unwrap();
        let error = Lock::acquire(&path, wait).unwrap_err();
        assert_eq!(error.code, ErrorCode::StateLocked);
        assert_eq!(error.details["timeout_seconds"], 0.05);
        drop(held);
        Lock::acquire(&path, wait).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_file_removed_while_held_lets_no_one_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json.lock");
        let wait = LockWait {
            timeout: Duration::from_millis(50),
            notice: None,
        };
        let held = Lock::acquire(&path, wait).unwrap();
        fs::remove_file(&path).unwrap();
        // A newcomer (another thread, as another process would) finds the
        // directory locked, though it could lock a fresh lock file...
        let newcomer = {
            let path = path.clone();
            std::thread::spawn(move || Lock::acquire(&path, wait).map(drop))
        };
        let error = newcomer.join().unwrap().unwrap_err();
        assert_eq!(error.code, ErrorCode::StateLocked);
        assert!(!path.exists(), "the newcomer made no lock file");
        // ...and the holder still writes: no one else can be in.
        held.verify().unwrap();
        drop(held);
        std::thread::spawn(move || Lock::acquire(&path, wait).map(drop))
            .join()
            .unwrap()
            .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_holding_thread_takes_its_directory_again() {
        let dir = tempfile::tempdir().unwrap();
        let wait = LockWait {
            timeout: Duration::ZERO,
            notice: None,
        };
        // A plan's lock, then the feed index's beside it, on one thread.
        let plan = Lock::acquire(&dir.path().join("p.json.lock"), wait).unwrap();
        let feed = Lock::acquire(&dir.path().join(".feed.lock"), wait).unwrap();
        drop(plan);
        feed.verify().unwrap();
        let other = dir.path().join("q.json.lock");
        let elsewhere = std::thread::spawn(move || Lock::acquire(&other, wait).map(drop));
        assert_eq!(
            elsewhere.join().unwrap().unwrap_err().code,
            ErrorCode::StateLocked
        );
        drop(feed);
        let other = dir.path().join("q.json.lock");
        std::thread::spawn(move || Lock::acquire(&other, wait).map(drop))
            .join()
            .unwrap()
            .unwrap();
    }
}
