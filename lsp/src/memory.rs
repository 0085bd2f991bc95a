//! Giving the memory of a replaced analysis back to the system.
//!
//! The server runs on mimalloc, which keeps the pages of freed blocks for
//! the thread that freed them and returns them to the system (purges them)
//! only when that thread allocates again some time later. A keystroke in
//! a large plan frees the analysis of the text before it — tens of
//! megabytes — so without a collection the freed pages stay resident until
//! the next keystroke, and their pieces linger longer: at 100,000 tasks the
//! server's resident memory went from 22× the file after the open to
//! 36–50× over a few hundred edits (docs/performance.md, "Memory of the
//! server"). Collecting after the drop keeps it at what the analysis
//! holds.
//!
//! Collecting costs the next keystroke its pages: they come back from the
//! system zeroed, about 6 ms more per keystroke at 100,000 tasks when it
//! ran after every publish. So it runs once the document has been quiet
//! for [`QUIET`] ([`give_back_when_quiet`]): a typing burst keeps its pages,
//! and a pause gives them back.
//!
//! mimalloc purges only the calling thread's heap, so the collection runs
//! on each thread that frees much. Each compile thread collects its own
//! (`compile_threads`: analyses are compiled and dropped there). When no
//! publish followed for [`QUIET`], so do a blocking thread (standard
//! input's reads), the runtime's worker (which frames the client's
//! messages: a `didOpen` of a large plan is a body of megabytes, read and
//! checked there) and the thread that serves the protocol (which decodes
//! them: the message, its parameters and the document's text, each as
//! large, freed once the text is shared), where
//! [`give_back_here_when_quiet`] runs beside the protocol's loop.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// How long after the last publish memory is given back, if none followed.
pub const QUIET: Duration = Duration::from_millis(250);

/// Publishes so far: a collection waits for the count to stand still.
static PUBLISHED: AtomicU64 = AtomicU64::new(0);

/// Told when a quiet spell begins, for [`give_back_here_when_quiet`].
static QUIET_NOW: Notify = Notify::const_new();

// mimalloc's own collection: the global allocator of `planc-lsp` (and of
// `planc`), linked into every build of this crate. Declared here rather
// than through `libmimalloc-sys`'s `extended` feature, which would bring in
// another crate for one function.
extern "C" {
    fn mi_collect(force: bool);
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// Keeps the server's memory in small pages, not transparent huge pages
/// (as `planc` does for `planc serve`), unless `MIMALLOC_ALLOW_THP` is set.
/// `planc-lsp` calls it before mimalloc sets itself up (`main.rs`).
///
/// mimalloc asks for huge pages on its arenas (`MADV_HUGEPAGE`), so every
/// fresh 2 MiB of them was faulted in whole, and it then gave memory back
/// only in whole 2 MiB ranges (its least purge with huge pages allowed):
/// after the open of a 100,000-task plan 115 of the server's 155 MiB were
/// huge pages, and the process held 11.6 MiB before the open against 6.0
/// without them (docs/performance.md, "The server's memory beyond what it
/// holds").
pub fn small_pages_only() {
    // `mi_option_allow_thp` of mimalloc 3 (libmimalloc-sys 0.1.49,
    // c_src/mimalloc/v3/include/mimalloc.h).
    const ALLOW_THP: std::ffi::c_int = 43;
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's options, which it allows any time
    // (without mimalloc as the global allocator it changes nothing used).
    unsafe { mi_option_set(ALLOW_THP, 0) };
    // If mimalloc has mapped memory already (it asked for huge pages on
    // it), the process-wide flag covers that.
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
        }
        const PR_SET_THP_DISABLE: std::ffi::c_int = 41;
        // SAFETY: sets a flag of this process's memory; takes no pointers.
        unsafe {
            prctl(
                PR_SET_THP_DISABLE,
                1 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
            )
        };
    }
}

/// `mi_option_purge_delay` of mimalloc 3 (libmimalloc-sys 0.1.49,
/// c_src/mimalloc/v3/include/mimalloc.h).
const PURGE_DELAY: std::ffi::c_int = 15;

