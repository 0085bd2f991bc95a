//! What a compilation of a generated plan holds, by part: the bytes live
//! after `planc::compile_shared`, then after each part is dropped in turn
//! (a counting allocator over the system's). For finding what the
//! language server's memory is made of (docs/performance.md, "Memory of
//! the server").
//!
//! ```sh
//! cargo run --release -p planc-lsp --example memory_parts -- 100000
//! ```
//!
//! With `PLAN_OUT=FILE` it also writes the plan there. A second number,
//! `-- 100000 200`, first makes that many rounds of the memory bench's
//! kinds of edit (a letter in a title, in a name others wait for, in a
//! reference, a quote, a task line pasted — each taken back) through
//! `Compilation::recompile_edited`, as the server does, and counts what the
//! compilation holds then.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

// The memory bench's round of edits (`memory_round`), shared.
#[allow(dead_code)]
#[path = "../benches/support/mod.rs"]
mod support;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, counting the bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let tasks: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let text: Arc<str> = Arc::from(planc::generate::plan_source(tasks, false));
    // `PLAN_OUT=FILE` writes the plan, to open it elsewhere (under heaptrack).
    if let Ok(path) = std::env::var("PLAN_OUT") {
        std::fs::write(path, &*text).unwrap();
    }
    // The edited texts are made first, so that they are not counted.
    let edits = edits(&text, tasks);
    let base = LIVE.load(Ordering::Relaxed);
    println!("{tasks} tasks, text {:.2} MiB", mib(text.len()));
    // What each task costs at the least, before what its nodes point to.
    println!(
        "bytes: ast::Task {}, ast::StepItem {}, ast::TaskField {}, ast::Str {}, ir::Task {}",
        std::mem::size_of::<planc::syntax::ast::Task>(),
        std::mem::size_of::<planc::syntax::ast::StepItem>(),
        std::mem::size_of::<planc::syntax::ast::TaskField>(),
        std::mem::size_of::<planc::syntax::ast::Str>(),
        std::mem::size_of::<planc::ir::Task>(),
    );
    let options = planc::check::Options::default();
    let mut compilation = planc::compile_shared("/bench/big.plan", Arc::clone(&text), &options);
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(0);
    for _ in 0..rounds {
        for (next, edit) in &edits {
            compilation = compilation.recompile_edited(Arc::clone(next), Some(*edit));
        }
    }
    if rounds > 0 {
        println!("after {} edits:", rounds * edits.len());
    }
    let mut last = LIVE.load(Ordering::Relaxed);
    println!(
        "compilation (text not counted): {:.1} MiB",
        mib(last - base)
    );
    let mut part = |name: &str, live: usize| {
        println!("  {name}: {:.1} MiB", mib(last - live));
        last = live;
    };
    let live = || LIVE.load(Ordering::Relaxed);
    drop(compilation.checked.plan.take());
    part("checked.plan (IR)", live());
    drop(std::mem::take(&mut compilation.checked.symbols));
    part("checked.symbols", live());
    drop(std::mem::take(&mut compilation.checked.diagnostics));
    drop(std::mem::take(&mut compilation.diagnostics));
    part("diagnostics", live());
    drop(std::mem::take(&mut compilation.modules));
    part("modules (syntax trees)", live());
    drop(compilation);
    part(
        "the rest (reuse: graph, references, \"did you mean\" index)",
        live(),
    );
    let lines = planc::line_index::LineIndex::new(&text);
    let now = live();
    println!("line index: {:.1} MiB", mib(now - last));
    drop(lines);
}

/// The memory bench's edits (`benches/memory.rs`), each taken back (the
/// new task line pasted whole, where the bench types it letter by letter):
/// the text after it and where it changed.
fn edits(text: &Arc<str>, tasks: usize) -> Vec<(Arc<str>, planc::syntax::Edit)> {
    let mut edits = Vec::new();
    for (after, typed) in support::memory_round(text, tasks) {
        let at = text.find(&after).unwrap() + after.len();
        let edited: Arc<str> = Arc::from(format!("{}{typed}{}", &text[..at], &text[at..]));
        edits.push((
            Arc::clone(&edited),
            planc::syntax::Edit {
                start: at,
                old_end: at,
                new_end: at + typed.len(),
            },
        ));
        edits.push((
            Arc::clone(text),
            planc::syntax::Edit {
                start: at,
                old_end: at + typed.len(),
                new_end: at,
            },
        ));
    }
    edits
}
