//! Requests in a large plan, over the real protocol: hover, completion,
//! go to definition, references, semantic tokens and the outline, sent to the
//! `planc-lsp` binary as JSON-RPC and timed until their response is read
//! whole (the client's parse of it is not timed: a `serde_json::Value` of a
//! large answer costs more than the server's work), at varied positions in
//! a plan from `planc::generate`.
//!
//! Each request is timed twice: with the file unchanged (the analysis
//! settled), and right after a keystroke (a letter typed in, or taken back
//! from, a task's title in the middle of the plan, then the request at
//! once; timed from the `didChange`, so a request that waits for the
//! analysis of the text as it is pays for the keystroke's compile too).
//!
//! Run with `cargo bench -p planc-lsp --bench requests` (release build);
//! `-- 10000` picks the sizes (default 10,000 and 100,000 tasks). Prints a
//! Markdown table of the median and the 90th percentile of 30 requests;
//! other words pick the requests whose names hold one (`-- 100000 hover`).
//! `semanticTokens/full/delta` is timed in turns, each request naming the
//! result id of the answer before it.

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

use std::time::{Duration, Instant};

use common::{at, find, position, TestClient, URI};
use serde_json::{json, Value};

/// How many requests of each kind are timed.
const SAMPLES: usize = 30;

/// One kind of request: its method and the parameters at the `i`-th of
/// [`SAMPLES`] places.
struct Request {
    name: &'static str,
    method: &'static str,
    params: fn(&Places, usize) -> Value,
    /// What a right answer holds: checked on every response.
    check: fn(&Value) -> bool,
}

/// Positions in the plan the requests are sent at, [`SAMPLES`] of each.
struct Places {
    /// Inside a name in an `after` (a reference to a task others wait for).
    references: Vec<(u32, u32)>,
    /// Just after the name in an `after`, where more names may be typed.
    after_list_ends: Vec<(u32, u32)>,
    /// Inside the name of a task's definition.
    definitions: Vec<(u32, u32)>,
    /// At the start of a new line inside a step, where an item is typed.
    new_items: Vec<(u32, u32)>,
    /// The definition of a task many others wait for.
    waited_for: (u32, u32),
}

