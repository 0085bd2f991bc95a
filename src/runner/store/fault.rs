//! Fault injection for the commit protocol's tests, in debug builds only.
//!
//! `PLANC_FAULT=ACTION@POINT` makes a debug build of planc misbehave at one
//! named step of a change, so that tests can kill a writer exactly between
//! two steps instead of hoping a random SIGKILL lands there:
//!
//! - `crash@POINT`: print `planc: fault injected: crash at POINT` on standard
//!   error, then SIGKILL itself (abort where there are no signals);
//! - `stop@POINT`: print `… stop at POINT`, then SIGSTOP itself (Unix only;
//!   a test sends SIGCONT to let it go on);
//! - `fail@POINT`: the step fails as on a full disk (`ENOSPC`).
//!
//! The points, in the order a change meets them: `locked` (lock held, state
//! read, log recovered), `state-write` (writing the new state's temporary
//! file: a failure or crash leaves it half written), `log-append` (the
//! temporary file is synced), `log-half` (half of the log record written),
//! `state-rename` (the record is appended and synced; the state is not yet
//! renamed), `renamed` (the change is committed); for `planc run init`,
//! `init-log` (the new state is in place, its log not yet started).
//!
//! Release builds compile every point to nothing: none of the machinery
//! below is in them.

#[cfg(debug_assertions)]
pub(super) use injected::{armed, point};

/// Whether a fault is armed at `point`: never in a release build.
#[cfg(not(debug_assertions))]
#[inline]
pub(super) fn armed(_point: &str) -> bool {
    false
}

/// A fault point: nothing in a release build.
#[cfg(not(debug_assertions))]
#[inline]
pub(super) fn point(_point: &str) -> std::io::Result<()> {
    Ok(())
}

/// The faults themselves (debug builds).
#[cfg(debug_assertions)]
mod injected {
    use std::io;

    /// What to do at the armed point.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Action {
        Crash,
        Stop,
        Fail,
    }

    /// Whether a fault is armed at `point`.
    pub fn armed(point: &str) -> bool {
        action(point).is_some()
    }

    /// The action armed for `point`, if any.
    fn action(point: &str) -> Option<Action> {
        use std::sync::OnceLock;
        static FAULT: OnceLock<Option<(Action, String)>> = OnceLock::new();
        let fault = FAULT.get_or_init(|| {
            let value = std::env::var("PLANC_FAULT").ok()?;
            let (action, at) = value.split_once('@')?;
            let action = match action {
                "crash" => Action::Crash,
                "stop" => Action::Stop,
                "fail" => Action::Fail,
                _ => return None,
            };
            Some((action, at.to_owned()))
        });
        match fault {
            Some((action, at)) if at == point => Some(*action),
            _ => None,
        }
    }

    /// Runs the armed action at `point`: crashes, stops, or fails with `ENOSPC`.
    pub fn point(point: &str) -> io::Result<()> {
        match action(point) {
            None => Ok(()),
            Some(Action::Crash) => {
                #[allow(clippy::print_stderr, reason = "a fault test reads where it struck")]
                {
                    eprintln!("planc: fault injected: crash at {point}");
                }
                crash()
            }
            Some(Action::Stop) => {
                #[allow(clippy::print_stderr, reason = "a fault test reads where it struck")]
                {
                    eprintln!("planc: fault injected: stop at {point}");
                }
                stop();
                Ok(())
            }
            Some(Action::Fail) => Err(disk_full()),
        }
    }

    #[cfg(unix)]
    fn crash() -> ! {
        // SIGKILL, as `kill -9` would: no destructors, no buffers flushed.
        // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort()
    }

    #[cfg(not(unix))]
    fn crash() -> ! {
        std::process::abort()
    }

    #[cfg(unix)]
    fn stop() {
        // SAFETY: raise(3) has no memory-safety preconditions.
        unsafe {
            libc::raise(libc::SIGSTOP);
        }
    }

    #[cfg(not(unix))]
    fn stop() {}

    #[cfg(unix)]
    fn disk_full() -> io::Error {
        io::Error::from_raw_os_error(libc::ENOSPC)
    }

    #[cfg(not(unix))]
    fn disk_full() -> io::Error {
        io::Error::new(io::ErrorKind::StorageFull, "no space left on device")
    }
}
