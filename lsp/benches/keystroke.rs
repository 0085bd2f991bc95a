//! One keystroke in a large plan, over the real protocol: the `didChange`
//! notification goes to the `planc-lsp` binary, and the time runs until it
//! has published the diagnostics of that version. Then the library's share
//! alone: `Compilation::recompile` of the same edits, and a whole compile.
//!
//! Run with `cargo bench -p planc-lsp --bench keystroke` (release build);
//! `-- 1000 10000` picks the sizes (default 1,000, 10,000 and 100,000
//! tasks), other words the rows whose names hold one (`-- 100000 "(a
//! rename)"`; the whole compile is always timed). Prints a Markdown table of the median and the 90th percentile.
//! Besides single keystrokes typed and taken back, a new task is typed at
//! the start of a step and deleted again, letter by letter, each keystroke
//! timed (the texts in between have syntax errors, a task appears, its body
//! opens and closes).

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../tests/common/mod.rs"]
mod common;

mod support;

use std::sync::Arc;
use std::time::Instant;

use common::{find, TestClient};

// The allocator the server and `planc` use, for the library's figures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// An edit typed and taken back again, in turns.
struct Keystroke {
    name: &'static str,
    /// Where it is typed, in the plan of this many tasks: after the first
    /// occurrence of this text.
    after: fn(&str, usize) -> String,
    typed: &'static str,
    /// Whether the text with the keystroke has diagnostics.
    leaves_mistake: bool,
}

