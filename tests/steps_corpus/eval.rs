//! The labelled transcripts of `tests/steps_corpus` and how step detection
//! is scored on them: planc's `observe` (the real code path, on a runner in
//! memory) against the steps system's naive rule. Shared by the benchmark
//! (`benches/steps.rs`, which prints the table) and the corpus test
//! (`tests/it/steps_corpus.rs`, which checks the labels and holds planc to
//! its targets on the dev part).
//!
//! A transcript is one JSON file: `{id, language: "en"|"zh", agent:
//! "browser"|"coding"|"research"|"data", goal, note?, rounds: [{text,
//! tool_calls: [{name, arguments}], step}]}`. `step` is the step the agent
//! works on after the round (1-based, in the order the `[Step]` lines
//! declare them; 0 before any step is declared; one more than the steps
//! when all are done).

#![allow(dead_code)] // the benchmark and the test each use a part

use std::path::{Path, PathBuf};

use planc::document::{PlanDocument, TaskStatus};
use planc::runner::{observe_reply, plan_for_reply, Caller, Reply, Runner, ToolCall};
use serde::Deserialize;
use serde_json::Value;

/// One transcript of an agent's work.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// The file's name without `.json`.
    pub id: String,
    /// `en` or `zh`.
    pub language: String,
    /// `browser`, `coding`, `research` or `data`.
    pub agent: String,
    /// The user's goal.
    pub goal: String,
    /// Why a label is what it is, where that is not plain.
    #[serde(default)]
    pub note: Option<String>,
    /// The agent's replies, in order.
    pub rounds: Vec<Round>,
}

/// One reply and its label.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// What the agent wrote.
    pub text: String,
    /// The tools it called.
    pub tool_calls: Vec<Call>,
    /// The step it works on after this reply.
    pub step: usize,
}

/// One tool call of a round.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

impl Round {
    /// The round as the runner reads it.
    pub fn reply(&self) -> Reply {
        Reply {
            text: self.text.clone(),
            tool_calls: self
                .tool_calls
                .iter()
                .map(|c| ToolCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
        }
    }
}

/// The corpus directory.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/steps_corpus")
}

/// The transcripts of `part` (`dev` or `heldout`), by file name; none
/// when the part's directory does not exist (git keeps no empty one: the
/// held-out part before its transcripts land).
pub fn load(part: &str) -> Vec<Transcript> {
    let dir = root().join(part);
    if !dir.exists() {
        return Vec::new();
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("a readable transcript");
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not a transcript: {e}", path.display()))
        })
        .collect()
}

/// The step each round leaves the agent on, as planc's `observe` reads
/// the transcript: the first reply that calls a tool (or declares steps)
/// creates the plan.
pub fn planc_steps(transcript: &Transcript) -> Vec<usize> {
    let caller = Caller::default();
    let mut runner: Option<Runner> = None;
    let mut out = Vec::new();
    for round in &transcript.rounds {
        let reply = round.reply();
        if runner.is_none() {
            runner = plan_for_reply("corpus".to_owned(), &reply, Some(&transcript.goal))
                .map(|doc| Runner::new(doc).expect("an empty plan"));
        }
        let step = match runner.as_mut() {
            Some(runner) => {
                // A refused reply (none is expected) leaves the step as it was.
                let _ = observe_reply(runner, &reply, &caller);
                current_step(runner.document())
            }
            None => 0,
        };
        out.push(step);
    }
    out
}

/// The step a plan made from replies is on: the task in progress, one
/// more than the steps when all are done, 0 with no step.
fn current_step(doc: &PlanDocument) -> usize {
    if let Some(i) = doc
        .tasks
        .iter()
        .position(|t| t.status == TaskStatus::InProgress)
    {
        return i + 1;
    }
    match doc.tasks.iter().position(|t| !t.status.is_done()) {
        Some(i) => i + 1,
        None if doc.tasks.is_empty() => 0,
        None => doc.tasks.len() + 1,
    }
}

/// The steps system's markers (seed 003).
const NAIVE_MARKERS: [&str; 4] = ["[Done]", "[完成]", "[Step Done]", "[步骤完成]"];
/// The steps system's transition words, matched anywhere in the text,
/// ignoring case, as it does.
pub const NAIVE_WORDS: [&str; 12] = [
    "现在",
    "接下来",
    "然后",
    "继续",
    "开始",
    "现在让我",
    "next",
    "now",
    "then",
    "continue",
    "let me",
    "proceed",
];

/// The step each round leaves the agent on under the steps system's rule:
/// the plan is created by the first reply that calls a tool; `[Step]`
/// lines append steps (a restated plan appends them again); a step is done
/// by a marker at once, by a transition word anywhere in the reply once
/// the step has had one round, or after five rounds.
pub fn naive_steps(transcript: &Transcript) -> Vec<usize> {
    let mut exists = false;
    let (mut steps, mut current, mut rounds) = (0usize, 0usize, 0u32);
    let mut out = Vec::new();
    for round in &transcript.rounds {
        exists |= !round.tool_calls.is_empty();
        if !exists {
            out.push(0);
            continue;
        }
        steps += round
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with("[Step]"))
            .count();
        if current < steps {
            let lower = round.text.to_lowercase();
            let done = NAIVE_MARKERS.iter().any(|m| round.text.contains(m))
                || (rounds >= 1 && NAIVE_WORDS.iter().any(|w| lower.contains(w)))
                || rounds >= 5;
            if done {
                current += 1;
                rounds = 0;
            } else {
                rounds += 1;
            }
        }
        out.push(if steps == 0 { 0 } else { current + 1 });
    }
    out
}

/// How a rule did on some rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    /// Rounds scored.
    pub rounds: usize,
    /// Rounds after which the rule had the agent on the labelled step.
    pub correct: usize,
    /// Step advances in the labels (not counting the plan's first step).
    pub gold: usize,
    /// Step advances the rule made.
    pub predicted: usize,
    /// Advances the rule made in a round where the labels advance too.
    pub hits: usize,
}

impl Score {
    /// The score of `predicted` steps against the `gold` ones.
    pub fn of(gold: &[usize], predicted: &[usize]) -> Score {
        let mut score = Score::default();
        for r in 0..gold.len() {
            score.rounds += 1;
            score.correct += usize::from(gold[r] == predicted[r]);
            let advance = |steps: &[usize]| {
                let before = if r == 0 { 0 } else { steps[r - 1] };
                if before == 0 {
                    0
                } else {
                    steps[r].saturating_sub(before)
                }
            };
            let (g, p) = (advance(gold), advance(predicted));
            score.gold += g;
            score.predicted += p;
            score.hits += g.min(p);
        }
        score
    }

    /// Adds `other`.
    pub fn add(&mut self, other: Score) {
        self.rounds += other.rounds;
        self.correct += other.correct;
        self.gold += other.gold;
        self.predicted += other.predicted;
        self.hits += other.hits;
    }

    /// Rounds on the labelled step, of all rounds.
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.rounds)
    }

    /// Advances that were right, of those made.
    pub fn precision(&self) -> f64 {
        ratio(self.hits, self.predicted)
    }

    /// Advances made, of those labelled.
    pub fn recall(&self) -> f64 {
        ratio(self.hits, self.gold)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// The score of `rule` on `transcripts`.
pub fn score_all(transcripts: &[Transcript], rule: fn(&Transcript) -> Vec<usize>) -> Score {
    let mut total = Score::default();
    for t in transcripts {
        let gold: Vec<usize> = t.rounds.iter().map(|r| r.step).collect();
        total.add(Score::of(&gold, &rule(t)));
    }
    total
}
