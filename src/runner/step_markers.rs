//! The words and markers of seed 003's text protocol, and how a reply is
//! searched for them: `[Done]`, `[Failed]`, `[Step]`, the resume and
//! transition words, found as whole words (read by `observe`, the plan a
//! reply makes and the step detection alike).

use super::step_words::is_cjk;

/// Markers that complete the current task; the text before one is its result.
pub const DONE_MARKERS: [&str; 4] = ["[Done]", "[完成]", "[Step Done]", "[步骤完成]"];
/// Markers that fail the current task; the text after one is the reason.
pub const FAILED_MARKERS: [&str; 2] = ["[Failed]", "[失败]"];
/// The marker that declares a new task: `[Step] description` (one per line).
pub const STEP_MARKER: &str = "[Step]";
/// Words that resume a paused plan.
pub const RESUME_WORDS: [&str; 3] = ["继续", "continue", "resume"];
/// The transition words of the steps system (its list). planc reads them
/// as a signal, not a verdict: see [`super::step_turn`], which also knows
/// a few more.
pub const TRANSITION_WORDS: [&str; 11] = [
    "现在",
    "接下来",
    "然后",
    "继续",
    "开始",
    "next",
    "now",
    "then",
    "continue",
    "let me",
    "proceed",
];

/// The earliest of `markers` in `text`: (byte offset, length).
pub(super) fn first_marker(text: &str, markers: &[&str]) -> Option<(usize, usize)> {
    markers
        .iter()
        .filter_map(|m| text.find(m).map(|at| (at, m.len())))
        .min()
}

/// The earliest of `words` in `text` as a word (see [`find_word`]).
pub fn first_word(text: &str, words: &[&str]) -> Option<(usize, usize)> {
    // ASCII lowercasing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    words
        .iter()
        .filter_map(|w| find_word(&lower, w).map(|at| (at, w.len())))
        .min()
}

/// Where `word` (lowercase) first stands in `text` as a whole word: not
/// inside a longer word ("discontinued" holds no "continue", "nowhere" no
/// "now"). A word written in Chinese or Japanese script matches anywhere:
/// those scripts put no spaces between words. Next to such characters, a
/// Latin word has a boundary ("然后next步骤" holds "next").
pub fn find_word(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    if word.chars().any(is_cjk) {
        return text.find(word);
    }
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(joins_word) && !after.is_some_and(joins_word)
    })
}

/// Whether `c` would continue a Latin word it stands next to.
fn joins_word(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_whole_words_only() {
        assert_eq!(find_word("the product was discontinued", "continue"), None);
        assert_eq!(find_word("nowhere to go", "now"), None);
        assert_eq!(find_word("snow, then rain", "now"), None);
        assert_eq!(find_word("ok. next, search", "next"), Some(4));
        assert_eq!(find_word("next_step", "next"), None);
        assert_eq!(find_word("step2next", "next"), None);
        assert_eq!(find_word("然后next步骤", "next"), Some(6));
        assert_eq!(find_word("好的，现在开始", "现在"), Some(9));
        assert_eq!(find_word("let me see", "let me"), Some(0));
        assert_eq!(find_word("outlet meter", "let me"), None);
        assert_eq!(
            first_word("Done with it. Now let me search", &TRANSITION_WORDS),
            Some((14, 3))
        );
        assert_eq!(first_word("Next", &TRANSITION_WORDS), Some((0, 4)));
        assert_eq!(first_word("the discontinued model", &RESUME_WORDS), None);
    }
}
