//! check + build of generated plans: 1,000, 10,000 and 100,000 tasks.
//! Run: `cargo bench --bench compile`. Figures: docs/performance.md.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::sync::Arc;

use planc::check::Options;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// What `planc check` asks for: every check, no plan kept, no references.
fn check_options() -> Options {
    Options {
        skip_references: true,
        skip_plan: true,
        ..Options::default()
    }
}

/// Parse and every check: what `planc check` does (on the text as read,
/// shared with the compilation).
#[divan::bench(args = SIZES, sample_count = 10)]
fn check(bencher: divan::Bencher<'_, '_>, tasks: usize) {
    let text: Arc<str> = planc::generate::plan_source(tasks, false).into();
    let options = check_options();
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| planc::compile_shared("generated.plan", Arc::clone(&text), &options));
}

/// Parse, every check, the plan and the whole symbol index (definitions
/// and references): what the language server does on each change.
#[divan::bench(args = SIZES, sample_count = 10)]
fn compile(bencher: divan::Bencher<'_, '_>, tasks: usize) {
    let text: Arc<str> = planc::generate::plan_source(tasks, false).into();
    bencher
        .bench(|| planc::compile_shared("generated.plan", Arc::clone(&text), &Options::default()));
}

/// Parse, check, and write the JSON plan document: what `planc build` does.
#[divan::bench(args = SIZES, sample_count = 10)]
fn build(bencher: divan::Bencher<'_, '_>, tasks: usize) {
    let text: Arc<str> = planc::generate::plan_source(tasks, false).into();
    let options = Options {
        skip_references: true,
        ..Options::default()
    };
    bencher.bench(|| {
        let compiled = planc::compile_shared("generated.plan", Arc::clone(&text), &options);
        compiled.document().map(|d| d.to_json())
    });
}

/// `check` of a plan with a cycle from its first task to its last.
#[divan::bench(args = SIZES, sample_count = 10)]
fn check_cyclic(bencher: divan::Bencher<'_, '_>, tasks: usize) {
    let text: Arc<str> = planc::generate::plan_source(tasks, true).into();
    let options = check_options();
    bencher.bench(|| planc::compile_shared("generated.plan", Arc::clone(&text), &options));
}