/// The purge delay [`purge_as_before`] sets again, while
/// [`purge_at_once`] holds it at 0.
static DELAY_BEFORE: std::sync::Mutex<Option<std::ffi::c_long>> = std::sync::Mutex::new(None);

/// Has mimalloc give freed pages back to the system at once, not after its
/// delay, until [`purge_as_before`]: while a large text is read, decoded
/// and compiled (from the framing layer's reading of a message of
/// `large_texts::LARGE` bytes or more to the end of the next compile), and
/// while an idle document is compiled whole again (`compaction`).
/// Left as it is when `MIMALLOC_PURGE_DELAY` is set.
///
/// The open of a 100,000-task plan frees as much as it keeps (the message,
/// twice decoded, the compile's temporaries); with the delay, the freed pages
/// were taken again for what the analysis keeps, among the temporaries'
/// leftovers, and after the open the server held 117.8–125.6 MiB, with a
/// peak of 165–179 MiB; purged at once, 115.4–115.9 MiB and a peak of 134
/// (the open 0.54–1.04 s from `didOpen` to its diagnostics, against
/// 0.62–0.72 s; docs/performance.md, "The server's memory beyond what it
/// holds"). Not for keystrokes: at once, each keystroke's compile gets its
/// pages back from the system zeroed, 2–4× slower at 100,000 tasks.
pub fn purge_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    let mut before = DELAY_BEFORE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if before.is_none() {
        // SAFETY: reads and sets one of mimalloc's options, which it
        // allows any time.
        unsafe {
            *before = Some(mi_option_get(PURGE_DELAY));
            mi_option_set(PURGE_DELAY, 0);
        }
    }
}

/// The purge delay [`purge_at_once`] found, again (nothing if it is not
/// purging at once). Called after every compile.
pub fn purge_as_before() {
    let mut before = DELAY_BEFORE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(delay) = before.take() {
        // SAFETY: as in `purge_at_once`.
        unsafe { mi_option_set(PURGE_DELAY, delay) };
    }
}

/// Frees and purges the pages this thread's heap no longer uses (and those
/// of threads that have ended). Call it after dropping a large value, off
/// the path of a keystroke's diagnostics: it takes a millisecond or two
/// after an analysis of 100,000 tasks.
pub fn give_back() {
    // One thread at a time: a collection purges the pages that every
    // thread's collection freed so far, but mimalloc lets only one thread
    // purge at a time and the others skip it; when the threads collected
    // at once, pages one of them freed while another purged stayed
    // resident, and the server held about 17 MiB more after the open in
    // 6 runs of 16 (with small pages).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // SAFETY: `mi_collect` takes a plain flag and may be called from any
    // thread at any time; it only walks and purges the calling thread's
    // heap (and abandoned ones) and never frees memory still in use. When
    // mimalloc is not the global allocator (the crate's tests), its heaps
    // are empty and the call does nothing.
    unsafe { mi_collect(true) };
    for heap in &HEAPS {
        let heap = heap.load(Ordering::Relaxed);
        if !heap.is_null() {
            // SAFETY: as `mi_collect`, for this thread's part of a heap
            // made by `apart` (and never deleted).
            unsafe { mi_heap_collect(heap, true) }
        }
    }
}

/// [`give_back`] once [`QUIET`] has passed without another publish (or
/// large answer: the semantic tokens whole) of any
/// document: on a blocking thread, on the runtime's worker (this task's
/// thread), and on the thread that awaits [`give_back_here_when_quiet`].
pub fn give_back_when_quiet(runtime: &tokio::runtime::Handle) {
    let published = PUBLISHED.fetch_add(1, Ordering::Relaxed) + 1;
    runtime.spawn(async move {
        tokio::time::sleep(QUIET).await;
        if PUBLISHED.load(Ordering::Relaxed) == published {
            drop(tokio::task::spawn_blocking(give_back));
            QUIET_NOW.notify_one();
            give_back();
        }
    });
}

