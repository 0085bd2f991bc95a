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

/// The idle threads' queues, the thread idle the shortest time last.
static IDLE: Mutex<Vec<mpsc::Sender<Work>>> = Mutex::new(Vec::new());

/// Runs `work` on the compile thread idle the shortest time, or on a new
/// one if none is idle.
pub fn run(work: impl FnOnce() + Send + 'static) {
    let mut work: Work = Box::new(work);
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

/// Has every idle compile thread give its memory back now (its queue
/// takes the collection as work; see [`give_back`]): after an analysis
/// whose blocks lie in their pages was dropped elsewhere
/// (`compaction`), since a thread puts the blocks others freed in its
/// pages on its free lists only when it collects or allocates.
pub fn give_back_idle() {
    let idle = std::mem::take(&mut *IDLE.lock().unwrap_or_else(PoisonError::into_inner));
    for queue in idle {
        // Each offers itself as idle again after the collection.
        let _ = queue.send(Box::new(give_back));
    }
}

/// A compile thread: runs the work it is given, offering itself as idle
/// after each, and gives its memory back after [`QUIET`] without work.
fn serve(queue: &mpsc::Sender<Work>, jobs: &mpsc::Receiver<Work>) {
    let mut work = jobs.recv();
    while let Ok(next) = work {
        next();
        IDLE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(queue.clone());
        work = match jobs.recv_timeout(QUIET) {
            Ok(next) => Ok(next),
            Err(RecvTimeoutError::Timeout) => {
                give_back();
                jobs.recv()
            }
            // Never: this thread holds a sender of its own.
            Err(RecvTimeoutError::Disconnected) => return,
        };
    }
}
