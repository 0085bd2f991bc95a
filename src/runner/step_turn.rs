//! Whether a reply turns from the agent's current step to the next one,
//! without an explicit marker (docs/agents.md, "steps (seed 003)").
//!
//! A transition word ("now", "next", "接下来"…) is a signal, not a verdict:
//! agents write "The page is now loaded" and "Let me look at the page
//! again" in the middle of a step. A reply turns to the next step, first
//! match wins, when
//!
//! 1. it names the agent's own step numbers: the current step (or a later
//!    one) done, or a later one begun ([`super::step_done`]);
//! 2. a clause *opens* with a transition word (not inside a sentence, not
//!    inside quotes or code), its sentence does not redo or wait on work
//!    ("again", "still", "再试"), and what follows it holds a larger share
//!    of the next step's words than of the current step's (when it holds
//!    words of neither, the reply's tool calls decide);
//! 3. a clause says the current step is done ([`super::step_done`]);
//! 4. a clause opens with the next step's own verb ("Collecting…" for
//!    "Collect…");
//! 5. its last sentence does not redo or wait on work and its tool calls
//!    lean to the next step with enough of its words, or (a silent turn)
//!    do the next step's kind of work and not the current one's
//!    ([`super::step_actions`]);
//! 6. it calls no tool and its last clause says the current step is done.
//!
//! The step's result is the text before the clause that turned. The words
//! are [`super::step_words::Words`]; the rule is measured on labelled
//! transcripts by `benches/steps.rs`.

use serde_json::Value;

use super::reply::Reply;
use super::step_actions::calls_turn_to;
use super::step_done::{done_statement, numbered_turn};
pub use super::step_text::Turn;
use super::step_text::{
    clauses, has_any, mask, sentence_around, share, still_at_work, Steps, DONE_CUES, SAME_STEP_CUES,
};
use super::step_words::{is_cjk, stem, Words};

/// Words that may open a clause that turns to the next step (lowercase).
const TURN_WORDS: [&str; 21] = [
    "现在",
    "接下来",
    "然后",
    "下一步",
    "开始",
    "继续",
    "最后",
    "next",
    "now",
    "then",
    "continue",
    "continuing",
    "proceed",
    "proceeding",
    "moving on",
    "after that",
    "finally",
    "on to",
    "time to",
    "i'll now",
    "i will now",
];

/// Words before a transition word that leave it at the clause's start.
const OPENERS: [&str; 22] = [
    "ok", "okay", "alright", "good", "great", "so", "and", "done", "i'll", "i will", "we'll",
    "i am", "i'm", "let me", "let's", "好的", "好", "那么", "我", "我们", "那", "嗯",
];

/// Whether `reply` turns from the step described by `current` (the
/// `number`th of the plan, from 1) to the one described by `next` (see
/// the module's documentation).
pub fn find_turn(reply: &Reply, current: &str, next: &str, number: usize) -> Option<Turn> {
    let steps = Steps {
        current: Words::of(current),
        next: Words::of(next),
    };
    let masked = mask(&reply.text);
    if let Some(turn) = numbered_turn(&reply.text, &masked, number) {
        return Some(turn);
    }
    let tools = tool_words(reply);
    if let Some(turn) = opening_turn(reply, &masked, &tools, &steps) {
        return Some(turn);
    }
    if let Some(turn) = done_statement(&reply.text, &masked, &tools, &steps) {
        return Some(turn);
    }
    // The last sentence says what the reply's tool calls do: one that
    // redoes or waits on work keeps the step.
    if still_at_work(&masked) {
        return None;
    }
    next_verb(reply, &masked, &steps)
        .or_else(|| tool_evidence(reply, &masked, &tools, &steps))
        .or_else(|| kind_of_work(reply, current, next))
        .or_else(|| closing_done(reply, &masked, &steps))
}

/// A turn told by the agent's own step numbers alone (rule 1), which needs
/// no round on the step: "Step 3 done." right after step 3 began.
pub fn find_numbered_turn(reply: &Reply, number: usize) -> Option<Turn> {
    numbered_turn(&reply.text, &mask(&reply.text), number)
}