/// Never returns: each time a quiet spell begins, [`give_back`] on the
/// thread that polls it. Polled beside the protocol's loop (`select!`),
/// on the thread that decodes the client's messages.
pub async fn give_back_here_when_quiet() {
    loop {
        QUIET_NOW.notified().await;
        give_back();
    }
}

type Heap = *mut std::ffi::c_void;

extern "C" {
    fn mi_heap_new() -> Heap;
    fn mi_heap_collect(heap: Heap, force: bool);
    fn mi_heap_malloc_aligned(heap: Heap, size: usize, align: usize) -> Heap;
    fn mi_heap_zalloc_aligned(heap: Heap, size: usize, align: usize) -> Heap;
    fn mi_heap_realloc_aligned(heap: Heap, ptr: Heap, size: usize, align: usize) -> Heap;
}

/// The heap every allocation goes to while [`apart`] runs (null: mimalloc's
/// default heap).
static APART: std::sync::atomic::AtomicPtr<std::ffi::c_void> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// The two heaps [`apart`] uses in turn, made when first needed.
static HEAPS: [std::sync::atomic::AtomicPtr<std::ffi::c_void>; 2] = [
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
];

/// Runs `work` with every allocation of every thread in a mimalloc heap of
/// its own: the two heaps in turn, one call the one, the next the other
/// (calls that overlap, two documents compacted at once, share the heap the
/// first took, which stays set until the last of them ends).
/// For an idle document's whole compile (`compaction`), whose analysis
/// then lies in pages holding nothing else.
///
/// In the default heap, a thread that needs a page for a size class first
/// takes one that an ended thread left (an "abandoned" page: the heap's
/// earlier whole compiles and their helper threads ended), with the holes
/// earlier analyses left and blocks of the analysis about to be replaced:
/// the new analysis filled those holes, the old one was freed around it,
/// and the pages stayed part empty (at 100,000 tasks, 55–63 such pages held
/// 3.8–4.2 MiB of blocks in 5.6–5.8 MiB resident; docs/performance.md,
/// "The server's memory beyond the counted bytes"). A heap of its own has
/// no such pages but what the whole compile before last left, which
/// keystrokes and the last whole compile have replaced since (a keystroke
/// meeting a whole compile allocates there too, for that while). Frees
/// need nothing: mimalloc frees a block into whichever heap holds it.
pub fn apart<R>(work: impl FnOnce() -> R) -> R {
    /// How many calls are running, and how many have begun with none
    /// running (which of the two heaps the next such takes).
    static RUNNING: std::sync::Mutex<(usize, usize)> = std::sync::Mutex::new((0, 0));
    fn running() -> std::sync::MutexGuard<'static, (usize, usize)> {
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    struct Back;
    impl Drop for Back {
        fn drop(&mut self) {
            let mut running = running();
            running.0 -= 1;
            if running.0 == 0 {
                APART.store(std::ptr::null_mut(), Ordering::Relaxed);
            }
        }
    }
    {
        let mut running = running();
        if running.0 == 0 {
            let slot = &HEAPS[running.1 % 2];
            running.1 += 1;
            let mut heap = slot.load(Ordering::Relaxed);
            if heap.is_null() {
                // SAFETY: makes a heap, which is never deleted.
                heap = unsafe { mi_heap_new() };
                slot.store(heap, Ordering::Relaxed);
            }
            APART.store(heap, Ordering::Relaxed);
        }
        running.0 += 1;
    }
    let _back = Back;
    work()
}

/// The server's allocator: mimalloc, but a freed block of mimalloc's
/// large size classes ([`LARGE_BLOCKS`]) gives its memory back at once,
/// all of it but its first 4 KiB (where mimalloc links it into its page's
/// free list).
///
/// Those blocks share 4 MiB pages, 8 to 48 a page, and mimalloc gives a
/// page's memory back only when every block in it is free: a freed block
/// stays resident until it is taken again. The document's line index at
/// 100,000 tasks (0.45 MiB) is made again at each change, and three or four
/// are alive at once while typing (the document's, the compile's, the latest
/// analysis's, the one it replaced); once the document is idle one is left,
/// in a page with 1.3 MiB of freed blocks resident beside it
/// (docs/performance.md, "The server's memory beyond the counted bytes").
/// Larger blocks have a page of their own, which mimalloc purges when freed;
/// smaller ones share pages of 64 or 512 KiB, which stay full.
pub struct Allocator;

