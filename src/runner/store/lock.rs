//! The writers' lock: an OS advisory lock (`flock`) on `STATE.lock`, taken
//! with a time limit, on the file that the lock path names *now*.
//!
//! A lock file removed (or replaced) while writers wait would let a newcomer
//! lock a fresh file while an old writer still holds the removed one. So
//! after locking, a writer checks that the path still names the file it
//! locked and starts over if not; and just before its first write it checks
//! again, giving up (`STATE_LOCKED`, nothing written) if its lock was lost.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::runner::error::{ErrorCode, OpError};

/// How long to wait for the lock before giving up, by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// After how long a waiting writer says so (see [`LockWait::notice`]).
const NOTICE_AFTER: Duration = Duration::from_secs(1);

/// How to wait for the lock.
#[derive(Clone, Copy, Debug)]
pub(super) struct LockWait {
    /// Give up after this long (zero: try once).
    pub timeout: Duration,
    /// Called once, with the lock file, when the wait has lasted a second.
    pub notice: Option<fn(&Path)>,
}

/// The lock, held until dropped.
#[derive(Debug)]
pub(super) struct Lock {
    file: File,
    path: PathBuf,
}

impl Lock {
    /// Takes the exclusive lock on `path` (creating the file), waiting up to
    /// `wait.timeout` for another writer to let go: `STATE_LOCKED` after that.
    pub fn acquire(path: &Path, wait: LockWait) -> Result<Lock, OpError> {
        let started = Instant::now();
        let mut noticed = false;
        loop {
            let file = open(path).map_err(|e| lock_error(path, e))?;
            let file = match fs4::FileExt::try_lock(&file) {
                Ok(()) => file,
                Err(fs4::TryLockError::WouldBlock) => {
                    let waited = started.elapsed();
                    if waited >= wait.timeout {
                        return Err(timed_out(path, wait.timeout));
                    }
                    let deadline = started + wait.timeout;
                    match wait_for(file, deadline, started, &mut noticed, path, wait) {
                        Some(file) => file.map_err(|e| lock_error(path, e))?,
                        None => return Err(timed_out(path, wait.timeout)),
                    }
                }
                Err(fs4::TryLockError::Error(e)) => return Err(lock_error(path, e)),
            };
            let lock = Lock {
                file,
                path: path.to_path_buf(),
            };
            if lock.is_current().map_err(|e| lock_error(path, e))? {
                return Ok(lock);
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

    /// `STATE_LOCKED` unless the lock path still names the locked file (it
    /// was removed or replaced while held, so another writer may be in).
    pub fn verify(&self) -> Result<(), OpError> {
        match self.is_current() {
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

    /// Whether the lock path names the locked file.
    #[cfg(unix)]
    fn is_current(&self) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let held = self.file.metadata()?;
        match fs::metadata(&self.path) {
            Ok(now) => Ok(held.dev() == now.dev() && held.ino() == now.ino()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Elsewhere an open file cannot be removed, so the path names it.
    #[cfg(not(unix))]
    fn is_current(&self) -> io::Result<bool> {
        Ok(fs::metadata(&self.path).is_ok())
    }
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

/// Blocks on the lock of `file` until `deadline`: the locked file, or none
/// on time-out. The blocking call waits in the kernel (queued with the
/// other waiters, so none starves as a poller could) on a thread of its own;
/// one that gets the lock after the time-out lets go of it at once.
fn wait_for(
    file: File,
    deadline: Instant,
    started: Instant,
    noticed: &mut bool,
    path: &Path,
    wait: LockWait,
) -> Option<io::Result<File>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let locked = fs4::FileExt::lock(&file).map(|()| file);
        // A receiver gone: the file drops here, and the lock with it.
        let _ = sender.send(locked);
    });
    loop {
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        let notice_at = started + NOTICE_AFTER;
        let until = if !*noticed && notice_at < deadline {
            notice_at.max(now)
        } else {
            deadline
        };
        match receiver.recv_timeout(until - now) {
            Ok(locked) => return Some(locked),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if !*noticed && Instant::now() >= notice_at {
                    *noticed = true;
                    if let Some(notice) = wait.notice {
                        notice(path);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Some(Err(io::Error::other("the lock thread ended")))
            }
        }
    }
}

fn lock_error(path: &Path, error: io::Error) -> OpError {
    OpError::new(
        ErrorCode::StateIo,
        format!("cannot lock {}: {error}", path.display()),
    )
    .with(json!({"path": path.display().to_string(), "access": "lock"}))
}

fn timed_out(path: &Path, timeout: Duration) -> OpError {
    OpError::new(
        ErrorCode::StateLocked,
        format!(
            "another writer holds the lock {} (gave up after {} s; a writer may be stopped \
             or hung: --lock-timeout SECONDS or PLANC_LOCK_TIMEOUT waits longer)",
            path.display(),
            seconds(timeout)
        ),
    )
    .with(json!({"path": path.display().to_string(), "timeout_seconds": timeout.as_secs_f64()}))
}

/// `5`, `0.5`, `0.25`: a duration in seconds, as short as it goes.
fn seconds(duration: Duration) -> String {
    let text = format!("{:.3}", duration.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_short() {
        assert_eq!(seconds(Duration::from_secs(5)), "5");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5");
        assert_eq!(seconds(Duration::from_millis(10)), "0.01");
        assert_eq!(seconds(Duration::ZERO), "0");
    }

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
    fn a_lock_file_removed_while_held_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json.lock");
        let wait = LockWait {
            timeout: Duration::ZERO,
            notice: None,
        };
        let held = Lock::acquire(&path, wait).unwrap();
        held.verify().unwrap();
        fs::remove_file(&path).unwrap();
        // A newcomer locks a fresh file...
        let newcomer = Lock::acquire(&path, wait).unwrap();
        newcomer.verify().unwrap();
        // ...and the old holder finds out before writing anything.
        assert_eq!(held.verify().unwrap_err().code, ErrorCode::StateLocked);
    }
}
