//! Building a target costs about its text: every output shape is written
//! straight from the plan document, never through a JSON tree of the whole
//! output (issue #16: a template bomb within the expansion limit took
//! 225 MiB in `planc build --target taskmaster`, 7 KiB a task).
//!
//! A counting allocator measures the peak of live bytes while each target
//! is rendered; the budget is the output's text (twice, for its growth)
//! plus a few hundred bytes a task for the orders and indexes a shape
//! keeps. The plans are the hostile suite's memory cases that broke the
//! bound in the nightly run of 2026-11-26 (seeds 20261336, 20261918,
//! 20262235): 64–200 KB template bombs that expand to about 31,000 tasks.

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use planc::check::Options;
use planc::emit::Target;
use planc::generate::hostile::{self, Class};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(live, Ordering::SeqCst);
}

// SAFETY: every call is passed to the system allocator unchanged; only the
// counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let pointer = unsafe { System.alloc_zeroed(layout) };
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let moved = unsafe { System.realloc(pointer, layout, size) };
        if !moved.is_null() {
            if size >= layout.size() {
                grew(size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - size, Ordering::SeqCst);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The size the hostile suite gives the random case of `seed`
/// (tests/hostile/main.rs): 2 KiB to 256 KiB.
fn size(seed: u64) -> usize {
    let mut next = hostile::numbers(seed);
    let shift = 11 + next(7);
    (1 << shift) + next(1 << shift)
}

/// Bytes a shape may keep per task besides its text: the line of tasks
/// (`Vec<&TaskDoc>`), the topological order's lists, task-master's index
/// by id and subtask lists.
const PER_TASK: usize = 256;

#[test]
fn every_target_of_a_template_bomb_costs_about_its_text() {
    let mut over = Vec::new();
    for seed in [20261336, 20261918, 20262235] {
        let (shape, text) = hostile::case(Class::Memory, seed, size(seed));
        let compiled = planc::compile("case.plan", &text, &Options::default());
        let document = compiled
            .document()
            .unwrap_or_else(|| panic!("seed {seed} ({shape}) builds"));
        let tasks = document.tasks.len();
        assert!(
            tasks > 30_000,
            "seed {seed} ({shape}, {} bytes) expands to {tasks} tasks, not the 31,000 it did",
            text.len()
        );
        drop(compiled);
        for (name, target) in Target::ALL {
            let before = LIVE.load(Ordering::SeqCst);
            PEAK.store(before, Ordering::SeqCst);
            let output = planc::emit::render(&document, target);
            let peak = PEAK.load(Ordering::SeqCst) - before;
            let budget = 2 * output.len() + PER_TASK * tasks + (1 << 20);
            eprintln!(
                "seed {seed}, {tasks} tasks, --target {name}: output {} KiB, peak {} KiB ({} B a task), budget {} KiB",
                output.len() >> 10,
                peak >> 10,
                peak / tasks,
                budget >> 10
            );
            assert!(
                output.starts_with('{') && output.ends_with("}\n"),
                "--target {name} writes a JSON object"
            );
            if peak > budget {
                over.push(format!(
                    "seed {seed}, --target {name}: {} KiB at the peak for {} KiB of text and {tasks} tasks (budget {} KiB)",
                    peak >> 10,
                    output.len() >> 10,
                    budget >> 10
                ));
            }
        }
    }
    assert!(over.is_empty(), "over budget:\n{}", over.join("\n"));
}
