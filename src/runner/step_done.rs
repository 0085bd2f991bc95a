//! Statements that a step is done, or that the next one begins, written in
//! plain words rather than markers (docs/agents.md, "steps (seed 003)"):
//! an agent that numbers its steps ("Step 2 done", "第 3 步完成",
//! "**第 4 步：更新接口**"), one that says the current step's work is done
//! ("Shortlist done.", "检验部分做完了。"), and a reply that is the agent's
//! final answer (no tool call; a report, or on the plan's last step).

use super::step_text::{
    clauses, has_any, mask, sentence_around, still_at_work, Steps, Turn, DONE_CUES, SAME_STEP_CUES,
};
use super::step_words::Words;

/// Words that deny a done cue in the same clause ("not done", "还没完成").
const NEGATIONS: [&str; 7] = ["not", "n't", "never", "没", "未", "尚", "yet"];

/// Done cues that tell a finding rather than finished work.
const FINDINGS: [&str; 2] = ["found", "找到了"];

/// Words that name the current step (or all of its work) without its own
/// words: "this part is done", "都查完了".
const STEP_REFERENCES: [&str; 9] = [
    "step",
    "part",
    "everything",
    "all",
    "部分",
    "都",
    "全部",
    "所有",
    "这一步",
];

/// Words that, in a clause naming the next step by its number, say the
/// agent starts it ("moving on to step 3", "Moving to step 2", "进入第二步").
const START_WORDS: [&str; 18] = [
    "moving on",
    "move on",
    "moving to",
    "move to",
    "turning to",
    "proceeding to",
    "on to",
    "onto",
    "now",
    "next",
    "start",
    "proceed",
    "进入",
    "开始",
    "下面",
    "接下来",
    "现在",
    "下一步",
];

/// A turn told by the step's number: step `number` (the current one,
/// 1-based in plan order) or a later one said to be done, or a later step
/// begun (a line that opens with it, as a heading does, or a clause that
/// starts it): the agent's own numbers say where it is.
pub(super) fn numbered_turn(text: &str, masked: &str, number: usize) -> Option<Turn> {
    let lower = masked.to_lowercase();
    if lower.len() != masked.len() {
        return None;
    }
    for (start, end) in clauses(masked) {
        let clause = &lower[start..end];
        for (at, n) in step_numbers(clause) {
            let done = n >= number && has_any(clause, &DONE_CUES) && !has_any(clause, &NEGATIONS);
            if done {
                return Some(Turn {
                    at: end,
                    matched: text[start..end].trim().to_owned(),
                    skipped: n - number,
                });
            }
            let heading = clause[..at]
                .chars()
                .all(|c| c.is_whitespace() || "#*>-_".contains(c));
            if n > number && (heading || has_any(clause, &START_WORDS)) {
                return Some(Turn {
                    at: start,
                    matched: text[start..end].trim().to_owned(),
                    skipped: n - number - 1,
                });
            }
        }
    }
    None
}

/// The step numbers a (lowercase) clause names: `step 2`, `step two`,
/// `步骤 2`, `第 2 步`, `第二步` (where each stands, and the number).
fn step_numbers(clause: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (at, _) in clause.match_indices("step") {
        let whole = !clause[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        if let Some(n) = whole.then(|| number_after(&clause[at + 4..])).flatten() {
            out.push((at, n));
        }
    }
    for (at, _) in clause.match_indices("步骤") {
        if let Some(n) = number_after(&clause[at + "步骤".len()..]) {
            out.push((at, n));
        }
    }
    for (at, _) in clause.match_indices('第') {
        let rest = &clause[at + '第'.len_utf8()..];
        let digits = rest.trim_start();
        let (n, used) = leading_number(digits);
        if n > 0 && digits[used..].trim_start().starts_with('步') {
            out.push((at, n));
        }
    }
    out
}

/// The number that follows a step word: blanks, then digits, an English
/// number word or Chinese numerals; then no further letter or digit.
fn number_after(rest: &str) -> Option<usize> {
    let rest = rest.trim_start();
    let (n, used) = leading_number(rest);
    let after = rest[used..].chars().next();
    (n > 0 && !after.is_some_and(|c| c.is_ascii_alphanumeric())).then_some(n)
}

/// The number `text` opens with (digits, one…ten, 一…十) and its length in
/// bytes; 0 when it opens with none.
fn leading_number(text: &str) -> (usize, usize) {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        return (text[..digits].parse().unwrap_or(0), digits);
    }
    const WORDS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    if let Some(i) = WORDS.iter().position(|w| text.starts_with(w)) {
        return (i + 1, WORDS[i].len());
    }
    const HAN: &str = "一二三四五六七八九十";
    match text
        .chars()
        .next()
        .and_then(|c| HAN.chars().position(|h| h == c))
    {
        Some(i) => (i + 1, text.chars().next().map_or(0, char::len_utf8)),
        None => (0, 0),
    }
}