/// The sizes of mimalloc's blocks in 4 MiB pages (mimalloc 3's "large"
/// pages: above `MI_MEDIUM_MAX_OBJ_SIZE`, about 84.7 KiB, up to
/// `MI_LARGE_MAX_OBJ_SIZE`, 512 KiB), with a margin below.
pub const LARGE_BLOCKS: std::ops::RangeInclusive<usize> = (96 << 10)..=(512 << 10);

// SAFETY: every call is mimalloc's; `dealloc` only adds an `madvise` of
// whole pages inside the block being freed, which the caller no longer uses.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let heap = APART.load(Ordering::Relaxed);
        if heap.is_null() {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        } else {
            // SAFETY: as `MiMalloc::alloc`, in a heap that lives as long
            // as the process (`apart`).
            unsafe { mi_heap_malloc_aligned(heap, layout.size(), layout.align()).cast() }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let heap = APART.load(Ordering::Relaxed);
        if heap.is_null() {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        } else {
            // SAFETY: as in `alloc`.
            unsafe { mi_heap_zalloc_aligned(heap, layout.size(), layout.align()).cast() }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if LARGE_BLOCKS.contains(&layout.size()) {
            give_back_block(ptr, layout.size());
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let heap = APART.load(Ordering::Relaxed);
        if heap.is_null() {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        } else {
            // SAFETY: as in `alloc`; mimalloc frees `ptr` from whichever
            // heap holds it.
            unsafe { mi_heap_realloc_aligned(heap, ptr.cast(), new_size, layout.align()).cast() }
        }
    }
}

/// Gives the whole pages of `size` bytes at `ptr` but the first back to the
/// system (their contents are lost: the block is about to be freed).
fn give_back_block(ptr: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(
                addr: *mut std::ffi::c_void,
                len: usize,
                advice: std::ffi::c_int,
            ) -> std::ffi::c_int;
        }
        const MADV_DONTNEED: std::ffi::c_int = 4;
        const PAGE: usize = 4096;
        let start = (ptr as usize + PAGE).next_multiple_of(PAGE);
        let end = (ptr as usize + size) & !(PAGE - 1);
        if end > start {
            // SAFETY: `start..end` are whole pages inside the block, which
            // its owner is freeing: nothing reads them again before they
            // are allocated anew (then they read as zeros, as a fresh
            // page does); mimalloc's own link lies in the first page,
            // kept.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_DONTNEED) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two calls of `apart` that overlap share one heap, and the first to
    /// end leaves it set for the other (fails with each call taking a heap
    /// of its own and clearing it when it ends).
    #[test]
    fn overlapping_calls_apart_share_the_heap_until_the_last_ends() {
        let (entered, on_entered) = std::sync::mpsc::channel();
        let (go, on_go) = std::sync::mpsc::channel::<()>();
        let outer = std::thread::spawn(move || {
            apart(|| {
                entered
                    .send(APART.load(Ordering::Relaxed) as usize)
                    .unwrap();
                on_go.recv().unwrap();
                APART.load(Ordering::Relaxed) as usize
            })
        });
        let heap = on_entered.recv().unwrap();
        assert_ne!(heap, 0, "a heap is set while a call runs");
        let inner = apart(|| APART.load(Ordering::Relaxed) as usize);
        assert_eq!(inner, heap, "the overlapping call shares the heap");
        assert_eq!(
            APART.load(Ordering::Relaxed) as usize,
            heap,
            "the first to end leaves it set"
        );
        go.send(()).unwrap();
        assert_eq!(outer.join().unwrap(), heap);
        assert!(
            APART.load(Ordering::Relaxed).is_null(),
            "the last to end clears it"
        );
        let next = apart(|| APART.load(Ordering::Relaxed) as usize);
        assert_ne!(next, heap, "a call with none running takes the other heap");
    }
}
