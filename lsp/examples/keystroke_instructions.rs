//! The library's share of one keystroke, for an instruction counter: compiles
//! a generated plan once, then recompiles the keystroke of
//! `lsp/benches/keystroke.rs` (typed, taken back, in turns) `N` times, or
//! compiles the whole text `N` times. Run it under
//! `valgrind --tool=callgrind` with `N` and with 0, and divide the
//! difference by `N` (docs/performance.md, "Language server").
//!
//! ```sh
//! cargo build --release -p planc-lsp --example keystroke_instructions
//! valgrind --tool=callgrind target/release/examples/keystroke_instructions 10000 rename 8
//! ```
//!
//! Arguments: the number of tasks, the keystroke (`title`, `rename`,
//! `name` (the last task's, which nothing names), `quote`, `step` (a step's
//! title), `reference` (a letter typed at the end of a reference), `item`
//! (the first letter of a new item in a step), or `whole` for a whole
//! compile), and `N` (default 8).

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::sync::Arc;

// The allocator the server uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(tasks), Some(kind)) = (args.first().and_then(|a| a.parse().ok()), args.get(1)) else {
        eprintln!(
            "usage: keystroke_instructions TASKS title|rename|name|quote|step|reference|item|whole [N]"
        );
        std::process::exit(2);
    };
    let times: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(8);
    let text = planc::generate::plan_source(tasks, false);
    let (after, typed) = match kind.as_str() {
        "title" => (format!("task t{} \"Do", tasks / 2), "x"),
        // A task others wait for, near the middle.
        "rename" => (
            format!(
                "task {}",
                planc::generate::waited_for_task(&text).expect("an `after`")
            ),
            "x",
        ),
        // The last task: nothing waits for it.
        "name" => (format!("task t{}", tasks - 1), "x"),
        "quote" => (format!("task t{} \"Do", tasks / 2), "\""),
        // A step's title, near the middle.
        "step" => (format!("step s{} \"Stage", tasks.div_ceil(20) / 2), "x"),
        // The first letter of a new item in a step: a syntax error there.
        "item" => {
            let step = tasks.div_ceil(20) / 2;
            (
                format!("step s{step} \"Stage {step} of {{count}}\" {{"),
                "t",
            )
        }
        // A reference to a task others wait for: it then names no task.
        "reference" => (
            format!(
                "after {}",
                planc::generate::waited_for_task(&text).expect("an `after`")
            ),
            "x",
        ),
        _ => (String::new(), ""),
    };
    let options = planc::check::Options::default();
    let original: Arc<str> = Arc::from(text.as_str());
    let mut compilation = planc::compile::compile_shared("bench.plan", original.clone(), &options);
    if kind == "whole" {
        for _ in 0..times {
            let whole = planc::compile::compile_shared("bench.plan", original.clone(), &options);
            std::hint::black_box(&whole);
        }
        return;
    }
    let at = text.find(&after).expect("the plan has the task") + after.len();
    let edited: Arc<str> = Arc::from(format!("{}{typed}{}", &text[..at], &text[at..]).as_str());
    for i in 0..times {
        let next = if i % 2 == 0 { &edited } else { &original };
        compilation = compilation.recompile(Arc::clone(next));
        std::hint::black_box(&compilation);
    }
}
