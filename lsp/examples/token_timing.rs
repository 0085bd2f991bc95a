//! The semantic tokens' share of a keystroke, in the library, without the
//! protocol: a generated plan compiled and its tokens kept
//! (`planc::ide::TokenStore`), then a letter typed into a task's title in
//! the middle and taken back, in turns, `N` times; each time the recompile,
//! the edit found (`Edit::between`), the tokens made from the last text's,
//! the delta from them and a range of 60 lines are timed apart (median and
//! 90th percentile, ms), and the whole file's tokens encoded once.
//!
//! ```sh
//! cargo build --release -p planc-lsp --example token_timing
//! target/release/examples/token_timing 100000 30
//! valgrind --tool=callgrind target/release/examples/token_timing 10000 8 tokens
//! ```
//!
//! With a third argument `tokens`, only the tokens' part is repeated after
//! the first (for an instruction counter: run with `N` and with 0 and
//! divide the difference by `N`); with `whole`, the whole file's tokens
//! are made instead, as before they were kept per tile
//! (`planc::ide::semantic_tokens`, then encoded). With `every-name` after
//! it, the stores hash every name of the file, as they did before they
//! told the names that changed from the checker's chunks.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::time::{Duration, Instant};

use planc::ide::TokenStore;
use planc::line_index::LineIndex;
use planc::syntax::Edit;

// The allocator the server uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tasks: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let times: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let only_tokens = args.get(2).is_some_and(|a| a == "tokens" || a == "whole");
    let whole = args.get(2).is_some_and(|a| a == "whole");
    let every_name = args.iter().any(|a| a == "every-name");
    let text = planc::generate::plan_source(tasks, false);
    let needle = format!("task t{} \"Do", tasks / 2);
    let at = text.find(&needle).unwrap() + needle.len();
    let typed = format!("{}x{}", &text[..at], &text[at..]);
    let options = planc::check::Options::default();
    let started = Instant::now();
    let first = planc::compile_shared("bench.plan", text.as_str().into(), &options);
    let lines = LineIndex::new(&text);
    println!("compile whole: {:.1} ms", ms(started.elapsed()));
    let started = Instant::now();
    let store = TokenStore::build(&first, &lines, None);
    println!(
        "tokens made whole: {:.1} ms ({} tokens, {} tiles)",
        ms(started.elapsed()),
        store.len(),
        store.tiles()
    );
    let started = Instant::now();
    let encoded = store.encode(&text, &lines);
    println!(
        "tokens encoded whole: {:.1} ms ({})",
        ms(started.elapsed()),
        encoded.len()
    );
    let texts = [typed, text];
    let mut compilation = first;
    let mut store = store;
    let mut current = 1;
    let mut timings: [Vec<Duration>; 6] = Default::default();
    let compiled: Vec<_> = match only_tokens {
        true => texts
            .iter()
            .map(|t| compilation.recompile(t.as_str().into()))
            .collect(),
        false => Vec::new(),
    };
    for i in 0..times {
        let next = i % 2;
        let new_text = &texts[next];
        let started = Instant::now();
        let new = match only_tokens {
            true => compiled[next].clone(),
            false => compilation.recompile(new_text.as_str().into()),
        };
        timings[0].push(started.elapsed());
        let new_lines = LineIndex::new(new_text);
        let started = Instant::now();
        let edit = Edit::between(&texts[current], new_text);
        timings[1].push(started.elapsed());
        if whole {
            let started = Instant::now();
            std::hint::black_box(planc::ide::semantic_tokens(&new));
            timings[5].push(started.elapsed());
        }
        let started = Instant::now();
        let base = Some((&store, edit));
        let next_store = match every_name {
            true => TokenStore::build_hashing_every_name(&new, &new_lines, base),
            false => TokenStore::build(&new, &new_lines, base),
        };
        timings[2].push(started.elapsed());
        let started = Instant::now();
        let delta = next_store.delta(&store, new_text, &new_lines).unwrap();
        timings[3].push(started.elapsed());
        assert!(delta.tokens.len() < 20, "{}", delta.tokens.len());
        let middle = new_lines.line(at);
        let started = Instant::now();
        let range = next_store.encode_range(
            new_text,
            &new_lines,
            new_lines.line_start(middle - 30),
            new_lines.line_start(middle + 30),
        );
        timings[4].push(started.elapsed());
        assert!(!range.is_empty());
        compilation = new;
        store = next_store;
        current = next;
    }
    let names = [
        "recompile",
        "Edit::between",
        "tokens made from the last",
        "delta",
        "range of 60 lines",
        "the whole file's tokens made (ide::semantic_tokens, as before)",
    ];
    for (name, mut times) in names.into_iter().zip(timings) {
        if times.is_empty() {
            continue;
        }
        times.sort();
        let p = |q: f64| ms(times[((times.len() - 1) as f64 * q) as usize]);
        println!("{name}: median {:.3} ms, p90 {:.3} ms", p(0.5), p(0.9));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
