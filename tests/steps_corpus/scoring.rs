//! A scoring rule for step detection, measured beside planc's (issue #31,
//! point 6): not planc's rule, a prototype to learn whether a few weighted
//! features generalise better than the rule's clauses. Each round scores
//! the move to the next step: how much more of the next step's words than
//! of the current step's the round's text and tool-call arguments hold
//! (Latin stems, pairs of Chinese characters), a done cue, a clause that
//! opens with a transition word; the agent's own markers and step numbers
//! decide at once. The weights are chosen on three dev parts and checked
//! on the fourth (`STEPS_SCORING=m` in `benches/steps.rs`).

use std::collections::HashSet;

use serde_json::Value;

use crate::eval::Transcript;

/// The weights of a scoring rule; it moves on when the score is above
/// `threshold` and the step has had a round.
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    /// The next step's share minus the current one's, in the text.
    pub text: f64,
    /// … in the tool calls' names and arguments.
    pub calls: f64,
    /// A done cue in the text.
    pub done: f64,
    /// A clause opening with a transition word.
    pub transition: f64,
    /// The score above which the round moves on.
    pub threshold: f64,
}

const MARKERS: [&str; 4] = ["[Done]", "[完成]", "[Step Done]", "[步骤完成]"];
const DONE: [&str; 14] = [
    "done",
    "complete",
    "finished",
    "ready",
    "confirmed",
    "reproduced",
    "完成",
    "好了",
    "完毕",
    "已确认",
    "搞定",
    "已经",
    "结束",
    "verified",
];
const TRANSITION: [&str; 16] = [
    "now",
    "next",
    "then",
    "moving on",
    "on to",
    "proceed",
    "finally",
    "i'll now",
    "let me now",
    "现在",
    "接下来",
    "然后",
    "下一步",
    "最后",
    "开始",
    "继续",
];
const COMMON: [&str; 40] = [
    "the", "a", "an", "of", "for", "to", "in", "on", "and", "or", "with", "by", "it", "its", "at",
    "from", "as", "is", "are", "be", "this", "that", "all", "my", "our", "i", "we", "you", "let",
    "now", "then", "next", "will", "into", "up", "out", "step", "done", "https", "com",
];

fn stem(word: &str) -> String {
    let mut w = word;
    for ending in ["ing", "ed", "es", "s"] {
        if let Some(s) = w.strip_suffix(ending) {
            if s.chars().count() >= 3 {
                w = s;
                break;
            }
        }
    }
    w.chars().take(5).collect()
}

fn is_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
}

/// Stems of Latin words and pairs of neighbouring Chinese characters.
fn words(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let lower = text.to_lowercase();
    for w in lower.split(|c: char| !c.is_ascii_alphanumeric()) {
        if w.len() >= 2 && !COMMON.contains(&w) && !w.chars().all(|c| c.is_ascii_digit()) {
            out.insert(stem(w));
        }
    }
    let han: Vec<char> = text.chars().collect();
    for pair in han.windows(2) {
        if is_han(pair[0]) && is_han(pair[1]) {
            out.insert(pair.iter().collect());
        }
    }
    out
}

fn value_text(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        Value::Array(items) => items.iter().for_each(|v| value_text(v, out)),
        Value::Object(map) => map.values().for_each(|v| value_text(v, out)),
        other => {
            out.push_str(&other.to_string());
            out.push(' ');
        }
    }
}

fn share(step: &HashSet<String>, bag: &HashSet<String>) -> f64 {
    if step.is_empty() {
        return 0.0;
    }
    step.iter().filter(|w| bag.contains(*w)).count() as f64 / step.len() as f64
}

/// A step number the agent gives: "step N" / "第N步" / "步骤N" at a
/// line's start (a heading), or "step N done".
fn step_number(text: &str) -> Option<(usize, bool)> {
    for line in text.lines() {
        let l = line
            .trim_start_matches(['#', '*', ' ', '-', '>'])
            .to_lowercase();
        let digits = |s: &str| -> Option<usize> {
            let d: String = s
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            d.parse().ok()
        };
        let n = if let Some(rest) = l.strip_prefix("step ") {
            digits(rest)
        } else if let Some(rest) = l.strip_prefix("步骤") {
            digits(rest)
        } else if let Some(rest) = l.strip_prefix('第') {
            digits(rest)
        } else {
            None
        };
        if let Some(n) = n {
            let done = ["done", "complete", "完成"].iter().any(|d| l.contains(d));
            return Some((n, done));
        }
    }
    None
}

fn transition_opens(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower
        .split([
            '.', '!', '?', ',', ';', ':', '\n', '。', '，', '！', '？', '；', '：',
        ])
        .map(|c| {
            c.trim_start()
                .trim_start_matches("ok ")
                .trim_start_matches("好的")
        })
        .any(|c| TRANSITION.iter().any(|t| c.starts_with(t)))
}

/// The step after each round under the scoring rule.
pub fn scoring_steps(t: &Transcript, w: Weights) -> Vec<usize> {
    let mut steps: Vec<HashSet<String>> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let (mut current, mut rounds) = (0usize, 0u32);
    let mut out = Vec::new();
    for round in &t.rounds {
        let mut declared = false;
        for line in round.text.lines() {
            if let Some(d) = line.trim().strip_prefix("[Step]") {
                let key = d.trim().to_lowercase();
                if seen.insert(key) {
                    steps.push(words(d));
                    declared = true;
                }
            }
        }
        if current == 0 && !steps.is_empty() {
            current = 1;
            rounds = 0;
        }
        let text: String = round
            .text
            .lines()
            .filter(|l| !l.trim_start().starts_with("[Step]"))
            .collect::<Vec<_>>()
            .join("\n");
        let moved = if current == 0 || current > steps.len() || (declared && rounds == 0) {
            None
        } else {
            decide(&steps, current, rounds, &text, round, w)
        };
        match moved {
            Some(next) => {
                current = next;
                rounds = 0;
            }
            None if current > 0 => rounds += 1,
            None => {}
        }
        out.push(current);
    }
    out
}

fn decide(
    steps: &[HashSet<String>],
    current: usize,
    rounds: u32,
    text: &str,
    round: &crate::eval::Round,
    w: Weights,
) -> Option<usize> {
    if MARKERS.iter().any(|m| text.contains(m)) {
        return Some(current + 1);
    }
    if let Some((n, done)) = step_number(text) {
        let to = if done { n + 1 } else { n };
        if to > current && to <= steps.len() + 1 {
            return Some(to);
        }
    }
    let last = current == steps.len();
    if round.tool_calls.is_empty() && last && !text.trim_end().ends_with(['?', '？']) {
        return Some(current + 1);
    }
    if rounds == 0 || last {
        return None;
    }
    let cur = &steps[current - 1];
    let next = &steps[current];
    let said = words(text);
    let mut args = String::new();
    for call in &round.tool_calls {
        args.push_str(&call.name);
        args.push(' ');
        value_text(&call.arguments, &mut args);
    }
    let called = words(&args);
    let lower = text.to_lowercase();
    let score = w.text * (share(next, &said) - share(cur, &said))
        + w.calls * (share(next, &called) - share(cur, &called))
        + w.done * f64::from(u8::from(DONE.iter().any(|d| lower.contains(d))))
        + w.transition * f64::from(u8::from(transition_opens(text)));
    (score > w.threshold).then_some(current + 1)
}