const KEYSTROKES: &[Keystroke] = &[
    Keystroke {
        name: "a letter in a task's title",
        after: |_, tasks| format!("task t{} \"Do", tasks / 2),
        typed: "x",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in the name of a task others wait for (a rename)",
        after: |text, _| format!("task {}", waited_for(text)),
        typed: "x",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in the name of a task nothing names (a new task's)",
        after: |_, tasks| format!("task t{}", tasks - 1),
        typed: "x",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in a step's title",
        after: |_, tasks| format!("step s{} \"Stage", tasks.div_ceil(20) / 2),
        typed: "x",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in a reference, which then names no task",
        after: |text, _| format!("after {}", waited_for(text)),
        typed: "x",
        leaves_mistake: true,
    },
    Keystroke {
        name: "the first letter of a new item in a step (a syntax error until it is one)",
        after: |_, tasks| {
            let step = tasks.div_ceil(20) / 2;
            format!("step s{step} \"Stage {step} of {{count}}\" {{")
        },
        typed: "t",
        leaves_mistake: true,
    },
    Keystroke {
        name: "a quote that leaves a string unclosed",
        after: |_, tasks| format!("task t{} \"Do", tasks / 2),
        typed: "\"",
        leaves_mistake: true,
    },
    Keystroke {
        name: "a whole new task line pasted into a step, then removed",
        after: |_, tasks| {
            let step = tasks.div_ceil(20) / 2;
            format!("step s{step} \"Stage {step} of {{count}}\" {{")
        },
        typed: "\n        task n1 \"New\" { after t3 }",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in the name of a step the next step waits for (a step renamed)",
        after: |_, tasks| format!("step s{}", waited_for_step(tasks)),
        typed: "x",
        leaves_mistake: true,
    },
];

/// The keystrokes in a plan with a template and an import
/// (`planc::generate::plan_source_with_reuse`), its library beside it.
const REUSE_KEYSTROKES: &[Keystroke] = &[
    Keystroke {
        name: "a letter in a template's task title (every instance's title changes)",
        after: |_, _| "task approve \"Get".to_owned(),
        typed: "x",
        leaves_mistake: false,
    },
    Keystroke {
        name: "a letter in a template's parameter name (its uses and its text then name none)",
        after: |_, _| "template review(change".to_owned(),
        typed: "x",
        leaves_mistake: true,
    },
    Keystroke {
        name: "a letter in the imported file's name (the import then fails)",
        after: |_, _| "import \"lib".to_owned(),
        typed: "x",
        leaves_mistake: true,
    },
];

/// A text typed letter by letter, then deleted letter by letter, as one
/// writes a new item: every keystroke of it is timed.
struct Typing {
    name: &'static str,
    /// Where it is typed: after the first occurrence of this text.
    after: fn(&str, usize) -> String,
    typed: &'static str,
}

const TYPINGS: &[Typing] = &[Typing {
    name: "typing a new task at the start of a step, then deleting it, letter by letter (each keystroke)",
    after: |_, tasks| {
        let step = tasks.div_ceil(20) / 2;
        format!("step s{step} \"Stage {step} of {{count}}\" {{")
    },
    typed: "\n        task n1 \"New\" { after t3 }",
}];

/// A step the next one waits for (`after s…`: every fifth step), near the
/// middle of the plan (its name's first occurrence is its own: the steps
/// with longer names that begin with it come after it).
fn waited_for_step(tasks: usize) -> usize {
    let steps = tasks.div_ceil(20);
    (steps / 2 / 5).max(1) * 5 - 1
}

/// A task others wait for, near the middle of the plan.
fn waited_for(text: &str) -> &str {
    planc::generate::waited_for_task(text).expect("an `after` in the plan's second half")
}

fn samples(tasks: usize) -> usize {
    match tasks {
        0..=2_000 => 200,
        2_001..=20_000 => 100,
        _ => 30,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!("| what | tasks | median | p90 |");
    println!("|---|---:|---:|---:|");
    for tasks in support::sizes(&[1_000, 10_000, 100_000]) {
        let text = planc::generate::plan_source(tasks, false);
        for keystroke in KEYSTROKES.iter().filter(|k| support::chosen(k.name)) {
            let (median, p90) = runtime.block_on(over_protocol(&text, tasks, keystroke));
            println!(
                "| keystroke → publishDiagnostics: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
                keystroke.name
            );
        }
        for typing in TYPINGS.iter().filter(|t| support::chosen(t.name)) {
            let (median, p90) = runtime.block_on(typing_over_protocol(&text, tasks, typing));
            println!(
                "| keystroke → publishDiagnostics: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
                typing.name
            );
        }
        for keystroke in KEYSTROKES.iter().filter(|k| support::chosen(k.name)) {
            let (median, p90) = recompile(&text, tasks, keystroke);
            println!(
                "| `Compilation::recompile` alone: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
                keystroke.name
            );
        }
        for typing in TYPINGS.iter().filter(|t| support::chosen(t.name)) {
            let (median, p90) = typing_recompiled(&text, tasks, typing);
            println!(
                "| `Compilation::recompile` alone: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
                typing.name
            );
        }
        if REUSE_KEYSTROKES.iter().any(|k| support::chosen(k.name)) {
            reuse_rows(&runtime, tasks);
        }
        let (median, p90) = whole(&text, tasks);
        println!("| whole compile (`planc::compile`), for comparison | {tasks} | {median:.2} ms | {p90:.2} ms |");
    }
}

/// Times keystrokes sent to the server, each until its diagnostics arrive.
async fn over_protocol(text: &str, tasks: usize, keystroke: &Keystroke) -> (f64, f64) {
    let after = (keystroke.after)(text, tasks);
    let (line, col) = find(text, &after, 0);
    let col = col + after.len() as u32;
    let mut client = TestClient::start().await;
    let published = client.open(text).await;
    assert_eq!(published["diagnostics"], serde_json::json!([]));
    let mut times = Vec::new();
    let warm_up = 4;
    for version in 2..(2 + warm_up + 2 * samples(tasks)) as i32 {
        // Type, or take back: the text stays the same size.
        let typing = version % 2 == 0;
        let started = Instant::now();
        if typing {
            client
                .edit(version, (line, col), (line, col), keystroke.typed)
                .await;
        } else {
            client
                .edit(
                    version,
                    (line, col),
                    typed_end(line, col, keystroke.typed),
                    "",
                )
                .await;
        }
        let published = loop {
            let published = client.diagnostics().await;
            if published["version"] == version {
                break published;
            }
        };
        let elapsed = started.elapsed();
        let found = published["diagnostics"].as_array().map_or(0, Vec::len);
        if keystroke.leaves_mistake {
            assert_eq!(found > 0, typing, "{published}");
        }
        if version as usize >= 2 + warm_up {
            times.push(elapsed);
        }
    }
    support::summary(times)
}

/// Where a text typed at `(line, col)` ends (line, UTF-16 column): what
/// taking it back deletes up to (a pasted line ends on the next line).
fn typed_end(line: u32, col: u32, typed: &str) -> (u32, u32) {
    let utf16 = |s: &str| s.encode_utf16().count() as u32;
    match typed.rfind('\n') {
        Some(at) => (
            line + typed.matches('\n').count() as u32,
            utf16(&typed[at + 1..]),
        ),
        None => (line, col + utf16(typed)),
    }
}

/// One keystroke of a typing: `start..end` (line, UTF-16 column) of the
/// text before it replaced by `inserted`, giving `text`.
struct Edit {
    start: (u32, u32),
    end: (u32, u32),
    inserted: String,
    text: String,
}

/// The edits of typing `typing.typed` into `text` and deleting it again,
/// letter by letter (the text typed is ASCII).
fn typing_edits(text: &str, tasks: usize, typing: &Typing) -> Vec<Edit> {
    let after = (typing.after)(text, tasks);
    let at = text.find(&after).expect("the place") + after.len();
    let (mut line, mut col) = find(text, &after, after.len() as u32);
    let mut positions = Vec::new();
    let mut edits = Vec::new();
    for (i, c) in typing.typed.char_indices() {
        let start = (line, col);
        if c == '\n' {
            (line, col) = (line + 1, 0);
        } else {
            col += 1;
        }
        positions.push((start, (line, col)));
        let typed = &typing.typed[..i + c.len_utf8()];
        let now = format!("{}{typed}{}", &text[..at], &text[at..]);
        edits.push(Edit {
            start,
            end: start,
            inserted: c.to_string(),
            text: now,
        });
    }
    for (i, &(start, end)) in positions.iter().enumerate().rev() {
        let now = format!("{}{}{}", &text[..at], &typing.typed[..i], &text[at..]);
        edits.push(Edit {
            start,
            end,
            inserted: String::new(),
            text: now,
        });
    }
    edits
}

/// Times each keystroke of typing a text and deleting it again, over the
/// protocol: as many rounds as give the samples, after one not timed.
async fn typing_over_protocol(text: &str, tasks: usize, typing: &Typing) -> (f64, f64) {
    let edits = typing_edits(text, tasks, typing);
    let mut client = TestClient::start().await;
    client.open(text).await;
    let mut times = Vec::new();
    let mut version = 1;
    let rounds = 1 + samples(tasks).div_ceil(edits.len());
    for round in 0..rounds {
        for (i, edit) in edits.iter().enumerate() {
            version += 1;
            let started = Instant::now();
            client
                .edit(version, edit.start, edit.end, &edit.inserted)
                .await;
            let published = loop {
                let published = client.diagnostics().await;
                if published["version"] == version {
                    break published;
                }
            };
            if round > 0 {
                times.push(started.elapsed());
            }
            // Typed whole, and deleted again: a plan without mistakes.
            if i == edits.len() / 2 - 1 || i == edits.len() - 1 {
                assert_eq!(
                    published["diagnostics"],
                    serde_json::json!([]),
                    "{published}"
                );
            }
        }
    }
    support::summary(times)
}

/// Times `Compilation::recompile` of each keystroke of typing a text and
/// deleting it again.
fn typing_recompiled(text: &str, tasks: usize, typing: &Typing) -> (f64, f64) {
    let options = planc::check::Options::default();
    let texts: Vec<Arc<str>> = typing_edits(text, tasks, typing)
        .into_iter()
        .map(|edit| Arc::from(edit.text))
        .collect();
    let mut compilation = planc::compile_shared("/bench/big.plan", Arc::from(text), &options);
    let mut times = Vec::new();
    let rounds = 1 + samples(tasks).div_ceil(texts.len());
    for round in 0..rounds {
        for next in &texts {
            let started = Instant::now();
            let recompiled = compilation.recompile(Arc::clone(next));
            if round > 0 {
                times.push(started.elapsed());
            }
            compilation = recompiled;
        }
    }
    support::summary(times)
}

/// Times `Compilation::recompile` of the same edits.
fn recompile(text: &str, tasks: usize, keystroke: &Keystroke) -> (f64, f64) {
    let options = planc::check::Options::default();
    let after = (keystroke.after)(text, tasks);
    let at = text.find(&after).expect("the place") + after.len();
    let typed: Arc<str> = Arc::from(format!("{}{}{}", &text[..at], keystroke.typed, &text[at..]));
    let plain: Arc<str> = Arc::from(text);
    let mut compilation = planc::compile_shared("/bench/big.plan", Arc::clone(&plain), &options);
    let mut times = Vec::new();
    for n in 0..2 * samples(tasks) {
        let next = if n % 2 == 0 { &typed } else { &plain };
        let started = Instant::now();
        let recompiled = compilation.recompile(Arc::clone(next));
        times.push(started.elapsed());
        // Dropping the old compilation is not timed: the server does it
        // after publishing.
        compilation = recompiled;
    }
    support::summary(times)
}

/// Times a whole compile of the text.
fn whole(text: &str, tasks: usize) -> (f64, f64) {
    let options = planc::check::Options::default();
    let text: Arc<str> = Arc::from(text);
    let times = (0..samples(tasks) / 2)
        .map(|_| {
            let started = Instant::now();
            let compilation = planc::compile_shared("/bench/big.plan", Arc::clone(&text), &options);
            let elapsed = started.elapsed();
            drop(compilation);
            elapsed
        })
        .collect();
    support::summary(times)
}

/// The rows of [`REUSE_KEYSTROKES`]: the plan with a template and an import
/// written to a directory of its own with its library, then each keystroke
/// over the protocol and `Compilation::recompile` alone.
fn reuse_rows(runtime: &tokio::runtime::Runtime, tasks: usize) {
    let text = planc::generate::plan_source_with_reuse(tasks);
    let dir = std::env::temp_dir().join(format!("planc-keystroke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("lib.plan"), planc::generate::REUSE_LIBRARY).unwrap();
    let path = dir.join("big.plan");
    std::fs::write(&path, &text).unwrap();
    let uri = format!("file://{}", path.display());
    for keystroke in REUSE_KEYSTROKES.iter().filter(|k| support::chosen(k.name)) {
        let (median, p90) = runtime.block_on(reuse_over_protocol(&uri, &text, tasks, keystroke));
        println!(
            "| keystroke → publishDiagnostics: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
            keystroke.name
        );
    }
    for keystroke in REUSE_KEYSTROKES.iter().filter(|k| support::chosen(k.name)) {
        let (median, p90) = reuse_recompile(&path.display().to_string(), &text, tasks, keystroke);
        println!(
            "| `Compilation::recompile` alone: {} | {tasks} | {median:.2} ms | {p90:.2} ms |",
            keystroke.name
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`over_protocol`] for a document at `uri` (whose imports are read
/// beside it).
async fn reuse_over_protocol(
    uri: &str,
    text: &str,
    tasks: usize,
    keystroke: &Keystroke,
) -> (f64, f64) {
    let after = (keystroke.after)(text, tasks);
    let (line, col) = find(text, &after, after.len() as u32);
    let mut client = TestClient::start().await;
    let published = client.open_as(uri, text).await;
    assert_eq!(
        published["diagnostics"],
        serde_json::json!([]),
        "{published}"
    );
    let mut times = Vec::new();
    let warm_up = 4;
    for version in 2..(2 + warm_up + 2 * samples(tasks)) as i32 {
        let typing = version % 2 == 0;
        let started = Instant::now();
        let (end, typed) = match typing {
            true => ((line, col), keystroke.typed),
            false => ((line, col + 1), ""),
        };
        client.edit_in(uri, version, (line, col), end, typed).await;
        let published = loop {
            let published = client.diagnostics().await;
            if published["version"] == version {
                break published;
            }
        };
        let elapsed = started.elapsed();
        let found = published["diagnostics"].as_array().map_or(0, Vec::len);
        if keystroke.leaves_mistake {
            assert_eq!(found > 0, typing, "{published}");
        } else {
            assert_eq!(found, 0, "{published}");
        }
        if version as usize >= 2 + warm_up {
            times.push(elapsed);
        }
    }
    support::summary(times)
}

/// [`recompile`] of a file at `path` (whose imports are read beside it).
fn reuse_recompile(path: &str, text: &str, tasks: usize, keystroke: &Keystroke) -> (f64, f64) {
    let options = planc::check::Options::default();
    let after = (keystroke.after)(text, tasks);
    let at = text.find(&after).expect("the place") + after.len();
    let typed: Arc<str> = Arc::from(format!("{}{}{}", &text[..at], keystroke.typed, &text[at..]));
    let plain: Arc<str> = Arc::from(text);
    let mut compilation = planc::compile_shared(path, Arc::clone(&plain), &options);
    assert_eq!(compilation.diagnostics, Vec::new());
    let mut times = Vec::new();
    for n in 0..2 * samples(tasks) {
        let next = if n % 2 == 0 { &typed } else { &plain };
        let started = Instant::now();
        let recompiled = compilation.recompile(Arc::clone(next));
        times.push(started.elapsed());
        compilation = recompiled;
    }
    support::summary(times)
}