/// A silent turn: the reply's tool calls do the next step's kind of work
/// and not the current step's ([`super::step_actions`]); the whole text
/// is the finished step's result.
fn kind_of_work(reply: &Reply, current: &str, next: &str) -> Option<Turn> {
    let call = reply.tool_calls.first()?;
    calls_turn_to(&reply.tool_calls, current, next).then(|| Turn {
        at: reply.text.len(),
        matched: format!("tool {}", call.name),
        skipped: 0,
    })
}

/// The first clause that opens with a transition word and whose words
/// (from there on; else the tool calls') lean to `steps.next`.
fn opening_turn(reply: &Reply, masked: &str, tools: &Words, steps: &Steps) -> Option<Turn> {
    let openings = clauses(masked).into_iter().filter_map(|(start, end)| {
        opening_word(&masked[start..end]).map(|word| (start, end, word))
    });
    // A reply is read up to its first clauses that open with a transition
    // word, and a little past each: a long reply costs what it reads.
    for (start, end, (word_at, word_len)) in openings.take(MAX_OPENINGS) {
        if has_any(
            &sentence_around(masked, start, end).to_lowercase(),
            &SAME_STEP_CUES,
        ) {
            continue;
        }
        // What follows the word says where the agent goes; when its words
        // belong to neither step, the tool calls do.
        let ahead = Words::of(prefix(&reply.text[start..], AHEAD_BYTES));
        let margin = if has_any(&masked[..start].to_lowercase(), &DONE_CUES) {
            0.0
        } else {
            MARGIN
        };
        let leans = steps
            .leans_next(&ahead, margin)
            .or_else(|| steps.leans_next(tools, margin));
        if leans == Some(true) {
            return Some(Turn {
                at: start,
                matched: reply.text[start + word_at..start + word_at + word_len].to_owned(),
                skipped: 0,
            });
        }
    }
    None
}

