//! The threads documents are compiled on: kept for the server's life, the
//! one idle the shortest time taken first, each giving its memory back once
//! it has been idle for [`QUIET`].
//!
//! Why not tokio's blocking threads: mimalloc purges only the calling
//! thread's heap (`memory`), and tokio hands a blocking task to whichever
//! idle thread wakes, among threads that also read standard input and drop
//! replaced analyses. A keystroke's compile and the drop of the analysis it
//! replaces landed on one of them, and the collection when quiet on another:
//! the pages of earlier analyses stayed resident. Here the compiles of a
//! document being typed in run on one thread, which collects its own heap
//! when the typing pauses.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};

use crate::memory::{give_back, QUIET};

/// A compile and what follows it (publishing its diagnostics).
type Work = Box<dyn FnOnce() + Send>;

/// What a compile thread is sent.
enum Job {
    /// Work to run, after which the thread offers itself as idle again.
    Work(Work),
    /// Give its memory back now ([`give_back_idle`]); the thread stays
    /// where it is among the idle ones.
    GiveBack,
}

/// The idle threads' queues, the thread idle the shortest time last.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

/// Runs `work` on the compile thread idle the shortest time, or on a new
/// one if none is idle.
pub fn run(work: impl FnOnce() + Send + 'static) {
    let mut work = Job::Work(Box::new(work));
    loop {
        let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let Some(queue) = idle else { break };
        match queue.send(work) {
            Ok(()) => return,
            // That thread ended (its work panicked): the next one.
            Err(mpsc::SendError(back)) => work = back,
        }
    }
    let (queue, jobs) = mpsc::channel();
    // Its first work, waiting for it.
    let _ = queue.send(work);
    let spawned = std::thread::Builder::new()
        .name("planc-compile".to_owned())
        .spawn(move || serve(&queue, &jobs));
    if let Err(error) = spawned {
        #[allow(
            clippy::print_stderr,
            reason = "a language server's standard error is its log"
        )]
        {
            eprintln!("planc-lsp: cannot start a thread to compile on: {error}");
        }
    }
}

/// Has every idle compile thread give its memory back now (its queue is
/// sent [`Job::GiveBack`]; see [`give_back`]): after an analysis
/// whose blocks lie in their pages was dropped elsewhere
/// (`compaction`), since a thread puts the blocks others freed in its
/// pages on its free lists only when it collects or allocates.
pub fn give_back_idle() {
    // The threads stay idle meanwhile: a compile sent to one of them waits
    // for its collection (a millisecond or two), rather than starting one
    // more thread, which the server would keep for its life.
    let idle = IDLE.lock().unwrap_or_else(PoisonError::into_inner);
    for queue in idle.iter() {
        let _ = queue.send(Job::GiveBack);
    }
}

/// A compile thread: runs the work it is given, offering itself as idle
/// after each, and gives its memory back after [`QUIET`] without work (or
/// when told to, [`Job::GiveBack`]).
fn serve(queue: &mpsc::Sender<Job>, jobs: &mpsc::Receiver<Job>) {
    let mut job = jobs.recv();
    loop {
        job = match job {
            // Never: this thread holds a sender of its own.
            Err(mpsc::RecvError) => return,
            Ok(Job::GiveBack) => {
                give_back();
                jobs.recv()
            }
            Ok(Job::Work(work)) => {
                work();
                IDLE.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(queue.clone());
                match jobs.recv_timeout(QUIET) {
                    Ok(next) => Ok(next),
                    Err(RecvTimeoutError::Timeout) => {
                        give_back();
                        jobs.recv()
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::thread::{self, ThreadId};

    // mimalloc linked in, for the collections' `mi_collect` (the server's
    // binary links it as its allocator; this test binary does not).
    use mimalloc as _;

    /// Runs `work`'s compile thread's id back.
    fn on_which_thread() -> ThreadId {
        let (tell, told) = mpsc::channel();
        super::run(move || {
            let _ = tell.send(thread::current().id());
        });
        told.recv().expect("the work ran")
    }

    fn idle() -> usize {
        super::IDLE.lock().map_or(0, |idle| idle.len())
    }

    /// A compile sent while the idle threads give their memory back goes
    /// to one of them, not to a new thread (which the server would keep
    /// for its life: one more at each compaction a keystroke met).
    #[test]
    fn a_collection_keeps_the_threads_idle() {
        let first = on_which_thread();
        while idle() == 0 {
            thread::yield_now();
        }
        super::give_back_idle();
        assert_eq!(idle(), 1);
        assert_eq!(on_which_thread(), first);
    }
}
