//! Step detection (seed 003) measured on the labelled transcripts of
//! `tests/steps_corpus`: round accuracy, and the precision and recall of
//! step advances, for planc's `observe` and for the steps system's naive
//! rule, on the dev part (the rule was developed on it: `d*`, `h*`, `n*`,
//! `m*` and `p*`, each also shown alone, so a change is judged on the parts
//! it was not made from: cross-validation by part) and on the held-out part
//! (`q*`, written blind, never read, measured once). Not
//! a timing: the figures are the same in any build.
//!
//! Run: `cargo bench --bench steps` (or, without an optimised build,
//! `cargo test --bench steps`); the table is in docs/performance.md.
//! `STEPS_DETAILS=1` also lists planc's wrong rounds on the dev part
//! (`STEPS_DETAILS=m`: only of transcripts whose id starts with `m`);
//! `STEPS_WHY=1` counts planc's advances on it by what made them;
//! `STEPS_TRACE=p12` shows each round of the dev transcripts whose id
//! starts with `p12`: the labels, planc's step and what observe did.
//! `STEPS_SCORING=m` (or `d`, `h`, `n`, `p`) fits the prototype scoring rule
//! of `tests/steps_corpus/scoring.rs` on the other dev parts and prints
//! it beside planc on each, the part left out being the one that tells
//! (about 100 s in debug).

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../tests/steps_corpus/eval.rs"]
mod eval;
#[path = "../tests/steps_corpus/scoring.rs"]
mod scoring;

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
        ("dev: p", of(&['p'])),
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
    if let Some(left) = std::env::var_os("STEPS_SCORING") {
        // The part left out of the fit (`m` unless another is named).
        let left = left
            .to_string_lossy()
            .chars()
            .next()
            .filter(|c| "dhnmp".contains(*c));
        let left = format!("dev: {}", left.unwrap_or('m'));
        let (check, fit): (Vec<_>, Vec<_>) =
            parts[1..6].iter().partition(|(name, _)| *name == left);
        scoring_search(&fit, &check);
    }
    if std::env::var_os("STEPS_WHY").is_some() {
        why(&parts[0].1);
    }
    if let Some(id) = std::env::var_os("STEPS_TRACE") {
        trace(&parts[0].1, &id.to_string_lossy());
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

/// Each round of the dev transcripts whose id starts with `only`: the
/// labelled step, planc's, the rounds planc had counted on its step and
/// what observe did (its actions).
fn trace(transcripts: &[Transcript], only: &str) {
    use planc::runner::{observe_reply, plan_for_reply, Caller, OpResult, Runner};
    for t in transcripts.iter().filter(|t| t.id.starts_with(only)) {
        let caller = Caller::default();
        let mut runner: Option<Runner> = None;
        let steps = planc_steps(t);
        println!("{}", t.id);
        for (i, (round, got)) in t.rounds.iter().zip(&steps).enumerate() {
            let reply = round.reply();
            if runner.is_none() {
                runner = plan_for_reply("corpus".to_owned(), &reply, Some(&t.goal))
                    .map(|doc| Runner::new(doc).unwrap());
            }
            let observed = runner.as_mut().and_then(|r| {
                match observe_reply(r, &reply, &caller).map(|applied| applied.data) {
                    Ok(OpResult::Observed(observed)) => Some(observed),
                    _ => None,
                }
            });
            let (rounds, actions) =
                observed.map_or((0, Vec::new()), |o| (o.step_rounds, o.actions));
            let mark = if round.step == *got { ' ' } else { '!' };
            let text: String = round.text.chars().take(90).collect();
            println!(
                "{mark} {:>2}: labelled {} planc {got} rounds {rounds} | {text:?} | {actions:?}",
                i + 1,
                round.step
            );
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

/// The scoring rule's figures on `transcripts` with `weights`.
fn scoring_score(transcripts: &[Transcript], weights: scoring::Weights) -> Score {
    let mut total = Score::default();
    for t in transcripts {
        let gold: Vec<usize> = t.rounds.iter().map(|r| r.step).collect();
        total.add(Score::of(&gold, &scoring::scoring_steps(t, weights)));
    }
    total
}

/// Chooses the scoring rule's weights on the parts `fit` (the best mean
/// of accuracy, precision and recall over them together), then prints its
/// figures on every part beside planc's: those of `check`, left out of
/// the fit, are the ones that say how it generalises.
fn scoring_search(fit: &[&(&str, Vec<Transcript>)], check: &[&(&str, Vec<Transcript>)]) {
    let fitted: Vec<&Transcript> = fit.iter().flat_map(|(_, t)| t.iter()).collect();
    let grid = [0.0, 0.5, 1.0, 2.0];
    let cues = [0.0, 0.25, 0.5, 1.0];
    let mut best: Option<(f64, scoring::Weights)> = None;
    for text in grid {
        for calls in grid {
            for done in cues {
                for transition in cues {
                    for threshold in [0.1, 0.25, 0.5, 0.75, 1.0, 1.5] {
                        let w = scoring::Weights {
                            text,
                            calls,
                            done,
                            transition,
                            threshold,
                        };
                        let mut s = Score::default();
                        for t in &fitted {
                            let gold: Vec<usize> = t.rounds.iter().map(|r| r.step).collect();
                            s.add(Score::of(&gold, &scoring::scoring_steps(t, w)));
                        }
                        let value = (s.accuracy() + s.precision() + s.recall()) / 3.0;
                        if best.is_none_or(|(b, _)| value > b) {
                            best = Some((value, w));
                        }
                    }
                }
            }
        }
    }
    let Some((_, w)) = best else { return };
    let names: Vec<&str> = fit.iter().map(|(name, _)| *name).collect();
    println!("scoring rule, weights chosen on {names:?}: {w:?}");
    for (name, transcripts) in fit.iter().chain(check.iter()).copied() {
        let rule = if check.iter().any(|(n, _)| n == name) {
            "scoring (left out of the fit)"
        } else {
            "scoring (fitted)"
        };
        row(name, rule, transcripts.len(), scoring_score(transcripts, w));
        row(
            name,
            "planc",
            transcripts.len(),
            score_all(transcripts, planc_steps),
        );
    }
}
