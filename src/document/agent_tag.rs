//! OpenManus's `[AGENT]` step tag: its planning flow gives a step to the
//! agent whose key is the first `[A-Z_]+` in brackets in the step's text,
//! lowercased (`app/flow/planning.py`, `re.search(r"\[([A-Z_]+)\]", step)`).
//! planc reads it as the task's assignee and writes it as a prefix.

/// The agent a step's `text` is for, and the text without the tag when the
/// tag leads it (`[BROWSER] Open the site` → `browser`, `Open the site`).
pub fn step_agent(text: &str) -> Option<(String, Option<&str>)> {
    let mut from = 0;
    while let Some(open) = text[from..].find('[').map(|i| from + i) {
        let inner = &text[open + 1..];
        let len = inner
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || *b == b'_')
            .count();
        if len > 0 && inner.as_bytes().get(len) == Some(&b']') {
            let agent = inner[..len].to_ascii_lowercase();
            let rest = (open == 0).then(|| inner[len + 1..].trim_start());
            return Some((agent, rest));
        }
        from = open + 1;
    }
    None
}

/// The prefix that gives a step to `assignee` (`browser` → `[BROWSER] `),
/// when its key can be written so: lowercase ASCII letters and `_`.
pub fn agent_prefix(assignee: &str) -> Option<String> {
    let fits = !assignee.is_empty()
        && assignee
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_');
    fits.then(|| format!("[{}] ", assignee.to_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tag_names_the_agent_and_a_leading_one_is_taken_off() {
        assert_eq!(
            step_agent("[BROWSER] Open the site"),
            Some(("browser".to_owned(), Some("Open the site")))
        );
        assert_eq!(
            step_agent("Ask [DATA_ANALYSIS] for a chart [X]"),
            Some(("data_analysis".to_owned(), None))
        );
        assert_eq!(step_agent("[a] [] [AB1] plain"), None);
        assert_eq!(agent_prefix("browser").as_deref(), Some("[BROWSER] "));
        assert_eq!(agent_prefix("Browser"), None);
        assert_eq!(agent_prefix("浏览器"), None);
    }
}
