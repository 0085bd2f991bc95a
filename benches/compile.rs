//! check + build of generated plans: 1,000, 10,000 and 100,000 tasks.
//! Run: `cargo bench --bench compile`. Figures: docs/performance.md.

use planc::check::Options;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// Parse and every check: what `planc check` does.
#[divan::bench(args = SIZES, sample_count = 10)]
fn check(bencher: divan::Bencher, tasks: usize) {
    let text = planc::generate::plan_source(tasks, false);
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| planc::compile("generated.plan", &text, &Options::default()));
}

/// Parse, check, and write the JSON plan document: what `planc build` does.
#[divan::bench(args = SIZES, sample_count = 10)]
fn build(bencher: divan::Bencher, tasks: usize) {
    let text = planc::generate::plan_source(tasks, false);
    bencher.bench(|| {
        let compiled = planc::compile("generated.plan", &text, &Options::default());
        compiled.document().map(|d| d.to_json())
    });
}

/// Check of a plan with a cycle from its first task to its last.
#[divan::bench(args = SIZES, sample_count = 10)]
fn check_cyclic(bencher: divan::Bencher, tasks: usize) {
    let text = planc::generate::plan_source(tasks, true);
    bencher.bench(|| planc::compile("generated.plan", &text, &Options::default()));
}
