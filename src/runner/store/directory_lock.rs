//! The lock on a state's directory: what keeps writers apart even when the
//! lock file is deleted from under one of them.
//!
//! An exclusive `flock` on the directory excludes other processes; within a
//! process, a table of the directories held (by which thread, how many
//! times) excludes other threads and lets the holding thread take it again
//! (a directory store locks its feed index while it holds a plan's lock, in
//! the same directory). So writers of every state in one directory take
//! turns, as a SQLite store's writers do; a change holds it for a few
//! milliseconds.
//!
//! A directory cannot be deleted while the state is in it. One renamed
//! away (and another put in its place) is noticed after locking, as a
//! replaced lock file is, and the lock taken again.

use std::path::Path;

use crate::runner::error::OpError;

use super::lock_wait::Patience;

/// The lock on a directory, held (by this thread, possibly more than once)
/// until dropped.
#[derive(Debug)]
pub(super) struct DirectoryLock {
    /// The directory held; none when it could not be opened to lock it (no
    /// read permission) or the system has no directory locks.
    held: Option<imp::DirectoryId>,
}

impl DirectoryLock {
    /// Locks the directory of the lock file `lock_path`, waiting as
    /// `patience` allows: `STATE_LOCKED` after that.
    pub fn acquire(
        lock_path: &Path,
        patience: &mut Patience<'_>,
    ) -> Result<DirectoryLock, OpError> {
        let directory = match lock_path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let held = imp::acquire(directory, patience)?;
        Ok(DirectoryLock { held })
    }

    /// Whether the directory is locked (so no other writer is in).
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        if let Some(id) = self.held {
            imp::release(id);
        }
    }
}

#[cfg(unix)]
mod imp {
    use std::collections::BTreeMap;
    use std::fs::{self, File};
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;
    use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
    use std::thread::{self, ThreadId};

    use crate::runner::error::OpError;

    use super::super::lock_wait::{lock_error, lock_waiting, Patience};

    /// A directory's identity: its device and inode.
    pub type DirectoryId = (u64, u64);

    /// A directory this process holds (or is taking) the lock of.
    struct Holder {
        thread: ThreadId,
        /// How many [`super::DirectoryLock`]s the thread holds on it.
        count: usize,
        /// The locked directory; none while its lock is being taken.
        file: Option<File>,
    }

    /// The directories this process holds, by identity.
    static HOLDERS: Mutex<BTreeMap<DirectoryId, Holder>> = Mutex::new(BTreeMap::new());
    /// Signalled when a directory is let go of.
    static RELEASED: Condvar = Condvar::new();

    fn holders() -> MutexGuard<'static, BTreeMap<DirectoryId, Holder>> {
        HOLDERS.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks `directory`: its identity, or none if it cannot be opened to
    /// be locked (a directory without read permission).
    pub fn acquire(
        directory: &Path,
        patience: &mut Patience<'_>,
    ) -> Result<Option<DirectoryId>, OpError> {
        loop {
            let file = match File::open(directory) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Ok(None),
                Err(e) => return Err(lock_error(directory, e)),
            };
            let id = file
                .metadata()
                .map(|m| identity(&m))
                .map_err(|e| lock_error(directory, e))?;
            if enter_thread(id, patience)? {
                return Ok(Some(id));
            }
            // This thread has the directory within the process; now against
            // other processes.
            let locked = lock_waiting(file, patience);
            let current = fs::metadata(directory).is_ok_and(|m| identity(&m) == id);
            match locked {
                Ok(Some(file)) if current => {
                    if let Some(holder) = holders().get_mut(&id) {
                        holder.file = Some(file);
                    }
                    return Ok(Some(id));
                }
                // Renamed away while we waited: lock the one there now.
                Ok(Some(_)) => release(id),
                Ok(None) => {
                    release(id);
                    return Err(patience.timed_out());
                }
                Err(e) => {
                    release(id);
                    return Err(lock_error(directory, e));
                }
            }
        }
    }

    fn identity(metadata: &fs::Metadata) -> DirectoryId {
        (metadata.dev(), metadata.ino())
    }

    /// Takes `id` within this process: true if this thread held it already
    /// (it now holds it once more), false if it is this thread's to lock
    /// against other processes. Waits while another thread holds it.
    fn enter_thread(id: DirectoryId, patience: &mut Patience<'_>) -> Result<bool, OpError> {
        let me = thread::current().id();
        let mut holders = holders();
        loop {
            match holders.get_mut(&id) {
                Some(holder) if holder.thread == me => {
                    holder.count += 1;
                    return Ok(true);
                }
                Some(_) => {
                    let Some(wait) = patience.next_wait() else {
                        return Err(patience.timed_out());
                    };
                    holders = RELEASED
                        .wait_timeout(holders, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                None => {
                    let holder = Holder {
                        thread: me,
                        count: 1,
                        file: None,
                    };
                    holders.insert(id, holder);
                    return Ok(false);
                }
            }
        }
    }

    /// Lets go of `id` once; the last time unlocks it (the file closes).
    pub fn release(id: DirectoryId) {
        let mut holders = holders();
        if let Some(holder) = holders.get_mut(&id) {
            holder.count -= 1;
            if holder.count == 0 {
                holders.remove(&id);
                RELEASED.notify_all();
            }
        }
    }
}

/// Elsewhere (Windows) a directory cannot be locked: the lock file alone
/// keeps writers apart, as before, and [`super::super::lock::Lock::verify`]
/// checks it is still the one locked.
#[cfg(not(unix))]
mod imp {
    use std::path::Path;

    use crate::runner::error::OpError;

    use super::super::lock_wait::Patience;

    /// Never made.
    pub type DirectoryId = ();

    /// No lock.
    pub fn acquire(_: &Path, _: &mut Patience<'_>) -> Result<Option<DirectoryId>, OpError> {
        Ok(None)
    }

    /// Nothing to let go of.
    pub fn release(_: DirectoryId) {}
}
