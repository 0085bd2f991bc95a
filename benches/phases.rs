//! Times the phases of `planc build` on a generated plan, for profiling:
//! `cargo bench --bench phases -- [parse|all] [TASKS] [ROUNDS]`, e.g. under
//! `perf record` or `valgrind --tool=callgrind`.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use planc::check::Options;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let which = args.next().unwrap_or_default();
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let text = planc::generate::plan_source(size, false);
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let parsed = planc::syntax::parse(&text, planc::span::FileId(0));
        eprintln!("parse          {:?}", t.elapsed());
        drop(parsed);
        if which == "parse" {
            continue;
        }
        let t = std::time::Instant::now();
        let compiled = planc::compile("generated.plan", &text, &Options::default());
        eprintln!("parse + check  {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let json = compiled.document().map(|d| d.to_json()).unwrap_or_default();
        eprintln!("document+json  {:?} ({} bytes)", t.elapsed(), json.len());
    }
}
