//! Step detection (seed 003) measured on the labelled transcripts of
//! `tests/steps_corpus`: round accuracy, and the precision and recall of
//! step advances, for planc's `observe` and for the steps system's naive
//! rule, on the dev part (the rule was developed on it: `d*`, `h*`, `n*`
//! and `m*`, each also shown alone, so a change is judged on the parts it
//! was not made from: cross-validation by part) and on the held-out part
//! (`p*`, written blind, never tuned against; absent until it lands). Not
//! a timing: the figures are the same in any build.
//!
//! Run: `cargo bench --bench steps` (or, without an optimised build,
//! `cargo test --bench steps`); the table is in docs/performance.md.
//! `STEPS_DETAILS=1` also lists planc's wrong rounds on the dev part
//! (`STEPS_DETAILS=m`: only of transcripts whose id starts with `m`);
//! `STEPS_WHY=1` counts planc's advances on it by what made them.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../tests/steps_corpus/eval.rs"]
mod eval;

use eval::{load, naive_steps, planc_steps, score_all, Score, Transcript};

/// A way to read a transcript: the step after each round.
type Rule = fn(&Transcript) -> Vec<usize>;

fn main() {
    let dev = load("dev");
    let of = |prefixes: &[char]| -> Vec<Transcript> {
        load("dev")
            .into_iter()
            .filter(|t| t.id.starts_with(prefixes))
            .collect()
    };
    let parts = [
        ("dev", dev),
        ("dev: d", of(&['d'])),
        ("dev: h", of(&['h'])),
        ("dev: n", of(&['n'])),
        ("dev: m", of(&['m'])),
        ("held-out", load("heldout")),
    ];
    println!("| part | rule | transcripts | rounds | round accuracy | advance precision | advance recall | advances (labelled / made / right) |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    for (name, transcripts) in parts.iter().filter(|(_, t)| !t.is_empty()) {
        let rules: [(&str, Rule); 2] = [("planc", planc_steps), ("seed 003 (naive)", naive_steps)];
        for (rule, steps) in rules {
            row(name, rule, transcripts.len(), score_all(transcripts, steps));
        }
    }
    if std::env::var_os("STEPS_WHY").is_some() {
        why(&parts[0].1);
    }
    if let Some(only) = std::env::var_os("STEPS_DETAILS") {
        let only = only.to_string_lossy().into_owned();
        let only = if only == "1" { String::new() } else { only };
        details(&parts[0].1, &only);
    }
}

fn row(part: &str, rule: &str, transcripts: usize, s: Score) {
    println!(
        "| {part} | {rule} | {transcripts} | {} | {:.3} | {:.3} | {:.3} | {} / {} / {} |",
        s.rounds,
        s.accuracy(),
        s.precision(),
        s.recall(),
        s.gold,
        s.predicted,
        s.hits
    );
}

/// planc's wrong rounds of the dev transcripts whose id starts with
/// `only` (the held-out part is never read round by round).
fn details(transcripts: &[Transcript], only: &str) {
    for t in transcripts.iter().filter(|t| t.id.starts_with(only)) {
        if std::env::var_os("STEPS_DEBUG").is_some() {
            eprintln!("DEBUG {}", t.id);
        }
        let steps = planc_steps(t);
        for (i, (round, got)) in t.rounds.iter().zip(&steps).enumerate() {
            if round.step != *got {
                let calls: Vec<&str> = round.tool_calls.iter().map(|c| c.name.as_str()).collect();
                println!(
                    "{} round {}: labelled {}, planc {} | {:?} {:?}",
                    t.id,
                    i + 1,
                    round.step,
                    got,
                    round.text.chars().take(110).collect::<String>(),
                    calls
                );
            }
        }
    }
}

/// planc's step advances on the dev part, by what made them (a marker, a
/// transition word, a done cue, a step number, tool calls, a final
/// answer, the fallback): how many it made and how many came in a round
/// where the labels advance; and each one that did not.
fn why(transcripts: &[Transcript]) {
    use planc::runner::{observe_reply, plan_for_reply, Caller, OpResult, Runner};
    let mut tally: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for t in transcripts {
        let caller = Caller::default();
        let mut runner: Option<Runner> = None;
        let mut before = 0;
        for round in &t.rounds {
            let reply = round.reply();
            if runner.is_none() {
                runner = plan_for_reply("corpus".to_owned(), &reply, Some(&t.goal))
                    .map(|doc| Runner::new(doc).unwrap());
            }
            let matched = runner.as_mut().and_then(|r| {
                match observe_reply(r, &reply, &caller).map(|applied| applied.data) {
                    Ok(OpResult::Observed(observed)) => observed.matched,
                    _ => None,
                }
            });
            if let Some(matched) = matched {
                let kind = if matched.starts_with("tool ") {
                    "tool calls".to_owned()
                } else if matched.chars().count() > 12 {
                    "step number".to_owned()
                } else {
                    matched.to_lowercase()
                };
                let right = round.step > before;
                let entry = tally.entry(kind.clone()).or_default();
                entry.0 += 1;
                entry.1 += usize::from(right);
                if !right {
                    let text: String = round.text.chars().take(100).collect();
                    println!("wrong ({kind}): {} {text:?}", t.id);
                }
            }
            before = round.step;
        }
    }
    for (kind, (made, right)) in tally {
        println!("{kind}: {right} of {made} right");
    }
}
