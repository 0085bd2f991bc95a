//! The labelled transcripts of seed 003's step detection
//! (`tests/steps_corpus`, docs/performance.md#step-detection-seed-003):
//! the labels are well formed, the corpus has what it claims (size, a
//! held-out part of at least [`MIN_HELDOUT`], both
//! languages, four kinds of agent, hard negatives), and planc's figures on
//! each dev part do not fall below their floors.
//!
//! The dev part is `d*`, `h*`, `n*`, `m*` and `p*` (every transcript the
//! rule has been measured on round by round; `m*` and `p*` were held-out
//! parts until each was measured once); the held-out part is `q*`, written
//! blind and never read by whoever tunes the rule (40 transcripts,
//! `q01`–`q40`, measured once with the rule of 2026-11-29). It is
//! required: a missing or short held-out part fails.

#[path = "../steps_corpus/eval.rs"]
mod eval;

use eval::{load, naive_steps, planc_steps, score_all, Transcript, NAIVE_WORDS};

/// The steps declared by `[Step]` lines so far, after each round (read as
/// planc reads them, list items too; a restated step counted once).
fn declared(t: &Transcript) -> Vec<usize> {
    let mut seen: Vec<String> = Vec::new();
    t.rounds
        .iter()
        .map(|round| {
            for step in planc::runner::step_lines(&round.text) {
                let step = step.to_lowercase();
                if !seen.contains(&step) {
                    seen.push(step);
                }
            }
            seen.len()
        })
        .collect()
}

/// The fewest held-out transcripts the corpus claims.
const MIN_HELDOUT: usize = 30;

/// The held-out part (`q*`), at least [`MIN_HELDOUT`] transcripts.
fn heldout() -> Vec<Transcript> {
    let heldout = load("heldout");
    assert!(
        heldout.len() >= MIN_HELDOUT,
        "{} held-out transcripts: the held-out part (p*) holds at least {MIN_HELDOUT}",
        heldout.len()
    );
    heldout
}

/// The dev transcripts whose id starts with one of `prefixes`.
fn dev_part(prefixes: &[char]) -> Vec<Transcript> {
    load("dev")
        .into_iter()
        .filter(|t| t.id.starts_with(prefixes))
        .collect()
}

fn check_labels(part: &str, t: &Transcript) {
    let what = format!("{part}/{}", t.id);
    assert!(
        if part == "dev" {
            t.id.starts_with(['d', 'h', 'n', 'm', 'p'])
        } else {
            t.id.starts_with('q')
        },
        "{what}: dev ids start with d, h, n, m or p, held-out ones with q"
    );
    assert!(["en", "zh"].contains(&t.language.as_str()), "{what}");
    assert!(
        ["browser", "coding", "research", "data"].contains(&t.agent.as_str()),
        "{what}: agent {}",
        t.agent
    );
    assert!(!t.goal.is_empty() && t.rounds.len() >= 4, "{what}");
    let declared = declared(t);
    let mut before = 0;
    for (i, (round, steps)) in t.rounds.iter().zip(&declared).enumerate() {
        let at = format!("{what} round {}", i + 1);
        assert!(round.step >= before, "{at}: the step goes back");
        assert!(
            round.step <= steps + 1,
            "{at}: step {} of {steps}",
            round.step
        );
        assert_eq!(
            round.step == 0,
            *steps == 0,
            "{at}: step 0 is before any step"
        );
        assert!(
            round.step == 0 || round.step <= *steps + 1,
            "{at}: no such step"
        );
        for call in &round.tool_calls {
            assert!(!call.name.is_empty() && call.arguments.is_object(), "{at}");
        }
        before = round.step;
    }
    assert!(
        t.rounds.last().map_or(0, |r| r.step) >= 2,
        "{what}: the agent never leaves its first step"
    );
}

/// Rounds that hold one of the steps system's transition words and yet stay
/// on their step.
fn hard_negatives(transcripts: &[Transcript]) -> usize {
    transcripts
        .iter()
        .flat_map(|t| t.rounds.windows(2))
        .filter(|pair| {
            let lower = pair[1].text.to_lowercase();
            pair[1].step == pair[0].step && NAIVE_WORDS.iter().any(|w| lower.contains(w))
        })
        .count()
}

#[test]
fn the_corpus_is_labelled_and_holds_what_it_claims() {
    let dev = load("dev");
    let heldout = heldout();
    for (part, transcripts) in [("dev", &dev), ("heldout", &heldout)] {
        for t in transcripts {
            check_labels(part, t);
        }
    }
    let all: Vec<&Transcript> = dev.iter().chain(&heldout).collect();
    assert!(all.len() >= 60, "{} transcripts", all.len());
    assert!(
        hard_negatives(&heldout) >= 20,
        "{}",
        hard_negatives(&heldout)
    );
    let mut ids: Vec<&str> = all.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "ids are unique");
    for language in ["en", "zh"] {
        for agent in ["browser", "coding", "research", "data"] {
            assert!(
                all.iter()
                    .any(|t| t.language == language && t.agent == agent),
                "no {language} {agent} transcript"
            );
        }
    }
    assert!(hard_negatives(&dev) >= 30, "{}", hard_negatives(&dev));
}

/// planc's floors on one dev part: accuracy, precision, recall.
fn holds(part: &[Transcript], floors: [f64; 3]) {
    let planc = score_all(part, planc_steps);
    let got = [planc.accuracy(), planc.precision(), planc.recall()];
    for (got, floor) in got.iter().zip(floors) {
        assert!(*got >= floor, "{floors:?}: {planc:?}");
    }
}

/// planc's figures on the dev part (the rule was developed on it) must not
/// fall below their floors (accuracy, precision, recall): on `d*` and `h*`
/// ≥ 0.92 / 0.95 / 0.90; on `d*`, `h*` and `n*` ≥ 0.88 / 0.95 / 0.88 (`n*`
/// was written blind to the rule, then studied); on `m*` ≥ 0.61 / 0.69 /
/// 0.50 and on `p*` ≥ 0.59 / 0.85 / 0.52 (both measured blind once, then
/// studied; far below the targets 0.95 / 0.95 / 0.90: see
/// docs/performance.md). And planc beats the steps system's naive rule on
/// every figure, on every part (`d`, `h`, `n`, `m`, `p`, and the held-out
/// `q*`).
#[test]
fn plancs_step_detection_holds_its_figures() {
    holds(&dev_part(&['d', 'h']), [0.92, 0.95, 0.90]);
    holds(&dev_part(&['d', 'h', 'n']), [0.88, 0.95, 0.88]);
    holds(&dev_part(&['m']), [0.61, 0.69, 0.50]);
    holds(&dev_part(&['p']), [0.59, 0.85, 0.52]);
    let parts = ['d', 'h', 'n', 'm', 'p'].map(|p| dev_part(&[p]));
    for part in parts.into_iter().chain([heldout()]) {
        let (ours, naive) = (score_all(&part, planc_steps), score_all(&part, naive_steps));
        assert!(ours.accuracy() > naive.accuracy(), "{ours:?} {naive:?}");
        assert!(ours.precision() > naive.precision(), "{ours:?} {naive:?}");
        assert!(ours.recall() > naive.recall(), "{ours:?} {naive:?}");
    }
}
