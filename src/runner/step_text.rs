//! The pieces of text that step detection reads (docs/agents.md, "steps
//! (seed 003)"): a reply's clauses and sentences, its text with quotes and
//! code masked, the cue words that keep or finish a step, and the two
//! steps a turn goes between. Below [`super::step_turn`] and
//! [`super::step_done`], which both read them.

use super::step_words::{is_cjk, Words};

/// Signs that a clause redoes or waits on the current step's work.
pub(super) const SAME_STEP_CUES: [&str; 20] = [
    "again",
    "also",
    "as well",
    "retry",
    "re-run",
    "rerun",
    "once more",
    "still",
    "another try",
    "try another",
    "再试",
    "再次",
    "重新",
    "再一次",
    "还在",
    "仍然",
    "重试",
    "再看",
    "再等",
    "还没",
];

/// How a reply turned to the next step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// Where the text that turned begins (a byte offset into the reply's
    /// text): the text before it is the finished step's result.
    pub at: usize,
    /// What turned it: the transition word as written, or the tool call
    /// (`tool browser_type`) or words that belong to the next step.
    pub matched: String,
    /// How many steps after the current one the reply also finishes (an
    /// agent that says "Step 3 done" while the plan is on step 2).
    pub skipped: usize,
}

/// The two steps a turn goes between.
pub(super) struct Steps {
    pub(super) current: Words,
    pub(super) next: Words,
}

impl Steps {
    /// Whether `words` name the current step at least as much as the next.
    pub(super) fn leans_current(&self, words: &Words) -> bool {
        let current = words.matched(&self.current);
        current > 0 && share(current, &self.current) >= share(words.matched(&self.next), &self.next)
    }

    /// Whether `words` belong to the next step rather than the current one
    /// (each step's share of its own words); `None` when they belong to
    /// neither.
    pub(super) fn leans_next(&self, words: &Words, margin: f64) -> Option<bool> {
        let next = words.matched(&self.next);
        let current = words.matched(&self.current);
        if next == 0 && current == 0 {
            return None;
        }
        let (next_share, current_share) = (share(next, &self.next), share(current, &self.current));
        Some(
            next > 0
                && (next_share > current_share + margin
                    || margin == 0.0 && next_share >= current_share),
        )
    }
}

/// Words that say the work of a step is done.
pub(super) const DONE_CUES: [&str; 16] = [
    "完成",
    "完了",
    "好了",
    "完毕",
    "结束",
    "找到了",
    "done",
    "finished",
    "complete",
    "completed",
    "ready",
    "found",
    "all set",
    "confirmed",
    "fixed",
    "collected",
];

pub(super) fn share(matched: usize, step: &Words) -> f64 {
    matched as f64 / step.set.len().max(1) as f64
}

/// The sentence that holds the clause `start..end` (up to the sentence's end).
pub(super) fn sentence_around(text: &str, start: usize, end: usize) -> &str {
    let from = text[..start]
        .char_indices()
        .rfind(|&(_, c)| ".!?。！？\n".contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let to = text[end..]
        .find(|c: char| ".!?。！？\n".contains(c))
        .map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// Whether the last sentence of `masked` (a reply's text, quotes and code
/// blanked) redoes or waits on work ("still", "again", "再试", "还在"…;
/// "also" there speaks of what was found, not of what comes).
pub(super) fn still_at_work(masked: &str) -> bool {
    let last = last_sentence(masked).to_lowercase();
    SAME_STEP_CUES
        .iter()
        .any(|cue| !["also", "as well"].contains(cue) && has_any(&last, &[*cue]))
}

/// The last sentence of `text` that holds more than blanks.
fn last_sentence(text: &str) -> &str {
    let trimmed = text.trim_end();
    let body = trimmed.trim_end_matches(|c: char| ".!?。！？".contains(c));
    let from = body
        .char_indices()
        .rfind(|&(_, c)| ".!?。！？\n".contains(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &trimmed[from..]
}

/// Whether `text` holds one of `words` (whole words; Chinese ones anywhere).
pub(super) fn has_any(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| {
        if w.chars().any(is_cjk) {
            text.contains(w)
        } else {
            super::step_markers::find_word(text, w).is_some()
        }
    })
}

/// The clauses of `text`: split at the ends of sentences, at commas,
/// colons and semicolons, and at line ends (byte ranges).
pub(super) fn clauses(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = match c {
            '.' | '!' | '?' | ',' | ';' | ':' => next.is_none_or(char::is_whitespace),
            '。' | '！' | '？' | '，' | '；' | '：' | '\n' => true,
            _ => false,
        };
        if ends {
            out.push((start, i + c.len_utf8()));
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// `text` with code and quoted text blanked out (the same byte length):
/// a button labelled "Next" or `next(rows)` in code turns nothing.
pub fn mask(text: &str) -> String {
    const PAIRS: [(&str, &str); 6] = [
        ("```", "```"),
        ("`", "`"),
        ("\"", "\""),
        ("“", "”"),
        ("「", "」"),
        ("『", "』"),
    ];
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    // One pass: each opener is looked for where the text stands, and its
    // closer once, after it.
    while let Some(c) = text[at..].chars().next() {
        let rest = &text[at..];
        let Some((open, close)) = PAIRS.iter().find(|(open, _)| rest.starts_with(open)) else {
            out.push(c);
            at += c.len_utf8();
            continue;
        };
        let inner = &rest[open.len()..];
        let len = inner.find(close).map_or(inner.len(), |i| i + close.len());
        out.extend(std::iter::repeat_n(' ', open.len() + len));
        at += open.len() + len;
    }
    out
}
