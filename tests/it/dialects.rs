//! The dialects' worked examples in docs/agents.md are real: each example
//! block is replayed against a fresh state through the same calls `planc
//! mcp --dialect D` makes, and every answer must be the one the document
//! shows. `PLANC_UPDATE_DOCS=1 cargo test --test it dialects::` rewrites the
//! answers (then read `git diff docs/agents.md`).
//!
//! A block looks like this (the info string names the dialect, and the plan
//! the state is made from, if any):
//!
//! ````text
//! ```text dialect=tasks plan=examples/jd_keyboard.plan
//! startNextTask {}
//! → {"id":1,…}
//! ```
//! ````
//!
//! A line `NAME ARGUMENTS` is a call; the line after it is its answer: `→`
//! and the structured content, or `✗` and the content of a refused call
//! (`isError`).

use std::path::Path;

use crate::support::Test;
use planc::mcp::Dialect;
use planc::runner::Store;
use serde_json::Value;

const DOC: &str = "docs/agents.md";

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

/// Replays one example; returns its lines with the actual answers.
fn replay(info: &str, lines: &[&str]) -> Vec<String> {
    let mut dialect = None;
    let mut plan = None;
    for word in info.split_whitespace() {
        if let Some(name) = word.strip_prefix("dialect=") {
            dialect = Dialect::from_name(name);
        }
        if let Some(path) = word.strip_prefix("plan=") {
            plan = Some(path);
        }
    }
    let dialect = dialect.unwrap_or_else(|| panic!("{DOC}: no dialect in `{info}`"));
    let t = Test::temp();
    if let Some(plan) = plan {
        t.ok(&["init", &repo(plan), "-o", "state.json"]);
    }
    let store = Store::new(t.dir().join("state.json"));
    let mut out = Vec::new();
    for line in lines {
        if line.starts_with('→') || line.starts_with('✗') {
            continue;
        }
        out.push((*line).to_owned());
        let (name, arguments) = line.split_once(' ').unwrap_or((line, "{}"));
        let arguments: Value = serde_json::from_str(arguments)
            .unwrap_or_else(|e| panic!("{DOC}: bad arguments in `{line}`: {e}"));
        let outcome = dialect
            .call(&store, name, arguments)
            .unwrap_or_else(|| panic!("{DOC}: the {info} dialect has no tool `{name}`"));
        let mark = if outcome.is_error { '✗' } else { '→' };
        out.push(format!(
            "{mark} {}",
            seed_plan_ids(&outcome.content.to_string())
        ));
    }
    out
}

/// The steps system's plan ids (`plan_<ms>`, the time the plan was made)
/// as the seed's own example writes one, so the answers do not change with
/// the clock.
fn seed_plan_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"plan_") {
        let digits = rest[at + 6..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        out.push_str(&rest[..at + 6]);
        if digits == 13 && rest[at + 6 + digits..].starts_with('"') {
            out.push_str("1771945970128");
        } else {
            out.push_str(&rest[at + 6..at + 6 + digits]);
        }
        rest = &rest[at + 6 + digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_worked_examples_in_the_agents_doc_are_true() {
    let path = repo(DOC);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    let mut examples = Vec::new();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(info) = line.strip_prefix("```text dialect=") else {
            continue;
        };
        let info = format!("dialect={info}");
        let mut block = Vec::new();
        for line in lines.by_ref() {
            if line == "```" {
                break;
            }
            block.push(line);
        }
        for line in replay(&info, &block) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("```\n");
        examples.push(info);
    }
    for (name, _) in Dialect::ALL {
        assert!(
            examples
                .iter()
                .any(|e| e.split_whitespace().next() == Some(&format!("dialect={name}"))),
            "{DOC} has no worked example of the {name} dialect"
        );
    }
    if std::env::var_os("PLANC_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &out).unwrap();
    } else if out != text {
        let diff: Vec<String> = text
            .lines()
            .zip(out.lines())
            .filter(|(a, b)| a != b)
            .take(5)
            .map(|(a, b)| format!("document: {a}\n  actual: {b}"))
            .collect();
        panic!(
            "{DOC}: the worked examples answer otherwise (PLANC_UPDATE_DOCS=1 rewrites them):\n{}",
            diff.join("\n")
        );
    }
}