/// A clause that says the current step's work is done: a done cue, no
/// denial, no redo in its sentence, and the clause names the current step
/// (its words more than the next step's, or "this part", "都"), and the
/// reply's tool calls are not the current step's work. The turn
/// is at the end of that clause: what follows is the next step's work.
pub(super) fn done_statement(
    text: &str,
    masked: &str,
    tools: &Words,
    steps: &Steps,
) -> Option<Turn> {
    let lower = masked.to_lowercase();
    // Tool calls that name only the current step are still its work.
    let still = tools.matched(&steps.current) > 0 && tools.matched(&steps.next) == 0;
    if lower.len() != masked.len() || still {
        return None;
    }
    clauses(masked).into_iter().find_map(|(start, end)| {
        let clause = &lower[start..end];
        // "Found 37 errors" is a finding, not the end of the work.
        let cue = DONE_CUES
            .iter()
            .filter(|w| !FINDINGS.contains(w))
            .find(|w| has_any(clause, &[**w]))
            .map(|w| (*w).to_owned())
            .or_else(|| past_of_verb(clause, steps.current.first.as_deref()?))?;
        let sentence = sentence_around(&lower, start, end);
        if has_any(clause, &NEGATIONS) || has_any(sentence, &SAME_STEP_CUES) {
            return None;
        }
        let words = Words::of(&text[start..end]);
        let names_current = steps.leans_current(&words)
            || words.matched(&steps.next) == 0 && has_any(clause, &STEP_REFERENCES);
        names_current.then_some(Turn {
            at: end,
            matched: cue,
            skipped: 0,
        })
    })
}

/// The word of `clause` that is the current step's verb (`verb`, its
/// stem) in the past ("parsed" for "Parse the log", "trained" for "Train
/// two models"): the clause says the step's work is done.
fn past_of_verb(clause: &str, verb: &str) -> Option<String> {
    let root = verb.trim_end_matches('e');
    if root.len() < 3 || !verb.is_ascii() {
        return None;
    }
    clause
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|word| {
            word.starts_with(root)
                && (word.ends_with("ed") || word.ends_with("en"))
                && word.len() <= root.len() + 4
        })
        .map(str::to_owned)
}

/// Whether a reply without tool calls is a report: a Markdown heading, a
/// table, or a summary, as an agent writes its final answer.
pub(crate) fn is_report(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        let lower = line.to_lowercase();
        line.starts_with('#')
            || line.starts_with('|') && line.contains("---")
            || ["summary", "**summary", "总结", "**总结", "结论", "**结论"]
                .iter()
                .any(|w| lower.starts_with(w))
    })
}

/// Whether a reply without tool calls is not a final answer: it asks the
/// user something (it ends with a question mark), or its last sentence
/// says the work goes on ("still reading", "再试一次").
pub(crate) fn not_final(text: &str) -> bool {
    text.trim_end().ends_with(['?', '？']) || still_at_work(&mask(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_numbers_are_read_in_both_languages() {
        assert_eq!(step_numbers("step 2 done"), [(0, 2)]);
        assert_eq!(step_numbers("moving on to step three"), [(13, 3)]);
        assert_eq!(step_numbers("**第 3 步：更新"), [(2, 3)]);
        assert_eq!(step_numbers("第三步完成"), [(0, 3)]);
        assert_eq!(step_numbers("**步骤 2 完成**"), [(2, 2)]);
        assert!(step_numbers("footsteps 2").is_empty());
        assert!(step_numbers("steps are 2").is_empty());
    }

    #[test]
    fn a_numbered_step_turns_when_done_or_begun() {
        let turn = |text: &str, n| numbered_turn(text, text, n).map(|t| t.at);
        let text = "The flag is added. Step 2 done; now the serialization.";
        assert_eq!(turn(text, 2), text.find(" now"));
        assert_eq!(turn(text, 3), None);
        assert_eq!(turn("第 2 步完成。\n\n**第 3 步：更新模型**", 2), Some(18));
        assert_eq!(turn("**第 3 步：更新模型**", 2), Some(0));
        assert_eq!(turn("Step 2 is not done yet.", 2), None);
        assert_eq!(turn("I will come to step 3 later.", 2), None);
    }

    #[test]
    fn a_report_is_a_heading_a_table_or_a_summary() {
        assert!(is_report("## Findings\n- a"));
        assert!(is_report("| a | b |\n|---|---|\n| 1 | 2 |"));
        assert!(is_report("All pass.\n\nSummary: fixed."));
        assert!(!is_report("Berlin 3,755,251 and Hamburg 1,892,122."));
        assert!(not_final("Which one do you want?"));
        assert!(not_final("Still reading."));
        assert!(!not_final("The page says \"try again\". All done."));
    }

    #[test]
    fn the_steps_verb_in_the_past_says_it_is_done() {
        assert_eq!(
            past_of_verb("all lines parsed.", "parse").as_deref(),
            Some("parsed")
        );
        assert_eq!(
            past_of_verb("both are trained", "train").as_deref(),
            Some("trained")
        );
        assert_eq!(
            past_of_verb("tests rewritten", "rewrite").as_deref(),
            Some("rewritten")
        );
        assert_eq!(past_of_verb("parsing the lines", "parse"), None);
        assert_eq!(past_of_verb("fixed", "fix"), Some("fixed".to_owned()));
    }
}