/// A clause that opens with the next step's own verb ("Collecting the
/// first three" for "Collect three postings"), when the current step
/// starts with another.
fn next_verb(reply: &Reply, masked: &str, steps: &Steps) -> Option<Turn> {
    let verb = steps.next.first.as_deref()?;
    if steps.current.first.as_deref() == Some(verb) || !verb.is_ascii() {
        return None;
    }
    clauses(masked).into_iter().find_map(|(start, end)| {
        let clause = &masked[start..end];
        let at = skip_blank(clause, 0);
        let word: String = clause[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        (stem(&word.to_lowercase()) == verb).then(|| Turn {
            at: start,
            matched: reply.text[start + at..start + at + word.len()].to_owned(),
            skipped: 0,
        })
    })
}

/// A reply without tool calls whose last clause says the current step's
/// work is done ("读取完成。"): the whole reply is the step's result.
fn closing_done(reply: &Reply, masked: &str, steps: &Steps) -> Option<Turn> {
    if !reply.tool_calls.is_empty() {
        return None;
    }
    let (start, end) = *clauses(masked)
        .iter()
        .rev()
        .find(|&&(s, e)| !masked[s..e].trim().is_empty())?;
    let clause = masked[start..end].to_lowercase();
    let cue = DONE_CUES.iter().find(|w| has_any(&clause, &[**w]))?;
    let words = Words::of(&clause);
    (words.matched(&steps.current) > 0 && words.matched(&steps.next) == 0).then(|| Turn {
        at: reply.text.len(),
        matched: (*cue).to_owned(),
        skipped: 0,
    })
}

/// The clauses opening with a transition word that are weighed, at most.
const MAX_OPENINGS: usize = 32;
/// How much of the text after such a clause's start is read.
const AHEAD_BYTES: usize = 4096;

/// The first `bytes` of `text` (cut at a character boundary).
fn prefix(text: &str, bytes: usize) -> &str {
    let cut = (0..=text.len().min(bytes))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[..cut]
}

/// How much more of the next step's words than of the current one's a
/// text must hold to lean to the next step; after a sentence that says
/// the work is done, as much is enough.
const MARGIN: f64 = 0.1;

/// What tool calls must hold of the next step's words to turn without a
/// transition word: this many words, or this share of them.
const TOOL_WORDS: usize = 2;
const TOOL_SHARE: f64 = 0.5;

/// A turn shown by tool calls that belong to the next step.
fn tool_evidence(reply: &Reply, masked: &str, tools: &Words, steps: &Steps) -> Option<Turn> {
    let matched = tools.matched(&steps.next);
    if steps.leans_next(tools, MARGIN) != Some(true)
        || (matched < TOOL_WORDS && share(matched, &steps.next) < TOOL_SHARE)
    {
        return None;
    }
    // The turn starts at the first clause that speaks of the next step;
    // with none, the whole text is the finished step's result.
    let at = clauses(masked)
        .into_iter()
        .find(|&(s, e)| Words::of(&reply.text[s..e]).matched(&steps.next) > 0)
        .map_or(reply.text.len(), |(s, _)| s);
    let call = reply.tool_calls.iter().find(|call| {
        let mut words = Words::default();
        words.add_value(&Value::String(call.name.clone()));
        words.add_value(&call.arguments);
        words.matched(&steps.next) > 0
    })?;
    Some(Turn {
        at,
        matched: format!("tool {}", call.name),
        skipped: 0,
    })
}

/// The words of the tool calls: their names and argument values.
fn tool_words(reply: &Reply) -> Words {
    let mut words = Words::default();
    for call in &reply.tool_calls {
        words.add_value(&Value::String(call.name.replace(['_', '-', '.'], " ")));
        words.add_value(&call.arguments);
    }
    words
}

/// Where a transition word opens `clause` (offset, length), after blanks,
/// list marks and openers such as "OK," or "好的".
fn opening_word(clause: &str) -> Option<(usize, usize)> {
    let lower = clause.to_ascii_lowercase();
    let mut at = skip_blank(&lower, 0);
    for _ in 0..2 {
        if let Some(len) = TURN_WORDS
            .iter()
            .filter(|w| starts_word(&lower[at..], w))
            .map(|w| w.len())
            .max()
        {
            return Some((at, len));
        }
        let opener = OPENERS
            .iter()
            .filter(|w| starts_word(&lower[at..], w))
            .map(|w| w.len())
            .max()?;
        at = skip_blank(&lower, at + opener);
    }
    None
}

/// Whether `text` starts with `word` as a whole word.
fn starts_word(text: &str, word: &str) -> bool {
    text.starts_with(word)
        && (word.chars().any(is_cjk)
            || !text[word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() && !is_cjk(c)))
}

/// The offset after blanks, list marks and punctuation from `from`.
fn skip_blank(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let skipped = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_whitespace() || "-*•>#,，、:：".contains(c) || c.is_ascii_digit()))
        .map_or(rest.len(), |(i, _)| i);
    from + skipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::reply::ToolCall;
    use serde_json::json;

    fn reply(text: &str, calls: &[(&str, Value)]) -> Reply {
        Reply {
            text: text.to_owned(),
            tool_calls: calls
                .iter()
                .map(|(name, arguments)| ToolCall {
                    name: (*name).to_owned(),
                    arguments: arguments.clone(),
                })
                .collect(),
        }
    }

    fn turn(
        text: &str,
        calls: &[(&str, Value)],
        current: &str,
        next: &str,
    ) -> Option<(String, String)> {
        let reply = reply(text, calls);
        find_turn(&reply, current, next, 1)
            .map(|t| (reply.text[..t.at].trim().to_owned(), t.matched))
    }

    const OPEN: &str = "Open amazon.com";
    const SEARCH: &str = "Search for Sony WH-1000XM5";
    const PRICE: &str = "Read the price of the first result";

    #[test]
    fn a_transition_word_inside_the_step_turns_nothing() {
        let shot = [("browser_screenshot", json!({}))];
        assert_eq!(
            turn("Let me look at the page again", &shot, OPEN, SEARCH),
            None
        );
        assert_eq!(
            turn("Let me look at the search page again", &shot, OPEN, SEARCH),
            None
        );
        assert_eq!(
            turn("The page is now loaded fully.", &shot, SEARCH, PRICE),
            None
        );
        let text = [("browser_get_text", json!({"selector": "#nav-search"}))];
        assert_eq!(
            turn("The page is now loaded fully.", &text, OPEN, SEARCH),
            None
        );
        // Quoted text and code are not the agent speaking.
        assert_eq!(
            turn(
                "The button says \"Next: read the price\", so I click it.",
                &[],
                SEARCH,
                PRICE
            ),
            None
        );
        assert_eq!(
            turn(
                "```py\nnext(rows)  # read the price\n```",
                &[],
                SEARCH,
                PRICE
            ),
            None
        );
        // A word that opens a clause about the current step stays on it.
        assert_eq!(
            turn("Now typing the Sony WH-1000XM5 query.", &[], SEARCH, PRICE),
            None
        );
    }

    #[test]
    fn a_clause_that_turns_to_the_next_steps_work_turns() {
        assert_eq!(
            turn(
                "Search done. Now reading the first result's price.",
                &[],
                SEARCH,
                PRICE
            ),
            Some(("Search done.".to_owned(), "Now".to_owned()))
        );
        assert_eq!(
            turn(
                "百度首页已打开。接下来输入搜索词。",
                &[],
                "打开百度搜索页面",
                "输入 AI Agent 并搜索"
            ),
            Some(("百度首页已打开。".to_owned(), "接下来".to_owned()))
        );
        assert_eq!(
            turn(
                "Results are in, now let me read the price.",
                &[],
                SEARCH,
                PRICE
            ),
            Some(("Results are in,".to_owned(), "now".to_owned()))
        );
        // The agent's own verb for the next step.
        assert_eq!(
            turn("Reading the price of the first result.", &[], SEARCH, PRICE),
            Some((String::new(), "Reading".to_owned()))
        );
    }

    #[test]
    fn a_tool_call_of_the_next_step_turns() {
        let typed = [(
            "browser_type",
            json!({"selector": "#key", "text": "机械键盘"}),
        )];
        assert_eq!(
            turn("首页已就绪。", &typed, "打开京东首页", "搜索“机械键盘”"),
            Some(("首页已就绪。".to_owned(), "tool browser_type".to_owned()))
        );
        // A single shared word of a selector is not enough.
        let clicked = [("browser_click", json!({"selector": ".search-results"}))];
        assert_eq!(turn("Clicked.", &clicked, OPEN, SEARCH), None);
    }

    #[test]
    fn quotes_and_code_are_masked() {
        assert_eq!(mask("a \"Next\" b `next()` c"), "a        b          c");
        assert_eq!(
            mask("a ```x `y` z``` “q” b"),
            format!("a {} b", " ".repeat(21))
        );
        assert_eq!(
            mask("open \"to the end"),
            format!("open {}", " ".repeat(11))
        );
    }

    #[test]
    fn a_long_reply_is_read_in_bounded_work() {
        // A megabyte of clauses opening with "Now" and of quotes: linear work.
        let text = "Now, \"x\" the page. ".repeat(50_000);
        let shot = [("browser_screenshot", json!({}))];
        assert_eq!(turn(&text, &shot, OPEN, SEARCH), None);
    }

    #[test]
    fn a_closing_sentence_that_says_the_step_is_done_turns() {
        assert_eq!(
            turn(
                "共 8 个传感器。读取完成。",
                &[],
                "读取传感器数据",
                "处理缺失值"
            ),
            Some(("共 8 个传感器。读取完成。".to_owned(), "完成".to_owned()))
        );
        // Said while the tool calls still do the step's work, it stays.
        let still = [("read_file", json!({"path": "传感器数据_2.csv"}))];
        assert_eq!(
            turn("读取完成。", &still, "读取传感器数据", "处理缺失值"),
            None
        );
        // Followed by other work, that work is the next step's.
        let other = [("exec", json!({"command": "pytest"}))];
        assert_eq!(
            turn("读取完成。", &other, "读取传感器数据", "处理缺失值"),
            Some(("读取完成。".to_owned(), "完成".to_owned()))
        );
    }
}
