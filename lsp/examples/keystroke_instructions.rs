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
//! Each recompile is told where the text changed, as the language server
//! is by the client's `didChange` (`Compilation::recompile_edited`).
//!
//! Arguments: the number of tasks, the keystroke (`title`, `rename`,
//! `name` (the last task's, which nothing names), `quote`, `step` (a step's
//! title), `reference` (a letter typed at the end of a reference), `item`
//! (the first letter of a new item in a step), `brace` (the `{` of a new
//! task's body at the start of a step that is `sequential` and waits for
//! the step before it: the body, left open, takes both in), `stepname` (a letter at the
//! end of the name of a step the next step waits for), `template` (a
//! letter in a template's task title), `param` (a letter at the end of a
//! template's parameter name), `import` (a letter in the imported file's
//! name), or `whole` for a whole compile), and `N` (default 8). The last
//! three edit `planc::generate::plan_source_with_reuse`, written with its
//! library to a directory of its own.

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
            "usage: keystroke_instructions TASKS title|rename|name|quote|step|reference|item|brace|paste|stepname|template|param|import|whole [N]"
        );
        std::process::exit(2);
    };
    let times: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(8);
    let reuse = matches!(kind.as_str(), "template" | "param" | "import");
    let mut text = match reuse {
        true => planc::generate::plan_source_with_reuse(tasks),
        false => planc::generate::plan_source(tasks, false),
    };
    // The middle step (as the keystroke bench's typing), its new task's
    // title typed.
    let middle = tasks.div_ceil(20) / 2;
    let step_start = format!("step s{middle} \"Stage {middle} of {{count}}\" {{");
    if kind == "brace" {
        let at = text.find(&step_start).expect("the middle step") + step_start.len();
        text.insert_str(at, BRACED_TASK);
    }
    let (after, typed) = match kind.as_str() {
        // A step the next one waits for, near the middle (as the bench's).
        "stepname" => {
            let step = (tasks.div_ceil(20) / 2 / 5).max(1) * 5 - 1;
            (format!("step s{step}"), "x")
        }
        "template" => ("task approve \"Get".to_owned(), "x"),
        "param" => ("template review(change".to_owned(), "x"),
        "import" => ("import \"lib".to_owned(), "x"),
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
        "brace" => (format!("{step_start}{BRACED_TASK}"), "{"),
        // A whole task line pasted at the start of a step (a task added),
        // and taken out again.
        "paste" => {
            let step = tasks.div_ceil(20) / 2;
            (
                format!("step s{step} \"Stage {step} of {{count}}\" {{"),
                PASTED_TASK,
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
    let dir = std::env::temp_dir().join(format!("planc-instructions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.plan"), planc::generate::REUSE_LIBRARY).unwrap();
    let path = dir.join("bench.plan").display().to_string();
    let mut compilation = planc::compile::compile_shared(&path, original.clone(), &options);
    if kind == "whole" {
        for _ in 0..times {
            let whole = planc::compile::compile_shared(&path, original.clone(), &options);
            std::hint::black_box(&whole);
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let at = text.find(&after).expect("the plan has the task") + after.len();
    let edited: Arc<str> = Arc::from(format!("{}{typed}{}", &text[..at], &text[at..]).as_str());
    // Told where the text changed, as the server is by `didChange`.
    let typed_edit = planc::syntax::Edit {
        start: at,
        old_end: at,
        new_end: at + typed.len(),
    };
    let taken_back = planc::syntax::Edit {
        start: at,
        old_end: at + typed.len(),
        new_end: at,
    };
    let mut times_ms = Vec::with_capacity(times);
    for i in 0..times {
        let (next, edit) = match i % 2 {
            0 => (&edited, typed_edit),
            _ => (&original, taken_back),
        };
        let started = std::time::Instant::now();
        compilation = compilation.recompile_edited(Arc::clone(next), Some(edit));
        times_ms.push(started.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(&compilation);
    }
    // The wall-clock median, for a quick look (the instructions are what
    // the docs report).
    times_ms.sort_by(f64::total_cmp);
    if let Some(median) = times_ms.get(times_ms.len() / 2) {
        eprintln!("median recompile: {median:.2} ms");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The new task the `brace` kind opens the body of (as the keystroke
/// bench's typing does).
const BRACED_TASK: &str = "\n        task n1 \"New\" ";

/// The task line the `paste` kind pastes (as the keystroke bench does).
const PASTED_TASK: &str = "\n        task n1 \"New\" { after t3 }";
