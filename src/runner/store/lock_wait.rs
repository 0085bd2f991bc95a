//! Waiting for a lock with a time limit: how long a writer may still wait
//! ([`Patience`]), the notice it gives after a second, taking a lock
//! (a lock file's or a directory's) while it lasts, and the errors when it
//! cannot. Below both the lock file ([`super::lock`]) and the directory's
//! lock ([`super::directory_lock`]).

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::runner::error::{ErrorCode, OpError};

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

/// How long a writer may still wait for the lock of `path`, and the notice
/// it gives once it has waited a second.
pub(super) struct Patience<'a> {
    path: &'a Path,
    wait: LockWait,
    started: Instant,
    noticed: bool,
}

impl<'a> Patience<'a> {
    /// Starts waiting now.
    pub fn new(path: &'a Path, wait: LockWait) -> Patience<'a> {
        Patience {
            path,
            wait,
            started: Instant::now(),
            noticed: false,
        }
    }

    /// How long to wait before looking again (until the notice is due, or
    /// the deadline), giving the notice when it is due; none once the
    /// deadline has passed.
    pub fn next_wait(&mut self) -> Option<Duration> {
        let now = Instant::now();
        let deadline = self.started + self.wait.timeout;
        if now >= deadline {
            return None;
        }
        let notice_at = self.started + NOTICE_AFTER;
        if !self.noticed && now >= notice_at {
            self.noticed = true;
            if let Some(notice) = self.wait.notice {
                notice(self.path);
            }
        }
        let until = if !self.noticed && notice_at < deadline {
            notice_at
        } else {
            deadline
        };
        Some(until - now)
    }

    /// `STATE_LOCKED`: the wait is over.
    pub fn timed_out(&self) -> OpError {
        timed_out(self.path, self.wait.timeout)
    }
}

/// Takes the exclusive lock on `file` (a lock file or a directory), waiting
/// as `patience` allows: none on time-out.
pub(super) fn lock_waiting(file: File, patience: &mut Patience<'_>) -> io::Result<Option<File>> {
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => Ok(Some(file)),
        Err(fs4::TryLockError::WouldBlock) if patience.next_wait().is_none() => Ok(None),
        Err(fs4::TryLockError::WouldBlock) => wait_for(file, patience).transpose(),
        Err(fs4::TryLockError::Error(e)) => Err(e),
    }
}

/// Blocks on the lock of `file` while `patience` lasts: the locked file, or
/// none on time-out. The blocking call waits in the kernel (queued with the
/// other waiters, so none starves as a poller could) on a thread of its own;
/// one that gets the lock after the time-out lets go of it at once.
fn wait_for(file: File, patience: &mut Patience<'_>) -> Option<io::Result<File>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let locked = fs4::FileExt::lock(&file).map(|()| file);
        // A receiver gone: the file drops here, and the lock with it.
        let _ = sender.send(locked);
    });
    loop {
        match receiver.recv_timeout(patience.next_wait()?) {
            Ok(locked) => return Some(locked),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Some(Err(io::Error::other("the lock thread ended")))
            }
        }
    }
}

/// `STATE_IO` (`access: lock`): `path` cannot be locked.
pub(super) fn lock_error(path: &Path, error: io::Error) -> OpError {
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
}