fn places(text: &str) -> Places {
    let afters: Vec<usize> = text
        .match_indices(" after t")
        .map(|(i, _)| i + " after ".len())
        .collect();
    let tasks: Vec<usize> = text
        .match_indices("task t")
        .map(|(i, _)| i + "task ".len())
        .collect();
    let steps: Vec<usize> = text
        .match_indices("\" {\n")
        .filter(|(i, _)| {
            text[..*i]
                .rfind('\n')
                .is_some_and(|l| text[l..].starts_with("\n    step "))
        })
        .map(|(i, _)| i + "\" {\n".len())
        .collect();
    let spread = |all: &[usize], shift: usize| -> Vec<(u32, u32)> {
        (0..SAMPLES)
            .map(|k| position(text, all[(2 * k + 1) * all.len() / (2 * SAMPLES)] + shift))
            .collect()
    };
    let name_end = |at: usize| {
        at + text[at..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap()
    };
    let ends: Vec<usize> = afters.iter().map(|&a| name_end(a)).collect();
    let waited_for = planc::generate::waited_for_task(text).unwrap();
    let mut places = Places {
        references: spread(&afters, 1),
        after_list_ends: spread(&ends, 0),
        definitions: spread(&tasks, 1),
        new_items: spread(&steps, 0),
        waited_for: find(
            text,
            &format!("task {waited_for} "),
            "task ".len() as u32 + 1,
        ),
    };
    // A new line at the start of a step holds its first item: the cursor
    // stands in its indentation, before the item.
    for place in &mut places.new_items {
        place.1 = 8;
    }
    places
}

fn text_document() -> Value {
    json!({ "textDocument": { "uri": URI } })
}

const REQUESTS: &[Request] = &[
    Request {
        name: "hover on a task's name in an `after`",
        method: "textDocument/hover",
        params: |p, i| at(p.references[i].0, p.references[i].1),
        check: |r| {
            r["contents"]["value"]
                .as_str()
                .is_some_and(|s| s.starts_with("**task**"))
        },
    },
    Request {
        name: "hover on a task's definition",
        method: "textDocument/hover",
        params: |p, i| at(p.definitions[i].0, p.definitions[i].1),
        check: |r| {
            r["contents"]["value"]
                .as_str()
                .is_some_and(|s| s.starts_with("**task**"))
        },
    },
    Request {
        name: "completion at the end of an `after` list (names holding the typed letters, cut at 1,000)",
        method: "textDocument/completion",
        params: |p, i| at(p.after_list_ends[i].0, p.after_list_ends[i].1),
        check: |r| {
            r["isIncomplete"] == true
                && r["items"]
                    .as_array()
                    .is_some_and(|items| !items.is_empty() && items.len() <= 1000)
        },
    },
    Request {
        name: "completion at a new item in a step (keywords)",
        method: "textDocument/completion",
        params: |p, i| at(p.new_items[i].0, p.new_items[i].1),
        check: |r| {
            r.as_array()
                .is_some_and(|items| items.iter().any(|item| item["label"] == "task"))
        },
    },
    Request {
        name: "definition of a task's name in an `after`",
        method: "textDocument/definition",
        params: |p, i| at(p.references[i].0, p.references[i].1),
        check: |r| r["range"]["start"]["line"].is_u64(),
    },
    Request {
        name: "references of a task named in an `after` (with its declaration)",
        method: "textDocument/references",
        params: |p, i| {
            let mut params = at(p.references[i].0, p.references[i].1);
            params["context"] = json!({ "includeDeclaration": true });
            params
        },
        check: |r| r.as_array().is_some_and(|l| l.len() >= 2),
    },
    Request {
        name: "references of the task the middle's `after` names, from its definition",
        method: "textDocument/references",
        params: |p, _| {
            let mut params = at(p.waited_for.0, p.waited_for.1);
            params["context"] = json!({ "includeDeclaration": true });
            params
        },
        check: |r| r.as_array().is_some_and(|l| l.len() >= 2),
    },
    Request {
        name: "semanticTokens/full",
        method: "textDocument/semanticTokens/full",
        params: |_, _| text_document(),
        check: |r| r["data"].as_array().is_some_and(|d| d.len() > 1000),
    },
    Request {
        name: "semanticTokens/range (60 lines, as an editor's screen)",
        method: "textDocument/semanticTokens/range",
        params: |p, i| {
            let line = p.definitions[i].0;
            let start = json!({ "line": line.saturating_sub(30), "character": 0 });
            let end = json!({ "line": line + 30, "character": 0 });
            json!({ "textDocument": { "uri": URI }, "range": { "start": start, "end": end } })
        },
        check: |r| r["data"].as_array().is_some_and(|d| !d.is_empty() && d.len() < 5 * 1000),
    },
    Request {
        name: "documentSymbol (the outline)",
        method: "textDocument/documentSymbol",
        params: |_, _| text_document(),
        check: |r| r.as_array().is_some_and(|s| !s.is_empty()),
    },
];

/// A size in bytes, in kB or MB.
fn size_text(bytes: usize) -> String {
    match bytes {
        0..=9_999 => format!("{bytes} B"),
        10_000..=9_999_999 => format!("{} kB", bytes / 1000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!("| request | tasks | response | unchanged: median | p90 | after a keystroke: median | p90 |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for tasks in support::sizes(&[10_000, 100_000]) {
        let text = planc::generate::plan_source(tasks, false);
        let places = places(&text);
        runtime.block_on(async {
            let mut client = TestClient::start().await;
            let published = client.open(&text).await;
            assert_eq!(published["diagnostics"], json!([]));
            let title = find(&text, &format!("task t{} \"Do", tasks / 2), 0);
            let title = (
                title.0,
                title.1 + format!("task t{} \"Do", tasks / 2).len() as u32,
            );
            let mut version = 1;
            for request in REQUESTS.iter().filter(|r| support::chosen(r.name)) {
                let mut size = 0;
                let unchanged = settled(&mut client, &places, request, &mut size).await;
                let edited =
                    after_keystroke(&mut client, &places, request, title, &mut version).await;
                let ((m1, p1), (m2, p2)) = (support::summary(unchanged), support::summary(edited));
                println!(
                    "| {} | {tasks} | {} | {m1:.2} ms | {p1:.2} ms | {m2:.2} ms | {p2:.2} ms |",
                    request.name,
                    size_text(size)
                );
            }
            if support::chosen(DELTA) {
                let (unchanged, edited, size) = delta(&mut client, title, &mut version).await;
                let ((m1, p1), (m2, p2)) = (support::summary(unchanged), support::summary(edited));
                println!(
                    "| {DELTA} | {tasks} | {} | {m1:.2} ms | {p1:.2} ms | {m2:.2} ms | {p2:.2} ms |",
                    size_text(size)
                );
            }
        });
    }
}

/// The row of [`delta`].
const DELTA: &str = "semanticTokens/full/delta (naming the last answer's result id)";

/// Times `semanticTokens/full/delta` requests, each naming the result id
/// of the answer before it: with the file unchanged, and right after a
/// keystroke (from the `didChange` to the response, as [`after_keystroke`]).
/// Returns those times and the largest answer's size.
async fn delta(
    client: &mut TestClient,
    (line, col): (u32, u32),
    version: &mut i32,
) -> (Vec<Duration>, Vec<Duration>, usize) {
    let full = client
        .result("textDocument/semanticTokens/full", text_document())
        .await;
    let mut last = full["resultId"].clone();
    let mut largest = 0;
    let ask = async |client: &mut TestClient, last: &mut Value| {
        let params = json!({ "textDocument": { "uri": URI }, "previousResultId": last });
        let body = client
            .request_unparsed("textDocument/semanticTokens/full/delta", params)
            .await;
        let arrived = Instant::now();
        let response: Value = serde_json::from_slice(&body).unwrap();
        assert!(response["result"]["edits"].is_array(), "{response}");
        *last = response["result"]["resultId"].clone();
        (arrived, body.len())
    };
    let mut unchanged = Vec::new();
    for i in 0..SAMPLES + 2 {
        let started = Instant::now();
        let (arrived, size) = ask(client, &mut last).await;
        if i >= 2 {
            unchanged.push(arrived - started);
        }
        largest = largest.max(size);
    }
    let mut edited = Vec::new();
    for i in 0..SAMPLES + 2 {
        *version += 1;
        let started = Instant::now();
        if *version % 2 == 0 {
            client.edit(*version, (line, col), (line, col), "x").await;
        } else {
            client
                .edit(*version, (line, col), (line, col + 1), "")
                .await;
        }
        let (arrived, size) = ask(client, &mut last).await;
        loop {
            if client.diagnostics().await["version"] == *version {
                break;
            }
        }
        if i >= 2 {
            edited.push(arrived - started);
        }
        largest = largest.max(size);
    }
    (unchanged, edited, largest)
}

/// Sends the request and returns when its response had arrived (read
/// whole, not parsed) and its size in bytes; its result is then parsed and
/// checked, not timed.
async fn answer(client: &mut TestClient, request: &Request, params: Value) -> (Instant, usize) {
    let body = client.request_unparsed(request.method, params).await;
    let arrived = Instant::now();
    let response: Value = serde_json::from_slice(&body).unwrap();
    let result = &response["result"];
    assert!((request.check)(result), "{}: {response}", request.name);
    (arrived, body.len())
}

/// Times the request at each place, the file unchanged, after two not
/// timed; `largest` becomes the largest response's size in bytes.
async fn settled(
    client: &mut TestClient,
    places: &Places,
    request: &Request,
    largest: &mut usize,
) -> Vec<Duration> {
    for i in 0..2 {
        answer(client, request, (request.params)(places, i)).await;
    }
    let mut times = Vec::new();
    for i in 0..SAMPLES {
        let params = (request.params)(places, i);
        let started = Instant::now();
        let (arrived, size) = answer(client, request, params).await;
        times.push(arrived - started);
        *largest = size.max(*largest);
    }
    times
}

/// Times a keystroke then the request at each place, from the `didChange`
/// to the response; the keystroke's diagnostics are awaited (not timed)
/// before the next.
async fn after_keystroke(
    client: &mut TestClient,
    places: &Places,
    request: &Request,
    (line, col): (u32, u32),
    version: &mut i32,
) -> Vec<Duration> {
    let mut times = Vec::new();
    for i in 0..SAMPLES + 2 {
        *version += 1;
        let params = (request.params)(places, i % SAMPLES);
        let started = Instant::now();
        if *version % 2 == 0 {
            client.edit(*version, (line, col), (line, col), "x").await;
        } else {
            client
                .edit(*version, (line, col), (line, col + 1), "")
                .await;
        }
        let (arrived, _) = answer(client, request, params).await;
        let elapsed = arrived - started;
        loop {
            if client.diagnostics().await["version"] == *version {
                break;
            }
        }
        if i >= 2 {
            times.push(elapsed);
        }
    }
    times
}
